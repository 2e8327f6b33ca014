// The answer is plain text with citation markers: [1], [2], and sometimes a list, [1, 3]. It is split and scanned
// by hand, one pass over the characters (no regular expression: this text comes from a model and its documents,
// and a scan cannot backtrack). Nothing here ever becomes HTML: the pieces are rendered as React text and links.

export type AnswerPiece = { kind: 'text'; text: string } | { kind: 'marker'; n: number } | { kind: 'unverified' };

/**
 * What the server writes at the end of a sentence of an OpenAI-compatible model's answer that no passage it cites
 * supports, or that cites none (service/rag/sentenceChecks.ts, UNVERIFIED_MARK; docs/api.md).
 */
export const UNVERIFIED_MARK = '[unverified]';

/** Paragraphs are separated by blank lines; single line breaks stay inside a paragraph. */
export function splitParagraphs(answer: string): string[] {
  const paragraphs: string[] = [];
  let current: string[] = [];
  for (const raw of answer.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') {
      if (current.length > 0) paragraphs.push(current.join('\n'));
      current = [];
    } else {
      current.push(line);
    }
  }
  if (current.length > 0) paragraphs.push(current.join('\n'));
  return paragraphs;
}

/**
 * Text, markers and unverified marks, in order. A marker is `[` numbers separated by commas `]` where every number
 * names a citation (1 … citationCount); `[unverified]` is the mark; anything else, e.g. `[9]` with three citations or
 * `[note]`, stays text.
 */
export function parseMarkers(text: string, citationCount: number): AnswerPiece[] {
  const pieces: AnswerPiece[] = [];
  let textStart = 0;
  let i = 0;
  while (i < text.length) {
    if (text[i] !== '[') {
      i += 1;
      continue;
    }
    if (text.startsWith(UNVERIFIED_MARK, i)) {
      if (i > textStart) pieces.push({ kind: 'text', text: text.slice(textStart, i) });
      pieces.push({ kind: 'unverified' });
      i += UNVERIFIED_MARK.length;
      textStart = i;
      continue;
    }
    const marker = readMarker(text, i, citationCount);
    if (marker === null) {
      i += 1;
      continue;
    }
    if (i > textStart) pieces.push({ kind: 'text', text: text.slice(textStart, i) });
    for (const n of marker.numbers) pieces.push({ kind: 'marker', n });
    i = marker.end;
    textStart = i;
  }
  if (textStart < text.length) pieces.push({ kind: 'text', text: text.slice(textStart) });
  return attachMarkers(pieces);
}

/** Punctuation that moves in front of the markers before it, as a footnote mark follows the period. */
const MOVED_PUNCTUATION = '.,;:!?';

/**
 * Markers sit against what they cite: the spaces before a run of markers go, and punctuation right after it (spaces
 * between, too) moves in front of it. "chamois cloth [1]." reads "chamois cloth.¹", not "chamois cloth ¹ .".
 */
function attachMarkers(pieces: AnswerPiece[]): AnswerPiece[] {
  const out: AnswerPiece[] = [];
  const rest = [...pieces];
  let i = 0;
  while (i < rest.length) {
    const piece = rest[i];
    if (piece.kind !== 'marker') {
      out.push(piece);
      i += 1;
      continue;
    }
    let end = i;
    while (rest[end]?.kind === 'marker') end += 1;
    let before = '';
    const previous = out.at(-1);
    if (previous?.kind === 'text') {
      out.pop();
      before = trimEndSpaces(previous.text);
    }
    const next = rest[end];
    if (next?.kind === 'text') {
      let start = 0;
      while (next.text[start] === ' ') start += 1;
      let stop = start;
      while (stop < next.text.length && MOVED_PUNCTUATION.includes(next.text[stop])) stop += 1;
      if (stop > start) {
        before += next.text.slice(start, stop);
        rest[end] = { kind: 'text', text: next.text.slice(stop) };
      }
    }
    if (before !== '') out.push({ kind: 'text', text: before });
    out.push(...rest.slice(i, end));
    i = end;
  }
  return out.filter((piece) => piece.kind !== 'text' || piece.text !== '');
}

function trimEndSpaces(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === ' ') end -= 1;
  return text.slice(0, end);
}

const MAX_DIGITS = 4;

function isDigit(char: string | undefined): boolean {
  return char !== undefined && char >= '0' && char <= '9';
}

// Reads from the `[` at `start`. Stops at the first character that cannot belong to a marker, so the scans
// started from different `[` never overlap and the whole parse stays linear in the text's length.
function readMarker(text: string, start: number, citationCount: number): { numbers: number[]; end: number } | null {
  const numbers: number[] = [];
  let i = start + 1;
  for (;;) {
    let digits = 0;
    let value = 0;
    while (digits < MAX_DIGITS && isDigit(text[i])) {
      value = value * 10 + (text.charCodeAt(i) - 48);
      digits += 1;
      i += 1;
    }
    if (digits === 0 || isDigit(text[i])) return null;
    if (value < 1 || value > citationCount) return null;
    numbers.push(value);
    if (text[i] === ']') return { numbers, end: i + 1 };
    if (text[i] !== ',') return null;
    i += 1;
    while (text[i] === ' ') i += 1;
  }
}

/** "p. 4", or "pp. 4–5" (en dash) for a passage over several pages; null for a text document's passage. */
export function pageLabel(pageStart: number | null | undefined, pageEnd: number | null | undefined): string | null {
  if (typeof pageStart !== 'number') return null;
  if (typeof pageEnd === 'number' && pageEnd > pageStart) return `pp. ${pageStart}\u2013${pageEnd}`;
  return `p. ${pageStart}`;
}
