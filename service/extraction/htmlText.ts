// HTML (mammoth's rendering of a DOCX, Readability's article of a web page) → the structured text markdown gives:
// `#` headings, `- ` and `1. ` list items, paragraphs, and each table row as one line carrying its header names.
// Walks htmlparser2 12.0.0's DOM; nothing is rendered, no script runs, nothing is fetched.
import { parseDocument } from 'htmlparser2';
import { joinLines, rowLine, squash } from './documents.ts';

/** The slice of domhandler's nodes the walk reads (script and style elements have types of their own). */
interface HtmlNode {
  type: string;
  name?: string;
  data?: string;
  attribs?: Record<string, string>;
  children?: HtmlNode[];
}

/** Never text: code, embedded things, forms. Page chrome (nav, footer, aside, header) is dropped when asked. */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'iframe', 'object', 'head', 'button']);
const CHROME = new Set(['nav', 'footer', 'aside', 'header', 'form']);
const BLOCKS = new Set(['p', 'div', 'section', 'article', 'main', 'header', 'blockquote', 'pre', 'figure']);
const BLOCK_LIKE = new Set([...BLOCKS, 'figcaption', 'dd', 'dt', 'address', 'ul', 'ol', 'table', 'h1', 'h2', 'h3']);
const HEADINGS = new Map([1, 2, 3, 4, 5, 6].map((level) => [`h${level}`, level]));

const tagsOf = (node: HtmlNode): HtmlNode[] => (node.children ?? []).filter((child) => child.type === 'tag');

function inlineText(node: HtmlNode): string {
  if (node.type === 'text') return node.data ?? '';
  if (node.type !== 'tag' || SKIPPED.has(node.name!)) return '';
  if (node.name === 'br') return ' ';
  return (node.children ?? []).map(inlineText).join('');
}

function tableRows(table: HtmlNode): HtmlNode[][] {
  const rows: HtmlNode[][] = [];
  const collect = (node: HtmlNode) => {
    for (const child of tagsOf(node)) {
      if (child.name === 'tr') rows.push(tagsOf(child).filter((cell) => cell.name === 'td' || cell.name === 'th'));
      else if (child.name !== 'table') collect(child);
    }
  };
  collect(table);
  return rows;
}

/**
 * A table as rows with header names. The first row is the header, marked (th, thead) or not: mammoth marks none unless
 * Word's "repeat as header row" is set, and a person reading the table takes its first row as the header too.
 */
function tableLines(table: HtmlNode): string[] {
  const [header = [], ...body] = tableRows(table).map((cells) => cells.map((cell) => squash(inlineText(cell))));
  if (!body.length) return header.length ? ['', rowLine([], header), ''] : [];
  return ['', ...body.map((cells) => rowLine(header, cells)), ''];
}

class Walker {
  readonly lines: string[] = [];
  private readonly lists: { ordered: boolean; next: number }[] = [];
  private readonly dropChrome: boolean;
  constructor(dropChrome: boolean) {
    this.dropChrome = dropChrome;
  }

  walk(node: HtmlNode): void {
    for (const child of node.children ?? []) {
      if (child.type === 'text') {
        const text = squash(child.data ?? '');
        if (text) this.lines.push(text);
      } else if (child.type === 'tag') this.element(child);
    }
  }

  private element(node: HtmlNode): void {
    const name = node.name!;
    if (SKIPPED.has(name) || (this.dropChrome && CHROME.has(name))) return;
    const level = HEADINGS.get(name);
    if (level) {
      const text = squash(inlineText(node));
      if (text) this.lines.push('', `${'#'.repeat(level)} ${text}`, '');
    } else if (name === 'ul' || name === 'ol') {
      this.lists.push({ ordered: name === 'ol', next: Number(node.attribs?.start ?? 1) || 1 });
      this.walk(node);
      this.lists.pop();
      this.lines.push('');
    } else if (name === 'li') this.item(node);
    else if (name === 'table') this.lines.push(...tableLines(node));
    else if (BLOCKS.has(name) || name === 'figcaption' || name === 'dd' || name === 'dt' || name === 'address') {
      if (tagsOf(node).some((child) => BLOCK_LIKE.has(child.name!) || HEADINGS.has(child.name!))) this.walk(node);
      else {
        const text = squash(inlineText(node));
        if (text) this.lines.push('', text, '');
      }
    } else this.walk(node);
  }

  private item(node: HtmlNode): void {
    const list = this.lists.at(-1) ?? { ordered: false, next: 1 };
    const indent = '  '.repeat(Math.max(0, this.lists.length - 1));
    const nested = (child: HtmlNode) => child.type === 'tag' && (child.name === 'ul' || child.name === 'ol');
    const own = squash(
      (node.children ?? [])
        .filter((child) => !nested(child))
        .map(inlineText)
        .join(' '),
    );
    const marker = list.ordered ? `${list.next++}.` : '-';
    if (own) this.lines.push(`${indent}${marker} ${own}`);
    for (const child of node.children ?? []) if (nested(child)) this.element(child);
  }
}

/** `dropChrome` also drops nav, header, footer, aside and form (a whole page read without Readability). */
export function htmlToMarkdown(html: string, options: { dropChrome?: boolean } = {}): string {
  const walker = new Walker(options.dropChrome ?? false);
  walker.walk(parseDocument(html, { decodeEntities: true }) as unknown as HtmlNode);
  return joinLines(walker.lines);
}
