// Reading order for text a PDF placed by coordinates. pdfjs hands over text items (a string, where it starts,
// how wide it is) in content-stream order, which is whatever order the producing program drew them in: columns
// interleaved, headers last, a word split over two items. These pure functions rebuild lines, columns and
// paragraphs from geometry alone, and drop what repeats on every page. They run in the extraction worker
// (pdfWorker.ts); they take no pdfjs types, so they can be tested and reasoned about on their own.
//
// Every scan over PDF text here is a plain character loop: the text is a stranger's, and no regular expression
// is needed to look at it.

/** One text item in PDF user space: y grows upward; `size` is the font size (≈ the item's height). */
export interface PlacedText {
  text: string;
  x: number;
  y: number;
  width: number;
  size: number;
}

/** Where a line sits among the page's baselines, for telling running headers and footers from body text. */
interface EdgePlace {
  /** Among the page's top or bottom EDGE_LINES baselines. */
  atEdge: boolean;
  /** ... and set off from the body by a paragraph gap (not the first or last line of a body paragraph). */
  setOff: boolean;
}

/** A line in reading order. `paragraphStart` says a new paragraph begins here (not on a page's first line). */
export interface TextLine extends EdgePlace {
  text: string;
  paragraphStart: boolean;
}

/** Items on one baseline, left to right (before they become text). */
interface RawLine {
  items: PlacedText[];
  y: number;
  size: number;
  /** Shared with the column parts a page-wide line is cut into, so marks made on the line reach its parts. */
  place: EdgePlace;
}

/** Baselines closer than this fraction of the font size are one line (sub- and superscripts stay on theirs). */
const SAME_LINE = 0.5;
/** A horizontal gap wider than this fraction of the font size is a word break (a space is ~0.25–0.3 em). */
const WORD_GAP = 0.2;
/** A vertical step larger than this many line steps starts a paragraph. */
const PARAGRAPH_STEP = 1.5;
/** A gutter: at least this share of the lines clear of it (titles and other full-width lines may cross it). */
const GUTTER_CLEAR_SHARE = 0.6;
/** ... at least this wide, in font sizes (real gutters are 1.5–3 em; word gaps never line up over 1 em). */
const GUTTER_MIN_WIDTH = 1;
/** ... and each column holds at least this share of the page's characters (not a table of contents' numbers). */
const COLUMN_MIN_SHARE = 0.2;
/** Fewer lines than this are never split into columns. */
const COLUMN_MIN_LINES = 6;
/** Running headers and footers: lines among the first and last this many of a page ... */
const EDGE_LINES = 2;
/** ... whose digit-normalised text recurs on at least this share of pages, and on at least RUNNING_MIN_PAGES. */
const RUNNING_SHARE = 0.6;
const RUNNING_MIN_PAGES = 3;

function isSpace(char: string): boolean {
  return char === ' ' || char === '\t' || char === '\n' || char === '\r' || char === '\f' || char === '\u00a0';
}

function isBlank(text: string): boolean {
  for (const char of text) if (!isSpace(char)) return false;
  return true;
}

function isLetter(char: string): boolean {
  return char.toLowerCase() !== char.toUpperCase();
}

function isLowercaseLetter(char: string): boolean {
  return char !== char.toUpperCase() && char === char.toLowerCase();
}

function isDigit(char: string): boolean {
  return char >= '0' && char <= '9';
}

