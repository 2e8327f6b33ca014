// A PDF's pages as chunks that know their page, cut at their headings as markdown is.
import type { SplitResult, TextSegment } from '../rag/splitter.ts';
import { MAX_HEADING_CHARS } from '../rag/splitter.ts';
import { plainHeadingLines } from '../text/sentences.ts';

export interface PageSection {
  /** The headings above the text: the document's first heading (its title), then the latest one. */
  heading_path: string[];
  text: string;
}

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
 * A PDF's chunks: each page split on its own, so every chunk comes from one page and cites exactly it (a chunk that
 * ran over a page break would cite pages it barely touches: on short pages, all of them), and each page's sections
 * (pageSections) split on their own, with their heading paths. `split` is the splitter's (off the event loop);
 * duplicates across pages are kept, each with its own page.
 */
export async function splitPages(pages: string[], split: (text: string) => Promise<SplitResult>): Promise<SplitResult> {
  const sectioned = pageSections(pages);
  const results = await Promise.all(
    sectioned.map((sections) =>
      Promise.all(sections.map(async (section) => ({ section, result: await split(section.text) }))),
    ),
  );
  const segments: TextSegment[] = [];
  let total = 0;
  results.forEach((sections, index) => {
    for (const { section, result } of sections) {
      total += result.total;
      for (const segment of result.segments)
        segments.push({
          ...segment,
          heading_path: [...section.heading_path, ...segment.heading_path],
          page_start: index + 1,
          page_end: index + 1,
        });
    }
  });
  return { total, segments };
}
