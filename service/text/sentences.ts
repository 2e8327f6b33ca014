// The one sentence segmentation of kbqa. Ingestion embeds a chunk sentence by sentence with it (rag/index.ts,
// the sentence vectors), the extractive answerer quotes what it returns, and PDF extraction asks it where a
// sentence that runs over a page break ends (extraction/pdfLayout.ts). One function for all three, so that what
// is embedded, what is quoted and what is cited are the same units: a whole sentence, a whole list item, a whole
// table row.
//
// Units: a line is never part of two units, and a line break always ends one. Sources are written so that a line
// is a block: PDF extraction reflows printed lines into paragraphs and keeps list items and table rows one per line;
// markdown and text keep theirs. Inside a line, a sentence ends at ., !, ? or … (a run of them, then closing quotes
// or brackets) followed by a blank and a character that is not a lowercase letter, except after an abbreviation
// ("e.g.", "Dr.", "approx.", "max."), an initial ("J. R. R. Tolkien"), a number's abbreviation before a digit
// ("No. 12", "Fig. 3"), or right before the ')' of a parenthesis opened in the sentence ("40 cars (max.) Overflow
// …"). Decimals ("3.5") and times ("07:15") hold no blank after the point, so they never end one.
//
// The text is a stranger's: every scan is a plain character loop, linear in the text; the few regular expressions
// are anchored at a line's start and cannot backtrack.

import { collapseBlanks, isBlankChar, isDigit, isLetter, isLowercaseLetter } from './characters.ts';

export interface SentenceUnit {
  text: string;
  /** A heading (markdown #, a table's header row, a short line standing alone): context, not an answer. */
  heading: boolean;
}

/** Words before a period that do not end a sentence. */
const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'vs',
  'e.g',
  'i.e',
  'u.s',
  'fig',
  'figs',
  'approx',
  'inc',
  'ltd',
  'co',
  'cf',
  'ca',
  'al',
  'max',
  'min',
  'incl',
  'excl',
  'dept',
  'est',
  'resp',
  'viz',
  'mt',
]);
/** Words before a period that do not end a sentence when a digit follows ("No. 12", "p. 4", "Oct. 3"). */
const NUMBER_ABBREVIATIONS = new Set([
  'no',
  'nos',
  'nr',
  'pp',
  'vol',
  'ch',
  'sec',
  'art',
  'tab',
  'eq',
  'ex',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
]);

/** Runs longer than this many words are cut into windows (tables without pipes, code, unpunctuated text). */
const MAX_UNIT_WORDS = 80;
const WINDOW_WORDS = 50;
/** A line standing alone with no end punctuation and at most this many words, with text after it, is a heading. */
const HEADING_MAX_WORDS = 10;

const isTerminator = (char: string) => char === '.' || char === '!' || char === '?' || char === '…';
const isCloser = (char: string) =>
  char === '"' || char === "'" || char === '”' || char === '’' || char === ')' || char === ']';
const isOpener = (char: string) =>
  char === '"' || char === "'" || char === '“' || char === '‘' || char === '(' || char === '[';

/** The word before position `end` (back to `floor`), without opening quotes or brackets, lower-cased. */
function wordBefore(line: string, end: number, floor: number): string {
  let start = end;
  while (start > floor && !isBlankChar(line[start - 1])) start -= 1;
  while (start < end && isOpener(line[start])) start += 1;
  return line.slice(start, end).toLowerCase();
}

/** Whether a single '.' at `dot`, with the next sentence's first character at `next`, is not a sentence's end. */
function periodContinues(line: string, dot: number, next: number, floor: number): boolean {
  const word = wordBefore(line, dot, floor);
  if (ABBREVIATIONS.has(word)) return true;
  // Initials: one letter ("J. R. R. Tolkien", "A. Smith").
  if (word.length === 1 && isLetter(word)) return true;
  return NUMBER_ABBREVIATIONS.has(word) && isDigit(line[next]);
}

/**
 * Where the sentences of one line end: the index just past each sentence but the last (its terminators and closers),
 * paired with where the next one starts. One pass; each character is looked at a constant number of times.
 */