/** Runs of whitespace become one space; none at either end. */
function collapseSpaces(text: string): string {
  let out = '';
  let pendingSpace = false;
  for (const char of text) {
    if (isSpace(char)) {
      pendingSpace = out !== '';
    } else {
      if (pendingSpace) out += ' ';
      out += char;
      pendingSpace = false;
    }
  }
  return out;
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Groups items into lines, top to bottom; a line's y is the baseline of its longest item. */
function groupLines(items: PlacedText[]): RawLine[] {
  const sorted = [...items].sort((a, b) => b.y - a.y || a.x - b.x);
  const lines: RawLine[] = [];
  let anchor: PlacedText | undefined;
  for (const item of sorted) {
    const current = lines.at(-1);
    if (current && anchor && Math.abs(anchor.y - item.y) <= SAME_LINE * Math.max(anchor.size, item.size)) {
      current.items.push(item);
      continue;
    }
    lines.push({ items: [item], y: item.y, size: item.size, place: { atEdge: false, setOff: false } });
    anchor = item;
  }
  for (const line of lines) settleLine(line);
  return lines;
}

/** Sorts a line's items left to right and takes its baseline and size from its longest item. */
function settleLine(line: RawLine): void {
  line.items.sort((a, b) => a.x - b.x);
  let longest = line.items[0];
  for (const item of line.items) if (item.text.length > longest.text.length) longest = item;
  line.y = longest.y;
  line.size = longest.size;
}

/** The items of a line as text: a space where the gap between two items is a word break and none is there. */
function lineText(line: RawLine): string {
  let text = '';
  let previous: PlacedText | undefined;
  for (const item of line.items) {
    if (previous) {
      const gap = item.x - (previous.x + previous.width);
      const spaced = text === '' || isSpace(text[text.length - 1]) || isSpace(item.text[0] ?? ' ');
      if (!spaced && gap > WORD_GAP * Math.max(previous.size, item.size)) text += ' ';
    }
    text += item.text;
    previous = item;
  }
  return collapseSpaces(text);
}

/**
 * The x of a gutter between two columns, or undefined for a page that is not two columns. A gutter is a band at
 * least GUTTER_MIN_WIDTH font sizes wide, in the middle 60% of the text's width, crossed by fewer lines than any
 * other x there and by at most 40% of all lines (titles and other full-width lines), with each side holding a fifth
 * of the characters. A one-column page fails the band test: its full lines cross the middle. Only one gutter is
 * looked for (two columns, the common case).
 */
function findGutter(allLines: RawLine[]): number | undefined {
  const lines = allLines
    .map((line) => line.items.filter((item) => !isBlank(item.text) && item.width > 0))
    .filter((items) => items.length > 0)
    .map((items) => ({ items }));
  if (lines.length < COLUMN_MIN_LINES) return undefined;
  const visible = lines.flatMap((line) => line.items);
  let left = Number.POSITIVE_INFINITY;
  let right = Number.NEGATIVE_INFINITY;
  for (const item of visible) {
    left = Math.min(left, item.x);
    right = Math.max(right, item.x + item.width);
  }
  const span = right - left;
  const fontSize = median(visible.map((item) => item.size));
  if (!(span > 0) || !(fontSize > 0)) return undefined;

  // How many lines cover each 1/1000 of the text's width: one difference array, each line's intervals merged
  // first so a line counts once wherever its items overlap.
  const bins = 1000;
  const binWidth = span / bins;
  const delta = new Int32Array(bins + 1);
  for (const line of lines) {
    let start = -1;
    let end = -1;
    for (const item of line.items) {
      const from = Math.max(0, Math.floor((item.x - left) / binWidth));
      const to = Math.min(bins, Math.ceil((item.x + item.width - left) / binWidth));
      if (from > end) {
        if (end > start) {
          delta[start] += 1;
          delta[end] -= 1;
        }
        start = from;
      }
      end = Math.max(end, to);
    }
    if (end > start) {
      delta[start] += 1;
      delta[end] -= 1;
    }
  }
  // The band is the widest run of the least-crossed bins in the middle: looking for "few enough" lines instead
  // would find runs inside a column whenever each column holds only half the lines (offset baselines).
  const coverage = new Int32Array(bins);
  let covered = 0;
  for (let bin = 0; bin < bins; bin += 1) coverage[bin] = covered += delta[bin];
  const middle = { start: Math.floor(bins * 0.2), end: Math.ceil(bins * 0.8) };
  let least = Number.POSITIVE_INFINITY;
  for (let bin = middle.start; bin < middle.end; bin += 1) least = Math.min(least, coverage[bin]);
  if (least > Math.floor((1 - GUTTER_CLEAR_SHARE) * lines.length)) return undefined;
  let best: { start: number; end: number } | undefined;
  let runStart = -1;
  for (let bin = middle.start; bin < middle.end; bin += 1) {
    if (coverage[bin] !== least) {
      runStart = -1;
      continue;
    }
    if (runStart < 0) runStart = bin;
    if (!best || bin + 1 - runStart > best.end - best.start) best = { start: runStart, end: bin + 1 };
  }
  const minBins = Math.ceil((GUTTER_MIN_WIDTH * fontSize) / binWidth);
  if (!best || best.end - best.start < minBins) return undefined;
  const gutter = left + ((best.start + best.end) / 2) * binWidth;

  let leftChars = 0;
  let rightChars = 0;
  for (const item of visible) {
    if (item.x + item.width <= gutter) leftChars += item.text.length;
    else if (item.x >= gutter) rightChars += item.text.length;
  }
  const total = leftChars + rightChars;
  if (leftChars < COLUMN_MIN_SHARE * total || rightChars < COLUMN_MIN_SHARE * total) return undefined;
  return gutter;
}

/** Whether an item that is not blank spans the gutter (so its line is a full-width line, such as a title). */
function crosses(item: PlacedText, gutter: number): boolean {
  return !isBlank(item.text) && item.x < gutter && item.x + item.width > gutter;
}

/**
 * Lines in reading order. On a two-column page, each run of lines between full-width lines is read as its whole
 * left column, then its whole right column; full-width lines (a title above, a footer below) stay where they are.
 */
function orderLines(lines: RawLine[]): RawLine[] {
  const gutter = findGutter(lines);
  if (gutter === undefined) return lines;
  const ordered: RawLine[] = [];
  let leftColumn: RawLine[] = [];
  let rightColumn: RawLine[] = [];
  const flush = () => {
    ordered.push(...leftColumn, ...rightColumn);
    leftColumn = [];
    rightColumn = [];
  };
  for (const line of lines) {
    if (line.items.some((item) => crosses(item, gutter))) {
      flush();
      ordered.push(line);
      continue;
    }
    const leftItems = line.items.filter((item) => item.x + item.width / 2 < gutter);
    const rightItems = line.items.filter((item) => item.x + item.width / 2 >= gutter);
    for (const [side, column] of [[leftItems, leftColumn], [rightItems, rightColumn]] as const) {
      if (side.every((item) => isBlank(item.text))) continue;
      const part: RawLine = { ...line, items: side };
      settleLine(part);
      column.push(part);
    }
  }
  flush();
  return ordered;
}

/**
 * The page's usual step from one line to the next, over lines in reading order (on a two-column page whose
 * columns' baselines are offset, neighbours by height alone are half a line apart): the median of the steps down
 * no larger than two font sizes, or 1.2 × the font size on a page of one-line paragraphs, which has none.
 */
function usualStep(lines: RawLine[]): number {
  const steps: number[] = [];
  for (let index = 1; index < lines.length; index += 1) {
    const step = lines[index - 1].y - lines[index].y;
    if (step > 0 && step <= 2 * lines[index].size) steps.push(step);
  }
  return steps.length > 0 ? median(steps) : 1.2 * median(lines.map((line) => line.size));
}

/**
 * Marks the top and bottom EDGE_LINES lines (`lines` top to bottom), and of those the ones a paragraph gap
 * separates from the body: the last line of a body paragraph sitting just above the footer is at the edge too,
 * but it is not set off, so it can never be taken for a running footer however often it recurs.
 */
function markEdges(lines: RawLine[], paragraphGap: number): void {
  const gapBelow = (index: number) => lines[index].y - lines[index + 1].y > paragraphGap;
  const last = lines.length - 1;
  for (let index = 0; index < Math.min(EDGE_LINES, lines.length); index += 1) {
    // From the top: a gap between this line and the first line below the edge.
    let setOff = index === last;
    for (let step = index; step < Math.min(EDGE_LINES, last); step += 1) setOff ||= gapBelow(step);
    lines[index].place.atEdge = true;
    lines[index].place.setOff ||= setOff;
  }
  for (let index = last; index > last - EDGE_LINES && index >= 0; index -= 1) {
    // From the bottom: a gap between the last line above the edge and this line.
    let setOff = index === 0;
    for (let step = Math.max(last - EDGE_LINES, 0); step < index; step += 1) setOff ||= gapBelow(step);
    lines[index].place.atEdge = true;
    lines[index].place.setOff ||= setOff;
  }
}

/** Whether a line ends a sentence: at the foot of a column it then ends its paragraph too. */
function endsSentence(text: string): boolean {
  const last = text[text.length - 1];
  return last === '.' || last === '!' || last === '?' || last === ':';
}

/**
 * One page's text items → its lines in reading order, each marked where a paragraph starts and where it sits
 * among the page's edges. A paragraph starts after a step down larger than 1.5 × the usual line step, and at the
 * top of the next column when the last column ended a sentence (otherwise the paragraph, or the hyphenated word,
 * runs on from the foot of the column before).
 */
export function pageLines(items: PlacedText[]): TextLine[] {
  const lines = groupLines(items).filter((line) => lineText(line) !== '');
  const ordered = orderLines(lines).map((line) => ({ line, text: lineText(line) })).filter(({ text }) => text !== '');
  const paragraphGap = PARAGRAPH_STEP * usualStep(ordered.map(({ line }) => line));
  markEdges(lines, paragraphGap);
  return ordered.map(({ line, text }, index) => {
    const previous = ordered[index - 1];
    const step = previous ? previous.line.y - line.y : 0;
    return {
      text,
      ...line.place,
      paragraphStart: previous !== undefined && (step > paragraphGap || (step < 0 && endsSentence(previous.text))),
    };
  });
}

const ROMAN_PAGE_NUMBERS = new Set([
  'i', 'ii', 'iii', 'iv', 'v', 'vi', 'vii', 'viii', 'ix', 'x',
  'xi', 'xii', 'xiii', 'xiv', 'xv', 'xvi', 'xvii', 'xviii', 'xix', 'xx',
]);

/** Characters that decorate a page number: "- 3 -", "— 3 —", "[3]", "· 3 ·", "| 3 |". */
function isDecoration(char: string): boolean {
  return char === '-' || char === '\u2013' || char === '\u2014' || char === '\u00b7' || char === '\u2022' || char === '|' ||
    char === '[' || char === ']' || char === '(' || char === ')' || isSpace(char);
}

function isNumberWord(word: string): boolean {
  if (ROMAN_PAGE_NUMBERS.has(word)) return true;
  if (word.length === 0 || word.length > 5) return false;
  for (const char of word) if (!isDigit(char)) return false;
  return true;
}

/** "3", "Page 3", "p. 3", "3 / 10", "3 of 10", "Page 3 of 10", "- 3 -", "iv": a line that is only a page number. */
export function isPageNumber(text: string): boolean {
  let start = 0;
  let end = text.length;
  while (start < end && isDecoration(text[start])) start += 1;
  while (end > start && isDecoration(text[end - 1])) end -= 1;
  const words: string[] = [];
  let word = '';
  for (const char of text.slice(start, end).toLowerCase()) {
    if (isSpace(char) || char === '/') {
      if (word !== '') words.push(word);
      word = '';
      if (char === '/') words.push('/');
    } else {
      word += char;
    }
  }
  if (word !== '') words.push(word);
  if (words[0] === 'page' || words[0] === 'p.' || words[0] === 'pg.' || words[0] === 'p') words.shift();
  if (words.length === 1) return isNumberWord(words[0]);
  return words.length === 3 && isNumberWord(words[0]) && (words[1] === '/' || words[1] === 'of') && isNumberWord(words[2]);
}

/** A line's text with each run of digits as '#', so "Page 3 of 10" and "Page 4 of 10" are the same line. */
function runningKey(text: string): string {
  let key = '';
  for (const char of text) {
    if (!isDigit(char)) key += char;
    else if (!key.endsWith('#')) key += '#';
  }
  return key.toLowerCase();
}

/**
 * Drops running headers and footers from every page: a line among a page's top or bottom two, set off from the
 * body, whose text (digits aside) recurs so on at least 60% of the pages and on at least three; and any line among
 * the top or bottom two that is only a page number. Other lines are body text and stay, even when they repeat.
 */
export function dropRunningLines(pages: TextLine[][]): TextLine[][] {
  const pagesWith = new Map<string, number>();
  for (const lines of pages) {
    const keys = new Set(lines.filter((line) => line.setOff).map((line) => runningKey(line.text)));
    for (const key of keys) pagesWith.set(key, (pagesWith.get(key) ?? 0) + 1);
  }
  const needed = Math.max(RUNNING_MIN_PAGES, Math.ceil(RUNNING_SHARE * pages.length));
  const running = (line: TextLine) =>
    (line.setOff && (pagesWith.get(runningKey(line.text)) ?? 0) >= needed) || (line.atEdge && isPageNumber(line.text));
  return pages.map((lines) => lines.filter((line) => !running(line)));
}

/** Whether `text` ends in a letter and a hyphen (or a soft hyphen): a word broken at the line's end. */
function endsInBrokenWord(text: string): boolean {
  const last = text[text.length - 1];
  return (last === '-' || last === '\u2010' || last === '\u00ad') && text.length >= 2 && isLetter(text[text.length - 2]);
}

/**
 * A page's lines as text: lines joined by '\n', paragraphs by '\n\n'. A word hyphenated over a line end inside a
 * paragraph is joined again ("extrac-" + "tion" → "extraction") when the next line starts with a lowercase letter;
 * before an uppercase letter or a digit the hyphen is part of the text ("state-" + "Of the art") and stays.
 */
export function linesText(lines: TextLine[]): string {
  let text = '';
  lines.forEach((line, index) => {
    if (index > 0) {
      const joinsWord = !line.paragraphStart && endsInBrokenWord(text) && isLowercaseLetter(line.text[0]);
      if (joinsWord) text = text.slice(0, -1);
      else text += line.paragraphStart ? '\n\n' : '\n';
    }
    text += line.text;
  });
  return text;
}
