// Text from a tagged PDF's structure tree. Chromium's print and LibreOffice's export (Writer's, also for a DOCX it
// opened) write one: each paragraph, heading, list item and table cell is an element whose text is the marked
// content it names by id, in reading order. Where there is one, it says what geometry can only guess: which printed
// lines make one paragraph (whatever the justification: Chromium draws a glyph per text run, LibreOffice a span per
// line and one more at each soft hyphen), where a list item and a table cell end, which row is the header, the order
// of columns, and what is not the text at all (running headers and footers are untagged or /Artifact). So a page
// with a usable tree is read from it, and any other page by the layout (pdfLayout.ts): files rewritten by
// Ghostscript lose their tags, pdfTeX writes none.
//
// Pure functions over plain objects shaped as pdfjs returns them (getStructTree, and text items tagged with their
// marked-content id by pdfWorker.ts), so they are tested without pdfjs.
import { isBlankChar } from '../text/characters.ts';
import { baselineText, type PlacedText, type TextLine } from './pdfLayout.ts';
import { joinLines } from './pdfReflow.ts';

/** A text item with the marked content it was drawn in (pdfWorker.ts). */
export interface TaggedText extends PlacedText {
  /** The innermost marked-content id around it (what the structure tree names), if any. */
  mcid?: string;
  /** Inside an /Artifact marked-content sequence: page furniture, never the document's text. */
  artifact: boolean;
}

/** A node of pdfjs's getStructTree(): an element (role, children) or a content reference (type 'content', id). */
export interface StructNode {
  role?: string;
  type?: string;
  id?: string;
  children?: StructNode[];
}

/**
 * The tree is used only when the text it names holds at least this share of the page's characters outside
 * artifacts; else the tags are partial (a page edited after tagging) and the layout reads the page.
 */
const MIN_TAGGED_SHARE = 0.5;
/** Baselines closer than this fraction of the font size are one printed line (as in pdfLayout.ts). */
const SAME_LINE = 0.5;

const HEADING_ROLES = new Set(['H', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'Title']);
/** Elements that only group others: their children are read in turn. */
const GROUPING_ROLES = new Set([
  'Root',
  'Document',
  'DocumentFragment',
  'Part',
  'Art',
  'Sect',
  'Div',
  'NonStruct',
  'Private',
  'L',
  'TOC',
  'BlockQuote',
  'Index',
  'Aside',
  'Form',
]);
/** Inside a block, these start blocks of their own (a list or a table nested in a list item). */
const NESTED_BLOCK_ROLES = new Set(['L', 'Table']);

type BlockKind = 'paragraph' | 'heading' | 'item';

/** What the tree says the page holds, in reading order: blocks of content ids, and tables of cells. */
type Part = { kind: BlockKind; ids: string[] } | { kind: 'table'; rows: string[][][] };

function isElement(node: StructNode): boolean {
  return node.type !== 'content' && typeof node.role === 'string';
}

/** The content ids under `node` in order, leaving out nested lists and tables (`nested` gets those). */
function contentIds(node: StructNode, ids: string[], nested: StructNode[]): string[] {
  for (const child of node.children ?? []) {
    if (child.type === 'content' && child.id) ids.push(child.id);
    else if (isElement(child) && NESTED_BLOCK_ROLES.has(child.role!)) nested.push(child);
    else contentIds(child, ids, nested);
  }
  return ids;
}

/** A table's rows (TR, also inside THead/TBody/TFoot), each a list of cells, each cell its content ids. */
function tableRows(table: StructNode, parts: Part[]): string[][][] {
  const rows: string[][][] = [];
  const visit = (node: StructNode) => {
    for (const child of node.children ?? []) {
      if (!isElement(child)) continue;
      if (child.role === 'TR') {
        rows.push(
          (child.children ?? [])
            .filter((cell) => cell.role === 'TH' || cell.role === 'TD')
            .map((cell) => contentIds(cell, [], [])),
        );
      } else if (child.role === 'THead' || child.role === 'TBody' || child.role === 'TFoot') {
        visit(child);
      } else {
        // A caption, or anything else that is not a row: a block of its own.
        collectParts(child, parts);
      }
    }
  };
  visit(table);
  return rows;
}

/** Whether an element of a role not known here only groups elements (so its children are read in turn). */
function groupsElements(node: StructNode): boolean {
  return (node.children ?? []).some(isElement) && !(node.children ?? []).some((child) => child.type === 'content');
}

function collectParts(node: StructNode, parts: Part[]): void {
  const role = node.role ?? '';
  if (role === 'Artifact') return;
  if (role === 'Table') {
    // A caption (a child that is not a row) goes before the table's rows, where producers put it.
    const rows = tableRows(node, parts);
    parts.push({ kind: 'table', rows });
    return;
  }
  const known = HEADING_ROLES.has(role) || role === 'LI' || role === 'P';
  if (!known && (GROUPING_ROLES.has(role) || groupsElements(node))) {
    // Content directly under a grouping element (some producers do that) reads as a paragraph of its own.
    let loose: string[] = [];
    const flush = () => {
      if (loose.length > 0) parts.push({ kind: 'paragraph', ids: loose });
      loose = [];
    };
    for (const child of node.children ?? []) {
      if (child.type === 'content' && child.id) loose.push(child.id);
      else if (isElement(child)) {
        flush();
        collectParts(child, parts);
      }
    }
    flush();
    return;
  }
  const nested: StructNode[] = [];
  const ids = contentIds(node, [], nested);
  const kind: BlockKind = HEADING_ROLES.has(role) ? 'heading' : role === 'LI' ? 'item' : 'paragraph';
  if (ids.length > 0) parts.push({ kind, ids });
  for (const child of nested) collectParts(child, parts);
}

