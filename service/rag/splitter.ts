// Document text → chunks that fit the embedder. Markdown is first cut at its headings (each chunk keeps the path of
// headings above it), then every section, like plain text, goes through LangChain's recursive splitter algorithm
// (recursiveSplitter.ts, without loading LangChain in the model workers) that measures length in embedder tokens, so
// no chunk is truncated at embedding time.
import { MARKDOWN_SEPARATORS, RecursiveSplitter, TEXT_SEPARATORS } from './recursiveSplitter.ts';

export interface TextSegment {
  text: string;
  heading_path: string[];
  /** Set for PDF text (commands/pdfDocuments.ts maps each segment back to its pages); absent otherwise. */
  page_start?: number | null;
  page_end?: number | null;
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
  /**
   * A chunk's size in characters is capped too, not only in tokens: the tokenizer maps a word of 5,000 characters
   * to one [UNK] token, so a token cap alone let a 1 MB document of long "words" become one 1 MB chunk.
   */
  maxChars: number;
  countTokens(text: string): number;
}

const FENCE = /^(```|~~~)/;

export interface AtxHeading {
  level: number;
  text: string;
}

const isBlank = (char: string) => char === ' ' || char === '\t';
// Characters a regex `.` does not match: the regex this scan replaced rejected a line holding one after the #s.
const isLineTerminator = (char: string) => char === '\r' || char === '\u2028' || char === '\u2029';

/**
 * An ATX heading line → its level and text, or null. A hand-written scan on purpose: the regex it replaces,
 * /^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$/, let its lazy text group and the blank runs around the closing #s share
 * characters, so one line of spaces took polynomial time (issue 8: a 3.2 KB heading line blocked the event loop
 * for seconds). Here each character is visited a constant number of times, and the result is the old regex's,
 * case for case: 1–6 #, then at least one space or tab, then the text with a closing run of # (and the blanks
 * around it) removed; a line whose #s are followed by blanks alone is a heading with empty text when there are two
 * or more blanks.
 */
export function atxHeading(line: string): AtxHeading | null {
  let level = 0;
  while (level < line.length && line[level] === '#') level += 1;
  if (level < 1 || level > 6) return null;
  let start = level;
  while (start < line.length && isBlank(line[start])) start += 1;
  if (start === level) return null;
  for (let index = start; index < line.length; index += 1) if (isLineTerminator(line[index])) return null;
  // Only blanks after the #s: the regex gave its one-character text group the last blank, if one was left over.
  if (start === line.length) return start - level >= 2 ? { level, text: '' } : null;
  // The closing sequence, from the right: trailing blanks, the #s, the blanks before them. The text keeps at least
  // its first character ("# #" is a heading whose text is "#"), as the regex's `.+?` did.
  let end = line.length;
  while (end > start && isBlank(line[end - 1])) end -= 1;
  while (end > start && line[end - 1] === '#') end -= 1;
  while (end > start && isBlank(line[end - 1])) end -= 1;
  return { level, text: line.slice(start, Math.max(end, start + 1)).trim() };
}

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
    const heading = inFence ? null : atxHeading(line);
    if (!heading) {
      lines.push(line);
      continue;
    }
    const { level } = heading;
    flush(level);
    while (levels.length > 0 && levels[levels.length - 1] >= level) {
      levels.pop();
      path.pop();
    }
    levels = [...levels, level];
    path.push(heading.text);
  }
  flush(0);
  return sections;
}

export function isMarkdownFilename(filename: string): boolean {
  return /\.(md|markdown)$/i.test(filename);
}

/**
 * Cuts every run of non-blank characters longer than `limit` into pieces of `limit` characters separated by a
 * space: a word longer than a chunk cannot be kept whole, and pre-cutting (one linear pass) spares the recursive
 * splitter from falling back to single characters for it.
 */
export function cutLongWords(text: string, limit: number): string {
  let result = '';
  let copiedUpTo = 0;
  let runStart = 0;
  for (let index = 0; index <= text.length; index += 1) {
    const char = text[index];
    const blank = char === undefined || char === ' ' || char === '\n' || char === '\t' || char === '\r';
    if (!blank) continue;
    if (index - runStart > limit) {
      result += text.slice(copiedUpTo, runStart);
      for (let start = runStart; start < index; start += limit) {
        result += (start > runStart ? ' ' : '') + text.slice(start, Math.min(start + limit, index));
      }
      copiedUpTo = index;
    }
    runStart = index + 1;
  }
  return copiedUpTo === 0 ? text : result + text.slice(copiedUpTo);
}

/** A heading longer than this is cut in heading_path (it is metadata, repeated per chunk). */
export const MAX_HEADING_CHARS = 200;

export async function splitDocument(
  content: string,
  markdown: boolean,
  options: SplitterOptions,
): Promise<SplitResult> {
  // Length is the larger of the token count and the characters scaled to tokens, so a piece the splitter accepts
  // has at most chunkTokens tokens AND at most maxChars characters.
  const charsPerToken = options.maxChars / options.chunkTokens;
  const splitter = new RecursiveSplitter({
    chunkSize: options.chunkTokens,
    chunkOverlap: options.overlapTokens,
    separators: markdown ? MARKDOWN_SEPARATORS : TEXT_SEPARATORS,
    lengthFunction: (text: string) => Math.max(options.countTokens(text), Math.ceil(text.length / charsPerToken)),
  });
  const sections: Section[] = markdown ? markdownSections(content) : [{ heading_path: [], body: content }];
  const wordLimit = Math.floor(options.maxChars / 2);

  let total = 0;
  const seen = new Set<string>();
  const segments: TextSegment[] = [];
  for (const section of sections) {
    const pieces = splitter.splitText(cutLongWords(section.body, wordLimit));
    // Headings are capped as well: each one is repeated in every chunk of its section (and in what is embedded).
    const headingPath = section.heading_path.map((heading) => heading.slice(0, MAX_HEADING_CHARS));
    total += pieces.length;
    for (const piece of pieces) {
      const text = piece.trim();
      const key = `${headingPath.join('\u0000')}\u0001${text}`;
      // A piece with no letter or digit (a bare code fence, a rule) carries nothing to retrieve.
      if (!/[\p{L}\p{N}]/u.test(text) || seen.has(key)) continue;
      seen.add(key);
      segments.push({ text, heading_path: headingPath });
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
