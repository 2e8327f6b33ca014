// Running headers and footers: what repeats at the top or the bottom of every page, and lines that are only a page
// number. Pure functions over the lines pdfLayout.ts marks with their place among the page's edges.
import { isBlankChar, isDigit } from '../text/characters.ts';
import type { TextLine } from './pdfLayout.ts';

/** A running line's digit-normalised text recurs on at least this share of pages, and on at least RUNNING_MIN_PAGES. */
const RUNNING_SHARE = 0.6;
const RUNNING_MIN_PAGES = 3;

const ROMAN_PAGE_NUMBERS = new Set([
  'i',
  'ii',
  'iii',
  'iv',
  'v',
  'vi',
  'vii',
  'viii',
  'ix',
  'x',
  'xi',
  'xii',
  'xiii',
  'xiv',
  'xv',
  'xvi',
  'xvii',
  'xviii',
  'xix',
  'xx',
]);

/** Characters that decorate a page number: "- 3 -", "— 3 —", "[3]", "· 3 ·", "| 3 |". */
function isDecoration(char: string): boolean {
  return (
    char === '-' ||
    char === '\u2013' ||
    char === '\u2014' ||
    char === '\u00b7' ||
    char === '\u2022' ||
    char === '|' ||
    char === '[' ||
    char === ']' ||
    char === '(' ||
    char === ')' ||
    isBlankChar(char)
  );
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
    if (isBlankChar(char) || char === '/') {
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
  return (
    words.length === 3 && isNumberWord(words[0]) && (words[1] === '/' || words[1] === 'of') && isNumberWord(words[2])
  );
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