function visibleLength(text: string): number {
  let count = 0;
  for (const char of text) if (!isBlankChar(char)) count += 1;
  return count;
}

/**
 * Items (in the order they were drawn) as one block's text: printed lines in that order (a paragraph running on at
 * the next column's top stays in order), each line's items left to right, lines joined as a reader reads them (a
 * hyphenated or soft-hyphenated word joined, else a blank).
 */
function blockText(items: PlacedText[]): string {
  const lines: PlacedText[][] = [];
  for (const item of items) {
    const line = lines[lines.length - 1];
    const anchor = line?.[0];
    if (anchor && Math.abs(anchor.y - item.y) <= SAME_LINE * Math.max(anchor.size, item.size)) line.push(item);
    else lines.push([item]);
  }
  let text = '';
  for (const line of lines) {
    const printed = baselineText(line);
    if (printed === '') continue;
    text = text === '' ? printed : joinLines(text, printed);
  }
  return text;
}

/**
 * A list item's label drawn from a symbol font has no Unicode of its own: Word's bullet (Symbol's 0xB7) comes out as
 * the private-use U+F0B7, in LibreOffice's export of a DOCX too. It reads as "•", a bullet the segmentation knows.
 */
function withReadableBullet(text: string): string {
  const first = text.charCodeAt(0);
  return first >= 0xe000 && first <= 0xf8ff ? `•${isBlankChar(text[1] ?? '') ? '' : ' '}${text.slice(1)}` : text;
}

function medianSize(items: PlacedText[]): number {
  const sizes = items.map((item) => item.size).sort((a, b) => a - b);
  return sizes[Math.floor(sizes.length / 2)] ?? 0;
}

/** A line that is a whole block: never joined to the next one (brokenOff), never a running header (not at an edge). */
function blockLine(text: string, size: number, paragraphStart: boolean, heading: boolean): TextLine {
  return { text, size, paragraphStart, heading, cells: null, brokenOff: true, atEdge: false, setOff: false };
}

/**
 * One page's lines from its structure tree, in the tree's order: each paragraph, heading and list item one line
 * (printed lines joined), a list's items one after another (no paragraph break between them), each table row one
 * line with its cells (`table` numbers the table on the page, the first row is its header). Null when the page has no tree, or the tree names too little of its text
 * (MIN_TAGGED_SHARE): then the layout reads it. Content outside the tree (untagged margin boxes, artifacts) is
 * dropped: that is how running headers and footers go on a tagged page.
 */
export function structuredLines(tree: StructNode | null | undefined, items: TaggedText[]): TextLine[] | null {
  if (!tree || !isElement(tree)) return null;
  const parts: Part[] = [];
  collectParts(tree, parts);
  const byId = new Map<string, TaggedText[]>();
  let pageChars = 0;
  for (const item of items) {
    if (item.artifact) continue;
    pageChars += visibleLength(item.text);
    if (item.mcid === undefined) continue;
    const list = byId.get(item.mcid) ?? [];
    list.push(item);
    byId.set(item.mcid, list);
  }
  const named = new Set<string>();
  for (const part of parts) {
    if (part.kind === 'table')
      for (const row of part.rows) for (const cell of row) for (const id of cell) named.add(id);
    else for (const id of part.ids) named.add(id);
  }
  let namedChars = 0;
  for (const id of named) for (const item of byId.get(id) ?? []) namedChars += visibleLength(item.text);
  if (pageChars === 0 || namedChars < MIN_TAGGED_SHARE * pageChars) return null;

  const itemsOf = (ids: string[]) => ids.flatMap((id) => byId.get(id) ?? []);
  const lines: TextLine[] = [];
  let tableNumber = 0;
  let previousKind: Part['kind'] | undefined;
  for (const part of parts) {
    if (part.kind === 'table') {
      const rows = part.rows
        .map((row) => row.map((cell) => ({ text: blockText(itemsOf(cell)), items: itemsOf(cell) })))
        .filter((row) => row.some((cell) => cell.text !== ''));
      if (rows.length === 0) continue;
      tableNumber += 1;
      rows.forEach((row, index) => {
        const line = blockLine(
          row.map((cell) => cell.text).join(' '),
          medianSize(row.flatMap((cell) => cell.items)),
          index === 0,
          false,
        );
        line.cells = row.map((cell, column) => ({ text: cell.text, x: column }));
        line.table = tableNumber;
        lines.push(line);
      });
      previousKind = 'table';
      continue;
    }
    const blockItems = itemsOf(part.ids);
    const text = part.kind === 'item' ? withReadableBullet(blockText(blockItems)) : blockText(blockItems);
    if (text === '') continue;
    const runsOnList = part.kind === 'item' && previousKind === 'item';
    lines.push(blockLine(text, medianSize(blockItems), lines.length > 0 && !runsOnList, part.kind === 'heading'));
    previousKind = part.kind;
  }
  return lines;
}
