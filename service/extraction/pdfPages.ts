// A PDF's pages as chunks that know their page.
import type { SplitResult, TextSegment } from '../rag/splitter.ts';

/**
 * A PDF's chunks: each page split on its own, so every chunk comes from one page and cites exactly it (a chunk that
 * ran over a page break would cite pages it barely touches: on short pages, all of them). `split` is the
 * splitter's (off the event loop); duplicates across pages are kept, each with its own page.
 */
export async function splitPages(pages: string[], split: (text: string) => Promise<SplitResult>): Promise<SplitResult> {
  const results = await Promise.all(pages.map((text) => (text.trim().length === 0 ? null : split(text))));
  const segments: TextSegment[] = [];
  let total = 0;
  results.forEach((result, index) => {
    if (!result) return;
    total += result.total;
    for (const segment of result.segments) segments.push({ ...segment, page_start: index + 1, page_end: index + 1 });
  });
  return { total, segments };
}
