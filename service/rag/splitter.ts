// Document text → chunks that fit the embedder, with LangChain's text splitters. Markdown is first cut at its
// headings (each chunk keeps the path of headings above it), then every section, like plain text, goes through a
// recursive splitter that measures length in embedder tokens, so no chunk is truncated at embedding time.
import { RecursiveCharacterTextSplitter } from '@langchain/textsplitters';

export interface TextSegment {
  text: string;
  heading_path: string[];
}

export interface SplitResult {
  /** Every segment the splitter produced (total_chunks). */
  total: number;
  /** Segments kept for indexing: empty (no letter or digit) and exact-duplicate segments are dropped (chunks). */
  segments: TextSegment[];
}

export interface SplitterOptions {
  chunkTokens: number;
  overlapTokens: number;
  countTokens(text: string): number;
}

const HEADING = /^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$/;
const FENCE = /^(```|~~~)/;

interface Section {
  heading_path: string[];
  body: string;
}

/**
 * Cuts markdown at ATX headings (outside fenced code), tracking the heading path of each section. A heading with
 * nothing under it (no body, no sub-heading) becomes a section of its own, its text the heading: a document of
 * headings alone still says something.
 */
export function markdownSections(markdown: string): Section[] {
  const sections: Section[] = [];
  const path: string[] = [];
  let levels: number[] = [];
  let lines: string[] = [];
  let inFence = false;
  const flush = (nextLevel: number) => {
    const body = lines.join('\n').trim();
    const deepest = levels[levels.length - 1];
    if (body.length > 0) sections.push({ heading_path: [...path], body });
    else if (deepest !== undefined && nextLevel <= deepest) {
      sections.push({ heading_path: path.slice(0, -1), body: path[path.length - 1] });
    }
    lines = [];
  };
  for (const line of markdown.split(/\r?\n/)) {
    if (FENCE.test(line.trim())) inFence = !inFence;
    const heading = inFence ? null : HEADING.exec(line);
    if (!heading) {
      lines.push(line);
      continue;
    }
    const level = heading[1].length;
    flush(level);
    while (levels.length > 0 && levels[levels.length - 1] >= level) {
      levels.pop();
      path.pop();
    }
    levels = [...levels, level];
    path.push(heading[2].trim());
  }
  flush(0);
  return sections;
}

export function isMarkdownFilename(filename: string): boolean {
  return /\.(md|markdown)$/i.test(filename);
}

export async function splitDocument(content: string, markdown: boolean, options: SplitterOptions): Promise<SplitResult> {
  const common = {
    chunkSize: options.chunkTokens,
    chunkOverlap: options.overlapTokens,
    lengthFunction: (text: string) => options.countTokens(text),
  };
  const splitter = markdown
    ? RecursiveCharacterTextSplitter.fromLanguage('markdown', common)
    : new RecursiveCharacterTextSplitter(common);
  const sections: Section[] = markdown ? markdownSections(content) : [{ heading_path: [], body: content }];

  let total = 0;
  const seen = new Set<string>();
  const segments: TextSegment[] = [];
  for (const section of sections) {
    const pieces = await splitter.splitText(section.body);
    total += pieces.length;
    for (const piece of pieces) {
      const text = piece.trim();
      const key = `${section.heading_path.join('\u0000')}\u0001${text}`;
      // A piece with no letter or digit (a bare code fence, a rule) carries nothing to retrieve.
      if (!/[\p{L}\p{N}]/u.test(text) || seen.has(key)) continue;
      seen.add(key);
      segments.push({ text, heading_path: section.heading_path });
    }
  }
  return { total, segments };
}

/**
 * What the embedder sees for a chunk: its document title and heading path, then the text, so a chunk that says
 * "it takes 20 minutes" under "## Baking" of "sourdough" is findable by what it is about.
 */
export function embeddingInput(title: string, segment: TextSegment): string {
  const context = [title, ...segment.heading_path].filter((part) => part.length > 0).join(' › ');
  return context.length > 0 ? `${context}\n${segment.text}` : segment.text;
}
