// Printed lines → text as a reader sees it. pdfLayout.ts gives each page's lines in reading order; here they become
// the blocks a reader takes in: paragraphs (wrapped lines joined with a space, words hyphenated at a line end
// joined), headings on their own, list items one per line, tables one row per line under their header row (a
// markdown table, which the sentence segmentation reads row by row with the header cells' names). A sentence that
// runs over a page break is completed on the page it starts on. Pure functions, run in the extraction worker.
//
// Text is a stranger's: plain character loops only.
import { endsWithTerminator, sentenceBreaks } from '../text/sentences.ts';
import { isBlankChar, isDigit, isLetter, isLowercaseLetter } from '../text/characters.ts';
import type { TextCell, TextLine } from './pdfLayout.ts';
import { dropRunningLines } from './pdfRunningLines.ts';

type BlockKind = 'paragraph' | 'heading' | 'item' | 'table';

interface Block {
  kind: BlockKind;
  text: string;
  /** Before the block: '\n' when it goes on the block before (a list's next item, a line the author broke), else '\n\n'. */
  separator: '\n' | '\n\n';
}

/** Rows of a table: at least this many lines whose cells line up. */
const TABLE_MIN_ROWS = 2;

/** "• ", "- ", "– ", "1. ", "12) ", "a) ": a line that starts a list item. */
export function startsListItem(text: string): boolean {
  const first = text[0];
  if (
    first === '•' ||
    first === '·' ||
    first === '‣' ||
    first === '◦' ||
    first === '-' ||
    first === '–' ||
    first === '*'
  )
    return isBlankChar(text[1] ?? '');
  let index = 0;
  while (index < 3 && isDigit(text[index] ?? '')) index += 1;
  if (index === 0 && isLetter(first ?? '') && text[1] === ')') index = 1;
  return index > 0 && (text[index] === '.' || text[index] === ')') && isBlankChar(text[index + 1] ?? '');
}

/**
 * Two lines of one paragraph as one: a word hyphenated at the line end is joined when the next line starts in lower
 * case ("extrac-" + "tion"); before an uppercase letter or a digit the hyphen is the text's and stays, with no blank
 * ("state-" + "Of", "2019-" + "2023"); a soft hyphen always goes; otherwise a blank.
 */
export function joinLines(before: string, after: string): string {
  const last = before[before.length - 1];
  if (last === '\u00ad') return before.slice(0, -1) + after;
  if ((last === '-' || last === '\u2010') && before.length >= 2 && !isBlankChar(before[before.length - 2])) {
    return isLetter(before[before.length - 2]) && isLowercaseLetter(after[0] ?? '')
      ? before.slice(0, -1) + after
      : before + after;
  }
  return `${before} ${after}`;
}

/** Whether every cell of `row` starts within a font size of one of the header's cells. */
function linesUp(row: TextCell[], header: TextCell[], size: number): boolean {
  return row.every((cell) => header.some((column) => Math.abs(column.x - cell.x) <= size));
}

/** Where a table starts → the index past its last row: runs of TABLE_MIN_ROWS lines or more whose cells line up. */
function findTables(lines: TextLine[]): Map<number, number> {
  const tables = new Map<number, number>();
  let index = 0;
  while (index < lines.length) {
    const table = lines[index].table;
    if (table !== undefined) {
      // Rows the structure tree names (pdfStructure.ts): the table is theirs, whatever the cells' places.
      let end = index + 1;
      while (end < lines.length && lines[end].table === table) end += 1;
      if (end - index >= TABLE_MIN_ROWS) tables.set(index, end);
      index = end;
      continue;
    }
    // A table starts at a line of cells set well apart (CELL_GAP); its rows' parts (TextLine.pieces) line up with it.
    const header = lines[index].cells ? (lines[index].pieces ?? lines[index].cells) : null;
    let end = index + 1;
    if (header)
      while (
        end < lines.length &&
        lines[end].table === undefined &&
        lines[end].pieces &&
        linesUp(lines[end].pieces!, header, lines[index].size)
      )
        end += 1;
    if (header && end - index >= TABLE_MIN_ROWS) tables.set(index, end);
    index = header && end - index >= TABLE_MIN_ROWS ? end : index + 1;
  }
  return tables;
}

/**
 * The header column a cell or piece starting at `x` belongs to: the rightmost one starting before it (a font size of
 * slack, for numbers set to the right), so a cell's later words stay in its column; else the nearest.
 */
