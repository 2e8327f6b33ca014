// ODT → structured text, one section per heading, streaming content.xml through boundedZip and safeXml: text:h with
// its outline level → `#`s; text:list items → `- `, or `1. ` when the list's style (content.xml's automatic styles or
// styles.xml) numbers its first level; table:table → one line per row with the header row's names
// (table:table-header-rows, else the first row). Notes, annotations and tracked deletions are skipped. No library was
// better than this: docs/format-readers-research.md (officeparser: 6× slower, inflates before it counts).
import type { SaxesTagPlain } from 'saxes';
import { openBoundedZip, type BoundedZip, type ZipLimits } from './boundedZip.ts';
import { joinLines, rowLine, sectionsByHeading, squash, type ExtractedDocument } from './documents.ts';
import { parseXmlPart } from './safeXml.ts';

const SKIPPED = new Set([
  'office:annotation',
  'text:note',
  'text:tracked-changes',
  'office:forms',
  'text:sequence-decls',
]);

async function numberedListStyles(zip: BoundedZip, part: string, into: Set<string>): Promise<void> {
  if (!zip.has(part)) return;
  let style: string | null = null;
  await parseXmlPart(zip, part, 'ODT', {
    open(tag) {
      if (tag.name === 'text:list-style') style = tag.attributes['style:name'] ?? null;
      else if (style && tag.name === 'text:list-level-style-number' && tag.attributes['text:level'] === '1')
        into.add(style);
    },
    close(name) {
      if (name === 'text:list-style') style = null;
    },
  });
}

interface Table {
  header: string[] | null;
  rows: string[][];
  inHeader: boolean;
  row: string[];
  cell: string | null;
}

/** The state of one walk over content.xml: it appends to `lines` as blocks close. */
class OdtWalker {
  readonly lines: string[] = [];
  private skipping = 0;
  private block: { heading: number; text: string } | null = null;
  private readonly lists: { ordered: boolean; next: number }[] = [];
  private table: Table | null = null;
  private readonly numbered: Set<string>;
  constructor(numbered: Set<string>) {
    this.numbered = numbered;
  }

  open(tag: SaxesTagPlain): void {
    if (this.skipping || SKIPPED.has(tag.name)) {
      this.skipping++;
      return;
    }
    const table = this.table;
    switch (tag.name) {
      case 'text:h':
      case 'text:p':
        if (table?.cell == null) {
          const level = tag.name === 'text:h' ? Number(tag.attributes['text:outline-level'] ?? 1) || 1 : 0;
          this.block = { heading: level, text: '' };
        }
        break;
      case 'text:list': {
        const style = tag.attributes['text:style-name'];
        const parent = this.lists.at(-1);
        this.lists.push({ ordered: style ? this.numbered.has(style) : (parent?.ordered ?? false), next: 1 });
        break;
      }
      case 'text:s':
      case 'text:tab':
      case 'text:line-break':
        this.append(' ');
        break;
      case 'table:table':
        this.table = { header: null, rows: [], inHeader: false, row: [], cell: null };
        break;
      case 'table:table-header-rows':
        if (table) table.inHeader = true;
        break;
      case 'table:table-row':
        if (table) table.row = [];
        break;
      case 'table:table-cell':
        if (table) table.cell = '';
        break;
    }
  }

  text(text: string): void {
    if (!this.skipping) this.append(text);
  }

  close(name: string): void {
    if (this.skipping) {
      this.skipping--;
      return;
    }
    const table = this.table;
    if (name === 'text:h' || name === 'text:p') this.closeBlock();
    else if (name === 'text:list') {
      this.lists.pop();
      if (!this.lists.length) this.lines.push('');
    } else if (table && name === 'table:table-cell') {
      table.row.push(squash(table.cell ?? ''));
      table.cell = null;
    } else if (table && name === 'table:table-row') {
      if (table.inHeader || (!table.header && !table.rows.length && table.row.some(Boolean))) table.header = table.row;
      else table.rows.push(table.row);
    } else if (table && name === 'table:table-header-rows') table.inHeader = false;
    else if (table && name === 'table:table') {
      this.lines.push('', ...table.rows.map((row) => rowLine(table.header ?? [], row)), '');
      this.table = null;
    }
  }

  private closeBlock(): void {
    if (this.table?.cell != null) {
      this.table.cell += ' ';
      return;
    }
    const text = squash(this.block?.text ?? '');
    const heading = this.block?.heading ?? 0;
    this.block = null;
    if (!text) return;
    if (heading) this.lines.push('', `${'#'.repeat(Math.min(6, heading))} ${text}`, '');
    else if (this.lists.length) {
      const list = this.lists.at(-1)!;
      this.lines.push(`${'  '.repeat(this.lists.length - 1)}${list.ordered ? `${list.next++}.` : '-'} ${text}`);
    } else this.lines.push('', text, '');
  }

  private append(text: string): void {
    if (this.table?.cell != null) this.table.cell += text;
    else if (this.block) this.block.text += text;
  }
}

export async function readOdt(bytes: Buffer, limits: ZipLimits): Promise<ExtractedDocument> {
  const zip = await openBoundedZip(bytes, limits, 'ODT');
  try {
    const numbered = new Set<string>();
    await numberedListStyles(zip, 'styles.xml', numbered);
    await numberedListStyles(zip, 'content.xml', numbered);
    const walker = new OdtWalker(numbered);
    await parseXmlPart(zip, 'content.xml', 'ODT', {
      open: (tag) => walker.open(tag),
      text: (text) => walker.text(text),
      close: (name) => walker.close(name),
    });
    return { sections: sectionsByHeading(joinLines(walker.lines), 'Document') };
  } finally {
    zip.close();
  }
}
