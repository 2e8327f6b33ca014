// A PDF's pages as chunks that know their page.
import type { SplitResult, TextSegment } from '../rag/splitter.ts';

/**
 * The last entry of the heading path of a chunk from a page read by OCR: a citation says "p. 3, scanned"
 * (rag/citationMapper.ts). In heading_path because the chunk index's mapping is strict: a field of its own would
 * need a new index version and a reindex of every chunk (docs/architecture.md § OCR).
 */
export const SCANNED_HEADING = 'Scanned page (OCR)';

/**
 * A PDF's chunks: each page split on its own, so every chunk comes from one page and cites exactly it (a chunk that
 * ran over a page break would cite pages it barely touches: on short pages, all of them). `split` is the
 * splitter's (off the event loop); duplicates across pages are kept, each with its own page.
 */
export async function splitPages(
  pages: string[],
  split: (text: string) => Promise<SplitResult>,
  scanned: readonly { page: number }[] = [],
): Promise<SplitResult> {
  const scannedPages = new Set(scanned.map((entry) => entry.page));
  const results = await Promise.all(pages.map((text) => (text.trim().length === 0 ? null : split(text))));
  const segments: TextSegment[] = [];
  let total = 0;
  results.forEach((result, index) => {
    if (!result) return;
    total += result.total;
    const page = index + 1;
    for (const segment of result.segments) {
      const headingPath = scannedPages.has(page) ? [...segment.heading_path, SCANNED_HEADING] : segment.heading_path;
      segments.push({ ...segment, heading_path: headingPath, page_start: page, page_end: page });
    }
  });
  return { total, segments };
}
