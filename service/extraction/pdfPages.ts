// An uploaded file's pages or sections as chunks that know where they come from.
import type { SplitResult, TextSegment } from '../rag/splitter.ts';
import type { FileKind } from './fileKinds.ts';
import type { ExtractedPdf } from './pdf.ts';

type Split = (text: string, filename: string) => Promise<SplitResult>;

/** What makes the splitter read a text as markdown (splitter.ts: isMarkdownFilename): the readers write markdown. */
const AS_MARKDOWN = 'sections.md';

/**
 * A PDF's chunks: each page split on its own, so every chunk comes from one page and cites exactly it (a chunk that
 * ran over a page break would cite pages it barely touches: on short pages, all of them). `split` is the
 * splitter's (off the event loop); duplicates across pages are kept, each with its own page. `numbers` gives each
 * page's number when it is not its place (a deck's slides without text are left out).
 */
export async function splitPages(
  pages: string[],
  split: (text: string) => Promise<SplitResult>,
  numbers?: number[],
): Promise<SplitResult> {
  const results = await Promise.all(pages.map((text) => (text.trim().length === 0 ? null : split(text))));
  const segments: TextSegment[] = [];
  let total = 0;
  results.forEach((result, index) => {
    if (!result) return;
    total += result.total;
    const page = numbers?.[index] ?? index + 1;
    for (const segment of result.segments) segments.push({ ...segment, page_start: page, page_end: page });
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
  if (kind === 'pdf' || kind === 'image') return splitPages(pages, (text) => split(text, filename));
  if (kind === 'pptx')
    return splitPages(
      pages,
      (text) => split(text, AS_MARKDOWN),
      pages.map((_, index) => slideNumber(labels?.[index], index)),
    );
  return split(pages.join('\n\n'), AS_MARKDOWN);
}
