// Reading order for text a PDF placed by coordinates. pdfjs hands over text items (a string, where it starts,
// how wide it is) in content-stream order, which is whatever order the producing program drew them in: columns
// interleaved, headers last, a word split over two items. These pure functions rebuild lines, columns and
// paragraph starts from geometry alone, and mark what the next steps need: where a line sits among the page's edges
// (pdfRunningLines.ts drops what repeats on every page), headings, table cells and lines the author broke
// (pdfReflow.ts rebuilds paragraphs, lists and tables). They run in the extraction worker (pdfWorker.ts); they take
// no pdfjs types, so they can be tested and reasoned about on their own.
//
// Every scan over PDF text here is a plain character loop: the text is a stranger's, and no regular expression
// is needed to look at it.
//
// Over 400 lines because the rules read one another's intermediate lines (RawLine) and thresholds: split, the
// files would export those internals to each other for the one entry point, pageLines.

import { collapseBlanks, isBlankChar } from '../text/characters.ts';
import { endsWithTerminator } from '../text/sentences.ts';

/** One text item in PDF user space: y grows upward; `size` is the font size (≈ the item's height). */
export interface PlacedText {
  text: string;
  x: number;
  y: number;
  width: number;
  size: number;
}

/** The printed text of items on one baseline (any order): left to right, a blank where a gap is a word break. */
export function baselineText(items: PlacedText[]): string {
  return lineText({ items: [...items].sort((a, b) => a.x - b.x) });
}

/** Where a line sits among the page's baselines, for telling running headers and footers from body text. */
interface EdgePlace {
  /** Among the page's top or bottom EDGE_LINES baselines. */
  atEdge: boolean;
  /** ... and set off from the body by a paragraph gap (not the first or last line of a body paragraph). */
  setOff: boolean;
}

/** A table cell: its text and where it starts. */
export interface TextCell {
  text: string;
  x: number;
}

/** A line in reading order. `paragraphStart` says a new paragraph begins here (not on a page's first line). */
export interface TextLine extends EdgePlace {
  text: string;
  paragraphStart: boolean;
  /** Set in a larger font than the page's body text (a title or a heading). */
  heading: boolean;
  /** The line's parts set apart by gaps of over CELL_GAP font sizes (two or more: perhaps a table row), else null. */
  cells: TextCell[] | null;
  /**
   * The line's parts set apart by gaps of over ROW_CELL_GAP font sizes, when there are two or more: a table's row
   * whose cells stand closer than CELL_GAP ("Visitor book of 10" "15 pounds", 1.1 em apart in pdfTeX's tabular) is
   * still a row when these line up with its header's, and is cut at them.
   */
  pieces?: TextCell[];
  /** The font size, for comparing positions. */
  size: number;
  /**
   * A row of a table the PDF's structure tree names (pdfStructure.ts): rows with the same number are one table, the
   * first its header row, and `cells` hold one cell per column with `x` the column's index.
   */
  table?: number;
  /**
   * The line ends short of its column although the next line's first word would have fitted: the break is the
   * author's (a heading, an address, a line of a list without marks), not the typesetter's wrap.
   */
  brokenOff: boolean;
}

/** Items on one baseline, left to right (before they become text). */
interface RawLine {
  items: PlacedText[];
  y: number;
  size: number;
  /** Shared with the column parts a page-wide line is cut into, so marks made on the line reach its parts. */
  place: EdgePlace;
  /** 0: the page's one column, or a full-width line of a two-column page; 1: the left column; 2: the right one. */
  column: 0 | 1 | 2;
}

/** Baselines closer than this fraction of the font size are one line (sub- and superscripts stay on theirs). */
const SAME_LINE = 0.5;
/** A horizontal gap wider than this fraction of the font size is a word break (a space is ~0.25–0.3 em). */
const WORD_GAP = 0.2;
/** A vertical step larger than this many line steps starts a paragraph. */
const PARAGRAPH_STEP = 1.5;
/** A gutter: at least this share of the lines clear of it (titles and other full-width lines may cross it). */
const GUTTER_CLEAR_SHARE = 0.6;
/**
 * ... at least this wide, in font sizes. Real gutters are 0.7–3 em: LaTeX's multicol sets 10 pt at 10.95 pt type,
 * and pdfTeX's item widths (glyph widths under per-line font expansion) leave 7.5 pt of it clear; word gaps (≈0.3 em)
 * never line up over 0.6 em, and a one-column page fails the crossing test anyway.
 */