export function sentenceBreaks(line: string): Array<{ end: number; next: number }> {
  const breaks: Array<{ end: number; next: number }> = [];
  let start = 0;
  /** Where a parenthesis still open in this sentence was opened (-1: none). */
  let openAt = -1;
  let depth = 0;
  let index = 0;
  const track = (char: string, at: number) => {
    if (char === '(') {
      if (depth === 0) openAt = at;
      depth += 1;
    } else if (char === ')' && depth > 0) {
      depth -= 1;
      if (depth === 0) openAt = -1;
    }
  };
  while (index < line.length) {
    const char = line[index];
    if (!isTerminator(char)) {
      track(char, index);
      index += 1;
      continue;
    }
    let runEnd = index;
    while (runEnd < line.length && isTerminator(line[runEnd])) runEnd += 1;
    // Closing a parenthesis opened after the sentence's start: "(max.)" is part of the sentence around it. (Only
    // when the ')' follows at once: a '(' left open would otherwise hold the rest of the line in one unit.)
    const openedInside = openAt > start;
    let closesParenthesis = false;
    let end = runEnd;
    while (end < line.length && isCloser(line[end])) {
      closesParenthesis ||= openedInside && line[end] === ')' && depth === 1;
      track(line[end], end);
      end += 1;
    }
    let next = end;
    while (next < line.length && isBlankChar(line[next])) next += 1;
    const ends =
      next > end &&
      next < line.length &&
      !isLowercaseLetter(line[next]) &&
      !closesParenthesis &&
      !(runEnd === index + 1 && char === '.' && periodContinues(line, index, next, start));
    if (ends) {
      breaks.push({ end, next });
      start = next;
      openAt = -1;
      depth = 0;
    }
    index = end;
  }
  return breaks;
}

/** Whether text ends a sentence: its last character, closing quotes and brackets aside, is ., !, ?, … or ':'. */
export function endsWithTerminator(text: string): boolean {
  let end = text.length;
  while (end > 0 && (isBlankChar(text[end - 1]) || isCloser(text[end - 1]))) end -= 1;
  return end > 0 && (isTerminator(text[end - 1]) || text[end - 1] === ':');
}

function wordCount(text: string): number {
  let count = 0;
  let inWord = false;
  for (const char of text) {
    const blank = isBlankChar(char);
    if (!blank && !inWord) count += 1;
    inWord = !blank;
  }
  return count;
}

/** Breaks a run-on unit (a table without pipes, code, unpunctuated text) into word windows. */
function windowed(unit: string): string[] {
  const tokens = unit.split(' ');
  if (tokens.length <= MAX_UNIT_WORDS) return [unit];
  const out: string[] = [];
  for (let index = 0; index < tokens.length; index += WINDOW_WORDS) {
    const head = index > 0 ? '… ' : '';
    const tail = index + WINDOW_WORDS < tokens.length ? ' …' : '';
    out.push(head + tokens.slice(index, index + WINDOW_WORDS).join(' ') + tail);
  }
  return out;
}

/** A markdown table row's cells ("| a | b |" → ["a", "b"]), or null for a line that is not one. */
export function tableCells(line: string): string[] | null {
  if (line[0] !== '|') return null;
  const cells = line.split('|').map(collapseBlanks);
  cells.shift();
  if (cells.length > 0 && cells[cells.length - 1] === '') cells.pop();
  return cells.length > 0 ? cells : null;
}

/** "| --- | :---: |": the row under a table's header. */
function isDelimiterRow(cells: string[]): boolean {
  return cells.every((cell) => {
    let dashes = 0;
    for (const char of cell) {
      if (char === '-') dashes += 1;
      else if (char !== ':' && char !== ' ') return false;
    }
    return dashes > 0;
  });
}

/** A body row as a reader of the table takes it: each cell after its column's name ("Route: A; Distance: 4 km"). */
function tableRow(cells: string[], header: string[] | null): string {
  const parts: string[] = [];
  cells.forEach((cell, index) => {
    if (cell === '') return;
    const name = header?.[index] ?? '';
    parts.push(name !== '' ? `${name}: ${cell}` : cell);
  });
  return parts.join('; ');
}

const MARKDOWN_HEADING = /^#{1,6}[ \t]+/;
const LIST_MARKER = /^(?:[-*+•·‣◦]|\d{1,3}[.)]|[a-zA-Z][.)](?=\s))\s+/;

/** "Title ##" → "Title": a closing run of # after a blank is dropped (a walk from the end, not a /#+\s*$/). */
function withoutClosingHashes(text: string): string {
  let end = text.length;
  while (end > 0 && isBlankChar(text[end - 1])) end -= 1;
  const afterHashes = end;
  while (end > 0 && text[end - 1] === '#') end -= 1;
  if (end === afterHashes || (end > 0 && !isBlankChar(text[end - 1]))) return text;
  return text.slice(0, end);
}

