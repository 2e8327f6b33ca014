// What the readers of the new kinds (DOCX, ODT, PPTX, XLSX, CSV, HTML) hand over, and the bounds they read under.
//
// Every reader turns a Buffer (the upload, already size-capped) into the structured text markdown gives: `#` headings,
// `- ` and `1. ` list items, paragraphs, and each table row as one line carrying its header names
// ("- Variety: Cox's Orange Pippin; Tonnes picked: 187"). The text comes in sections, each with the label a citation
// shows: the section heading (DOCX, ODT, HTML), "Slide 2" (PPTX), "Sheet rows, rows 2–21" (XLSX, CSV). They fit the
// path a PDF's pages take (pdfPages.ts: each page split on its own, its number on each chunk): a section is a page.
// The libraries and the figures behind them: docs/format-readers-research.md.

export interface DocumentSection {
  /** Where a citation points: the heading path ("Orchard handbook › Spraying the trees"), "Slide 2", "rows, rows 2–21". */
  label: string;
  /** The section's structured text (markdown). */
  text: string;
}

export interface ExtractedDocument {
  sections: DocumentSection[];
}

export interface DocumentLimits {
  /** Entries a zip (DOCX, ODT, PPTX, XLSX) may hold, read from its end record before any entry is listed. */
  maxZipEntries: number;
  /** Bytes one zip part may inflate to: its declared size before inflating, its real output while inflating. */
  maxPartBytes: number;
  /** Bytes all the parts read may inflate to together. */
  maxInflatedBytes: number;
  /** Inflated over compressed size of one part (real DOCX/XLSX parts are 4–20:1; a run of one byte ~1,000:1). */
  maxZipRatio: number;
  /** Data rows of a workbook (over all its sheets) or a CSV: more is refused, counted while streaming. */
  maxRows: number;
  /** Bytes of one CSV record (a file with no line break is one record). */
  maxRecordBytes: number;
  /** Slides of a deck, read from presentation.xml before any slide. */
  maxSlides: number;
  /** Elements of an HTML page Readability looks at. */
  maxHtmlElements: number;
}

/** The proposals of docs/format-readers-research.md; service/config.ts sets them from KBQA_DOC_* (docs/configuration.md). */
export const DEFAULT_DOCUMENT_LIMITS: DocumentLimits = {
  maxZipEntries: 10_000,
  maxPartBytes: 256 * 1024 * 1024,
  maxInflatedBytes: 512 * 1024 * 1024,
  maxZipRatio: 200,
  maxRows: 100_000,
  maxRecordBytes: 64 * 1024,
  maxSlides: 1_000,
  maxHtmlElements: 200_000,
};

/** Rows of a workbook or CSV per section: a citation names the sheet and a short run of rows. */
export const ROWS_PER_SECTION = 20;

/** Collapses runs of white space (a cell's or paragraph's text as written over several XML text nodes). */
export function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * One table row as one line carrying its header names: "- Variety: Cox's Orange Pippin; Tonnes picked: 187". An empty
 * cell is left out; a cell without a header is "Column N". `prefix` goes before the cells ("Row 3: ").
 */
export function rowLine(header: readonly string[], cells: readonly (string | undefined)[], prefix = ''): string {
  const parts: string[] = [];
  cells.forEach((cell, index) => {
    const value = cell === undefined ? '' : squash(cell);
    if (value) parts.push(`${header[index] || `Column ${index + 1}`}: ${value}`);
  });
  return `- ${prefix}${parts.join('; ')}`;
}

/** Joins a reader's lines into text: at most one blank line in a row, none at either end. */
export function joinLines(lines: readonly string[]): string {
  return lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * Markdown cut at its headings, each section labelled with its heading path ("Handbook › Spraying the trees"), so a
 * chunk cites the section it comes from. Text before the first heading is labelled `fallback`. A heading with no text
 * of its own (a title straight above a subheading) opens the next section instead of being a section alone: a
 * heading is never a chunk on its own.
 */
export function sectionsByHeading(markdown: string, fallback: string): DocumentSection[] {
  const sections: DocumentSection[] = [];
  const path: { level: number; title: string }[] = [];
  let lines: string[] = [];
  let label = fallback;
  const flush = () => {
    if (lines.every((line) => line.trim() === '' || headingOf(line))) return;
    sections.push({ label, text: joinLines(lines) });
    lines = [];
  };
  for (const line of markdown.split('\n')) {
    const heading = headingOf(line);
    if (heading) {
      flush();
      while (path.length && path.at(-1)!.level >= heading.level) path.pop();
      path.push(heading);
      label = path.map((entry) => entry.title).join(' › ');
    }
    lines.push(line);
  }
  flush();
  return sections;
}

function headingOf(line: string): { level: number; title: string } | null {
  let level = 0;
  while (level < line.length && line[level] === '#') level++;
  if (level === 0 || level > 6 || line[level] !== ' ') return null;
  const title = line.slice(level + 1).trim();
  return title ? { level, title } : null;
}

/** Rows grouped into sections of ROWS_PER_SECTION, labelled with the sheet and the rows' numbers. */
export class RowSections {
  readonly sections: DocumentSection[] = [];
  private lines: string[] = [];
  private first = 0;
  private last = 0;
  private sheet = '';

  add(sheet: string, row: number, line: string): void {
    if (sheet !== this.sheet || this.lines.length >= ROWS_PER_SECTION) this.flush();
    if (!this.lines.length) {
      this.sheet = sheet;
      this.first = row;
    }
    this.last = row;
    this.lines.push(line);
  }

  flush(): void {
    if (!this.lines.length) return;
    const rows = this.first === this.last ? `row ${this.first}` : `rows ${this.first}–${this.last}`;
    const label = `Sheet ${this.sheet}, ${rows}`;
    this.sections.push({ label, text: `## ${label}\n\n${this.lines.join('\n')}` });
    this.lines = [];
  }
}