const GUTTER_MIN_WIDTH = 0.6;
/**
 * ... where the width counts the band's bins crossed by at most this many lines more than the least crossed: a
 * heading or a page number may poke into a gutter, leaving an empty strip narrower than 1 em beside it.
 */
const GUTTER_INTRUDERS = 2;
/** ... and each column holds at least this share of the page's characters (not a table of contents' numbers). */
const COLUMN_MIN_SHARE = 0.2;
/** Fewer lines than this are never split into columns. */
const COLUMN_MIN_LINES = 6;
/** A gap wider than this many font sizes between a line's items sets apart a table's cells (a justified blank is < 1.5). */
const CELL_GAP = 2;
/** ... and a row under such a header, when its parts line up with the header's (see TextLine.pieces). */
const ROW_CELL_GAP = 1;
/** A line in a font this much larger than the page's body text is a heading. */
const HEADING_SIZE = 1.15;
/** Running headers and footers (pdfRunningLines.ts): lines among the first and last this many of a page. */
const EDGE_LINES = 2;

function isBlank(text: string): boolean {
  for (const char of text) if (!isBlankChar(char)) return false;
  return true;
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
    lines.push({ items: [item], y: item.y, size: item.size, place: { atEdge: false, setOff: false }, column: 0 });
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
function lineText(line: Pick<RawLine, 'items'>): string {
  let text = '';
  let previous: PlacedText | undefined;
  for (const item of line.items) {
    if (previous) {
      const gap = item.x - (previous.x + previous.width);
      const spaced = text === '' || isBlankChar(text[text.length - 1]) || isBlankChar(item.text[0] ?? ' ');
      if (!spaced && gap > WORD_GAP * Math.max(previous.size, item.size)) text += ' ';
    }
    text += item.text;
    previous = item;
  }
  return withoutInnerSoftHyphens(collapseBlanks(text));
}

/**
 * A soft hyphen (U+00AD) inside a line is invisible (Chromium keeps every one of the HTML's in its text); only one at
 * the line's end marks a word broken there, and joinLines (pdfReflow.ts) joins it.
 */
function withoutInnerSoftHyphens(text: string): string {
  const end = text.length - 1;
  let out = '';
  for (let index = 0; index < text.length; index += 1)
    if (text[index] !== '\u00ad' || index === end) out += text[index];
  return out;
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
  if (!best) return undefined;
  // The width test counts the strips beside the band that a heading or a page number crosses; the gutter's x stays
  // in the least-crossed band, where no column's text can reach.
  let bandStart = best.start;
  let bandEnd = best.end;
  while (bandStart > middle.start && coverage[bandStart - 1] <= least + GUTTER_INTRUDERS) bandStart -= 1;
  while (bandEnd < middle.end && coverage[bandEnd] <= least + GUTTER_INTRUDERS) bandEnd += 1;
  const minBins = Math.ceil((GUTTER_MIN_WIDTH * fontSize) / binWidth);
  if (bandEnd - bandStart < minBins) return undefined;
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
    for (const [side, column, tag] of [
      [leftItems, leftColumn, 1],
      [rightItems, rightColumn, 2],
    ] as const) {
      if (side.every((item) => isBlank(item.text))) continue;
      const part: RawLine = { ...line, items: side, column: tag };
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

/** The right edge of a line's ink. */
function lineRight(line: RawLine): number {
  let right = Number.NEGATIVE_INFINITY;
  for (const item of line.items) if (!isBlank(item.text)) right = Math.max(right, item.x + item.width);
  return right;
}

/** The width of a line's first word, from its first item's width shared out over its characters. */
function firstWordWidth(line: RawLine): number {
  const item = line.items.find((candidate) => !isBlank(candidate.text));
  if (!item) return 0;
  const text = item.text.trimStart();
  let length = 0;
  while (length < text.length && !isBlankChar(text[length])) length += 1;
  return (item.width * length) / Math.max(1, text.length);
}

/** A line's parts set apart by gaps wider than `cellGap` font sizes, when there are two or more. */
function lineCells(line: RawLine, cellGap: number): TextCell[] | null {
  const groups: PlacedText[][] = [];
  let previous: PlacedText | undefined;
  for (const item of line.items) {
    if (isBlank(item.text)) continue;
    const gap = previous ? item.x - (previous.x + previous.width) : 0;
    if (!previous || gap > cellGap * Math.max(previous.size, item.size)) groups.push([item]);
    else groups[groups.length - 1].push(item);
    previous = item;
  }
  if (groups.length < 2) return null;
  return groups.map((items) => ({ text: lineText({ ...line, items }), x: items[0].x }));
}

/**
 * Each column's right edge (0: one column or full width, 1: left, 2: right): the second rightmost line end of its
 * body lines, so that one line running past the others (a URL, an equation) does not make every line look short.
 */
function columnRights(lines: RawLine[], isHeading: (line: RawLine) => boolean): Map<number, number> {
  const ends = new Map<number, number[]>();
  for (const line of lines) {
    if (isHeading(line)) continue;
    const list = ends.get(line.column) ?? [];
    list.push(lineRight(line));
    ends.set(line.column, list);
  }
  const rights = new Map<number, number>();
  for (const [column, list] of ends) {
    list.sort((a, b) => b - a);
    rights.set(column, list[Math.min(1, list.length - 1)]);
  }
  return rights;
}

/**
 * Whether `line` ends short of its column although the first word of `next` (the following line of the same
 * column) would have fitted after it: then the author broke the line, not the typesetter. Generous on purpose (the
 * word's width is estimated, and a blank and half an em are added): a wrap taken for a break would cut a sentence.
 */
function brokenOff(line: RawLine, text: string, next: RawLine | undefined, columnRight: number | undefined): boolean {
  if (!next || next.column !== line.column || columnRight === undefined) return false;
  const last = text[text.length - 1];
  if (last === '-' || last === '\u2010' || last === '\u00ad') return false;
  return lineRight(line) + 0.8 * line.size + 1.3 * firstWordWidth(next) < columnRight;
}

/** The font size that carries most of the page's characters (a median of lines would take a title for the body). */
function bodyTextSize(lines: Array<{ line: RawLine; text: string }>): number {
  const characters = new Map<number, number>();
  for (const { line, text } of lines) {
    const size = Math.round(line.size * 10) / 10;
    characters.set(size, (characters.get(size) ?? 0) + text.length);
  }
  let body = 0;
  let most = -1;
  for (const [size, count] of characters) {
    if (count > most) [body, most] = [size, count];
  }
  return body;
}

/**
 * One page's text items → its lines in reading order, each marked where a paragraph starts and where it sits
 * among the page's edges. A paragraph starts after a step down larger than 1.5 × the usual line step, and at the
 * top of the next column when the last column ended a sentence (otherwise the paragraph, or the hyphenated word,
 * runs on from the foot of the column before). Each line also says whether it is a heading (a larger font than
 * the page's body text), its cells (parts set apart by wide gaps) and whether the author broke it (brokenOff): what
 * the reflow (pdfReflow.ts) needs to rebuild paragraphs, tables and lists.
 */
export function pageLines(items: PlacedText[]): TextLine[] {
  const lines = groupLines(items).filter((line) => lineText(line) !== '');
  const ordered = orderLines(lines)
    .map((line) => ({ line, text: lineText(line) }))
    .filter(({ text }) => text !== '');
  const paragraphGap = PARAGRAPH_STEP * usualStep(ordered.map(({ line }) => line));
  markEdges(lines, paragraphGap);
  const bodySize = bodyTextSize(ordered);
  const isHeading = (line: RawLine) => line.size >= HEADING_SIZE * bodySize;
  const rights = columnRights(
    ordered.map(({ line }) => line),
    isHeading,
  );
  return ordered.map(({ line, text }, index) => {
    const previous = ordered[index - 1];
    const step = previous ? previous.line.y - line.y : 0;
    const cells = lineCells(line, CELL_GAP);
    const pieces = lineCells(line, ROW_CELL_GAP);
    return {
      text,
      ...line.place,
      paragraphStart:
        previous !== undefined && (step > paragraphGap || (step < 0 && endsWithTerminator(previous.text))),
      heading: isHeading(line),
      cells,
      ...(pieces ? { pieces } : {}),
      size: line.size,
      brokenOff: brokenOff(line, text, ordered[index + 1]?.line, rights.get(line.column)),
    };
  });
}