function columnOf(header: TextCell[], x: number, size: number): number {
  let column = -1;
  header.forEach((candidate, index) => {
    if (candidate.x <= x + size && (column < 0 || candidate.x > header[column].x)) column = index;
  });
  if (column >= 0) return column;
  let nearest = 0;
  header.forEach((candidate, index) => {
    if (Math.abs(candidate.x - x) < Math.abs(header[nearest].x - x)) nearest = index;
  });
  return nearest;
}

/** A table's lines as a markdown table: the first line is the header row; each cell goes to the nearest column. */
function tableText(rows: TextLine[]): string {
  const header = rows[0].pieces ?? rows[0].cells!;
  // A "|" inside a cell would read as a cell break.
  const cellText = (text: string) => text.split('|').join('/');
  const render = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const lines = [render(header.map((cell) => cellText(cell.text))), render(header.map(() => '---'))];
  for (const row of rows.slice(1)) {
    const cells = header.map(() => '');
    // Piece by piece where the layout kept them: cells closer than CELL_GAP came out as one cell, but their text
    // items start at their own columns.
    for (const cell of row.pieces ?? row.cells!) {
      // A row from the structure tree has its cells in column order (x is the column's index).
      const column =
        row.table !== undefined ? Math.min(cell.x, header.length - 1) : columnOf(header, cell.x, rows[0].size);
      cells[column] = cells[column] === '' ? cellText(cell.text) : `${cells[column]} ${cellText(cell.text)}`;
    }
    lines.push(render(cells));
  }
  return lines.join('\n');
}

/** One page's lines as blocks. */
function pageBlocks(lines: TextLine[]): Block[] {
  const tables = findTables(lines);
  const blocks: Block[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index];
    const tableEnd = tables.get(index);
    if (tableEnd !== undefined) {
      blocks.push({ kind: 'table', text: tableText(lines.slice(index, tableEnd)), separator: '\n\n' });
      index = tableEnd - 1;
      continue;
    }
    const current = blocks[blocks.length - 1];
    const previous = lines[index - 1];
    const kind: BlockKind = line.heading ? 'heading' : startsListItem(line.text) ? 'item' : 'paragraph';
    const runsOn =
      current !== undefined &&
      !line.paragraphStart &&
      !previous.brokenOff &&
      ((kind === 'heading' && current.kind === 'heading') ||
        (kind === 'paragraph' && (current.kind === 'paragraph' || current.kind === 'item')));
    if (runsOn) {
      current.text = joinLines(current.text, line.text);
      continue;
    }
    const apart =
      !current || line.paragraphStart || kind === 'heading' || current.kind === 'heading' || current.kind === 'table';
    blocks.push({ kind, text: line.text, separator: apart ? '\n\n' : '\n' });
  }
  return blocks;
}

function blocksText(blocks: Block[]): string {
  return blocks.map((block, index) => (index > 0 ? block.separator : '') + block.text).join('');
}

/**
 * A sentence begun at the foot of a page and ended on the next is completed on the page it starts on (its chunk
 * cites that page): the next page's text up to the end of its first sentence moves up, a hyphenated word joined.
 * Only when the page ends inside a paragraph or list item with no end punctuation and the next page starts with a
 * paragraph (not a heading, a list item or a table).
 */
function carrySentenceOver(page: Block[], next: Block[]): void {
  const last = page[page.length - 1];
  const first = next[0];
  if (!last || !first || (last.kind !== 'paragraph' && last.kind !== 'item') || first.kind !== 'paragraph') return;
  if (endsWithTerminator(last.text)) return;
  const [firstBreak] = sentenceBreaks(first.text);
  if (!firstBreak) {
    last.text = joinLines(last.text, first.text);
    next.shift();
    return;
  }
  last.text = joinLines(last.text, first.text.slice(0, firstBreak.end));
  first.text = first.text.slice(firstBreak.next);
}

/**
 * Every page's lines → its text as a reader sees it: running headers and footers dropped (dropRunningLines), lines
 * reflowed into blocks, blocks apart by a blank line ('\n\n'), a list's items and a table's rows one per line ('\n'),
 * and a sentence crossing a page break kept whole on the page it starts on. Index 0 is page 1.
 */
export function pagesText(pages: TextLine[][]): string[] {
  const blocks = dropRunningLines(pages).map(pageBlocks);
  for (let index = 0; index + 1 < blocks.length; index += 1) carrySentenceOver(blocks[index], blocks[index + 1]);
  return blocks.map(blocksText);
}