function isRule(line: string): boolean {
  let marks = 0;
  const first = line[0];
  if (first !== '-' && first !== '*' && first !== '_' && first !== '=') return false;
  for (const char of line) {
    if (char === first) marks += 1;
    else if (!isBlankChar(char)) return false;
  }
  return marks >= 3;
}

/**
 * A short line on its own (blank lines or the text's start around it, more text before or after it) with no end
 * punctuation is a heading: how a PDF's or a plain text's headings arrive. One at the text's end is a heading too — a
 * passage cut right after a heading (a page ending on one), a running footer — never a sentence: only a text of that
 * one line keeps it as its sentence. `line` is lines[index] without its decoration; list items are never headings.
 */
function standsAsHeading(lines: string[], index: number, line: string, firstText: number, lastText: number): boolean {
  const alone =
    (index === 0 || collapseBlanks(lines[index - 1]) === '') && collapseBlanks(lines[index + 1] ?? '') === '';
  const moreText = index < lastText || index > firstText;
  return alone && moreText && !endsWithTerminator(line) && wordCount(line) <= HEADING_MAX_WORDS;
}

/**
 * The lines of a plain text (a PDF page as extraction writes it) that are headings by the rule of standsAsHeading:
 * their indices. Table rows, list items, quotes and markdown headings are not counted.
 */
export function plainHeadingLines(lines: string[]): number[] {
  let lastText = lines.length - 1;
  while (lastText >= 0 && collapseBlanks(lines[lastText]) === '') lastText -= 1;
  let firstText = 0;
  while (firstText < lastText && collapseBlanks(lines[firstText]) === '') firstText += 1;
  const found: number[] = [];
  lines.forEach((raw, index) => {
    const line = collapseBlanks(raw);
    if (!line || line[0] === '|' || line[0] === '>' || line[0] === '#' || LIST_MARKER.test(line) || isRule(line))
      return;
    if (standsAsHeading(lines, index, line, firstText, lastText)) found.push(index);
  });
  return found;
}

/**
 * Text → its units in order: sentences, list items, table rows (with their header cells' names), headings.
 * Markdown decoration (heading #s, bullets, numbers, task boxes, quote marks) is dropped; rules and code fences are
 * skipped. Linear in the text.
 */
export function splitSentences(text: string): SentenceUnit[] {
  const out: SentenceUnit[] = [];
  const lines = text.split('\n');
  let header: string[] | null = null;
  let lastText = lines.length - 1;
  while (lastText >= 0 && collapseBlanks(lines[lastText]) === '') lastText -= 1;
  let firstText = 0;
  while (firstText < lastText && collapseBlanks(lines[firstText]) === '') firstText += 1;
  lines.forEach((rawLine, index) => {
    let line = collapseBlanks(rawLine);
    const cells = tableCells(line);
    if (!cells) header = null;
    if (!line || isRule(line) || line.startsWith('```') || line.startsWith('~~~')) return;
    if (cells) {
      if (isDelimiterRow(cells)) return;
      const nextCells = tableCells(collapseBlanks(lines[index + 1] ?? ''));
      if (nextCells && isDelimiterRow(nextCells)) {
        header = cells;
        out.push({ text: cells.join(' | '), heading: true });
      } else {
        const row = tableRow(cells, header);
        for (const window of windowed(row)) if (window) out.push({ text: window, heading: false });
      }
      return;
    }
    const hashes = MARKDOWN_HEADING.exec(line);
    if (hashes) {
      const heading = collapseBlanks(withoutClosingHashes(line.slice(hashes[0].length)));
      if (heading) out.push({ text: heading, heading: true });
      return;
    }
    while (line.startsWith('>')) line = line.slice(1).trimStart();
    const marker = LIST_MARKER.exec(line);
    if (marker) line = line.slice(marker[0].length);
    if (line.startsWith('[ ] ') || line.startsWith('[x] ') || line.startsWith('[X] ')) line = line.slice(4);
    line = line.trim();
    if (!line) return;
    if (!marker && standsAsHeading(lines, index, line, firstText, lastText)) {
      out.push({ text: line, heading: true });
      return;
    }
    let start = 0;
    const pieces: string[] = [];
    for (const { end, next } of sentenceBreaks(line)) {
      pieces.push(line.slice(start, end).trim());
      start = next;
    }
    pieces.push(line.slice(start).trim());
    for (const piece of pieces)
      for (const window of windowed(piece)) if (window) out.push({ text: window, heading: false });
  });
  return out;
}
