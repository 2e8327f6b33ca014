// An uploaded file's pages or sections as chunks that know where they come from; a PDF's pages cut at their
// headings as markdown is.
import type { SplitResult, TextSegment } from '../rag/splitter.ts';
import { MAX_HEADING_CHARS } from '../rag/splitter.ts';
import { plainHeadingLines } from '../text/sentences.ts';
import type { FileKind } from './fileKinds.ts';
import type { ExtractedPdf } from './pdf.ts';

type Split = (text: string, filename: string) => Promise<SplitResult>;

/** What makes the splitter read a text as markdown (splitter.ts: isMarkdownFilename): the readers write markdown. */
const AS_MARKDOWN = 'sections.md';

export interface PageSection {
  /** The headings above the text: the document's first heading (its title), then the latest one. */
  heading_path: string[];
  text: string;
}

/**
 * The last entry of the heading path of a chunk from a page read by OCR: a citation says "p. 3, scanned"
 * (rag/citationMapper.ts). In heading_path because the chunk index's mapping is strict: a field of its own would
 * need a new index version and a reindex of every chunk (docs/architecture.md § OCR).
 */
export const SCANNED_HEADING = 'Scanned page (OCR)';

/**
 * A PDF's pages cut at their headings (short lines standing alone without end punctuation, text/sentences.ts), as
 * markdown is cut at its # headings: the heading leaves the text for the section's heading path, so a page of five
 * sections is five passages, each embedded with its heading, not one passage diluted by the other four. The first
 * heading of the document is its title and stays first in every path; a heading goes on to the next page until
 * another replaces it.
 */
export function pageSections(pages: string[]): PageSection[][] {
  let title: string | null = null;
  let current: string | null = null;
  return pages.map((page) => {
    const lines = page.split('\n');
    const headings = new Set(plainHeadingLines(lines));
    const sections: PageSection[] = [];
    let body: string[] = [];
    const path = () => [title, current].filter((part): part is string => part !== null);
    const flush = () => {
      const text = body.join('\n').trim();
      if (text) sections.push({ heading_path: path(), text });
      body = [];
    };
    lines.forEach((line, index) => {
      if (!headings.has(index)) {
        body.push(line);
        return;
      }
      flush();
      const heading = line.trim().slice(0, MAX_HEADING_CHARS);
      if (title === null) title = heading;
      else current = heading;
    });
    flush();
    return sections;
  });
}

/**
 * A file's chunks page by page: each page split on its own, so every chunk comes from one page and cites exactly it
 * (a chunk that ran over a page break would cite pages it barely touches: on short pages, all of them). A PDF's or
 * a scan's pages are first cut into their sections (pageSections), each split on its own with its heading path; a
 * deck's slides, already markdown, are split whole. `split` is the splitter's (off the event loop); duplicates
 * across pages are kept, each with its own page; a page read by OCR (`scanned`) ends each path with
 * SCANNED_HEADING. `numbers` gives each page's number when it is not its place (a
 * deck's slides without text are left out).
 */
export async function splitPages(
  pages: string[],
  split: (text: string) => Promise<SplitResult>,
  options: { numbers?: number[]; sectioned?: boolean; scanned?: readonly { page: number }[] } = {},
): Promise<SplitResult> {
  const sectioned =
    options.sectioned === false ? pages.map((text) => [{ heading_path: [], text }]) : pageSections(pages);
  const results = await Promise.all(
    sectioned.map((sections) =>
      Promise.all(
        sections
          .filter((section) => section.text.trim().length > 0)
          .map(async (section) => ({ section, result: await split(section.text) })),
      ),
    ),
  );
  const scannedPages = new Set((options.scanned ?? []).map((entry) => entry.page));
  const segments: TextSegment[] = [];
  let total = 0;
  results.forEach((sections, index) => {
    const page = options.numbers?.[index] ?? index + 1;
    const marks = scannedPages.has(page) ? [SCANNED_HEADING] : [];
    for (const { section, result } of sections) {
      total += result.total;
      for (const segment of result.segments)
        segments.push({
          ...segment,
          heading_path: [...section.heading_path, ...segment.heading_path, ...marks],
          page_start: page,
          page_end: page,
        });
    }
  });
  return { total, segments };
}

/** A slide's number from its section's label ("Slide 7: The harvest"); its place when the label has none. */
function slideNumber(label: string | undefined, index: number): number {
  const match = /^Slide (\d{1,6})\b/.exec(label ?? '');
  return match ? Number(match[1]) : index + 1;
}

/**
 * A file's chunks by its kind: a PDF's or a scan's by page (a citation says "p. 3"), a deck's by slide (the page
 * fields carry the slide's number: "slide 3"), and the others' as one markdown text, so each chunk's heading path is
 * its section's label (the heading path of a DOCX, ODT or web page; "Sheet rows, rows 2–21" of a workbook or CSV).
 */
export function splitFile(
  kind: FileKind,
  extracted: ExtractedPdf,
  filename: string,
  split: Split,
): Promise<SplitResult> {
  const { pages, labels } = extracted;
  if (kind === 'pdf' || kind === 'image')
    return splitPages(pages, (text) => split(text, filename), { scanned: extracted.scanned });
  if (kind === 'pptx')
    return splitPages(pages, (text) => split(text, AS_MARKDOWN), {
      numbers: pages.map((_, index) => slideNumber(labels?.[index], index)),
      sectioned: false,
    });
  return split(pages.join('\n\n'), AS_MARKDOWN);
}
