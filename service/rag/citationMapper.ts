// The marker mapping of an answer (CitationMapper, mapCitations): an answer model's [n] markers renumbered in order of
// first use and mapped to citations, incrementally, as the answer arrives; and the types the answer chain
// (answerChain.ts) hands around: the passages' metadata, citations and answer pieces.
import type { Document } from '@langchain/core/documents';
import { SCANNED_HEADING } from '../extraction/pdfPages.ts';
import type { SentenceCounts } from './sentenceChecks.ts';

/** What the command hands the chain for each passage; `similarity` is the cosine to the question in [0, 1]. */
export interface PassageMetadata {
  chunk_id: string;
  document_id: string;
  knowledge_base_id: string;
  title: string;
  filename: string;
  heading_path: string[];
  chunk_index: number;
  /** PDF pages of the passage (null for text documents). */
  page_start: number | null;
  page_end: number | null;
  similarity: number;
  /**
   * The vectors stored at ingestion, in the question vector's space: the passage's, and one per sentence unit of a
   * passage of several (text/sentences.ts, as rag segmentSentences embedded them). The extractive answerer reads
   * these; nothing is embedded per query.
   */
  vectors?: { passage: ArrayLike<number>; sentences: ArrayLike<number>[] };
}

export interface Citation {
  document_id: string;
  title: string;
  snippet: string;
  similarity: number;
  page_start: number | null;
  page_end: number | null;
  /**
   * Where a person looks, beside the pages: "slide 3" for a deck, the section's heading path for the other files
   * and for markdown ("Sheet rows, rows 2–21", "Handbook › Spraying"); null when the pages say it, or nothing does.
   */
  location: string | null;
  /** The passage's page was read by OCR (a citation says "p. 3, scanned"). */
  scanned: boolean;
}

/** See Citation.location. A deck's chunks carry their slide in the page fields (extraction/pdfPages.ts). */
export function citationLocation(passage: {
  filename: string;
  heading_path: string[];
  page_start?: number | null;
}): string | null {
  if (passage.filename.toLowerCase().endsWith('.pptx') && passage.page_start != null)
    return `slide ${passage.page_start}`;
  if (passage.page_start != null || passage.heading_path.length === 0) return null;
  return passage.heading_path.join(' › ');
}

export interface ChainAnswer {
  answer: string;
  citations: Citation[];
  /** How its sentences came out of the citation check (absent when they were not checked: the extractive model). */
  sentences?: SentenceCounts;
}

/**
 * A piece of the answer as it is written: its text (markers already renumbered, blanks already tidied) and the
 * citations its markers introduce (those cited for the first time in it). The pieces of an answer, concatenated,
 * are its whole text and its whole citation list.
 */
export interface AnswerDelta {
  text: string;
  citations: Citation[];
  /** On the last piece of a checked answer: its sentences' counts (counted, never shown). */
  sentences?: SentenceCounts;
}

/**
 * Where the marker being read stands in `[` digits (blanks `,` blanks digits)* `]`: outside any marker; after the `[`
 * (a digit must follow); in a number (1 to 3 digits); in blanks after a number (a comma must follow); after a comma
 * and maybe blanks (a digit must follow).
 */
type MarkerState = 'outside' | 'open' | 'digits' | 'before-comma' | 'after-comma';

/** What trims at the ends of the answer: exactly String.prototype.trim's set. */
const isTrimmed = (char: string) => char.trim() === '';
const isBlank = (char: string) => char === ' ' || char === '\t';
const isDigit = (char: string) => char >= '0' && char <= '9';
const PUNCTUATION = '.,;:!?';
/** A marker's number has at most this many digits. */
const MAX_DIGITS = 3;

/**
 * Maps an answer's [n] markers to citations as the answer arrives, piece by piece:
 * - a marker is `[` n (, n)* `]` with n of 1 to 3 digits and blanks allowed around the commas; its numbers are
 *   renumbered in order of first use, numbers naming no passage are dropped (a marker naming none disappears), and a
 *   group becomes one [k] per distinct passage; anything else starting with `[` stays as it was written;
 * - blanks before punctuation go (a dropped marker leaves them), other runs of two or more blanks become one space,
 *   and whitespace at either end goes.
 * Only what may still change is held back: a marker not yet closed, whitespace not yet followed by anything (it may
 * end the answer, or precede punctuation), a high surrogate whose pair has not arrived. Each character is looked at
 * once, so the work is linear in the answer however it is split.
 */
export class CitationMapper {
  readonly #passages: Document<PassageMetadata>[];
  readonly #question: string;
  /** Passage numbers in order of first use: passage order[k-1] is cited as [k]. */
  readonly #order: number[] = [];
  #state: MarkerState = 'outside';
  /** The text of the marker being read, as written (emitted as it is if it turns out not to be one). */
  #marker: string[] = [];
  #numbers: string[] = [];
  #digits = '';
  /** Whitespace since the last character written, already tidied except for the run of blanks at its end. */
  #whitespace: string[] = [];
  #blanks = '';
  /** Whether anything but whitespace has been written (whitespace before it is trimmed). */
  #started = false;
  #heldSurrogate = '';
  /** Output of the current push. */
  #out: string[] = [];
  #introduced: Citation[] = [];

  constructor(passages: Document<PassageMetadata>[], question: string) {
    this.#passages = passages;
    this.#question = question;
  }

  /** The passage number (1-based) that the answer's renumbered [k] cites, or null when no [k] was written. */
  passageNumber(k: number): number | null {
    return this.#order[k - 1] ?? null;
  }

  /** Feeds the next piece of raw answer; returns what can be written now and the citations it introduces. */
  push(piece: string): AnswerDelta {
    for (let index = 0; index < piece.length; index += 1) this.#read(piece[index]);
    return this.#flush(false);
  }

  /** The answer is complete: an unclosed marker is text, trailing whitespace goes. */
  end(): AnswerDelta {
    if (this.#state !== 'outside') this.#literal();
    this.#whitespace = [];
    this.#blanks = '';
    return this.#flush(true);
  }

  #read(char: string): void {
    switch (this.#state) {
      case 'outside':
        if (char === '[') this.#begin(char);
        else this.#emit(char);
        return;
      case 'open':
      case 'after-comma':
        if (isDigit(char)) {
          this.#state = 'digits';
          this.#digits = char;
          this.#marker.push(char);
        } else if (this.#state === 'after-comma' && /\s/.test(char)) this.#marker.push(char);
        else this.#fail(char);
        return;
      case 'digits':
        if (isDigit(char) && this.#digits.length < MAX_DIGITS) {
          this.#digits += char;
          this.#marker.push(char);
        } else if (char === ']') {
          this.#numbers.push(this.#digits);
          this.#close();
        } else if (char === ',') {
          this.#numbers.push(this.#digits);
          this.#state = 'after-comma';
          this.#marker.push(char);
        } else if (/\s/.test(char)) {
          this.#numbers.push(this.#digits);
          this.#state = 'before-comma';
          this.#marker.push(char);
        } else this.#fail(char);
        return;
      case 'before-comma':
        if (char === ',') this.#state = 'after-comma';
        else if (!/\s/.test(char)) {
          this.#fail(char);
          return;
        }
        this.#marker.push(char);
        return;
    }
  }

  #begin(char: string): void {
    this.#state = 'open';
    this.#marker = [char];
    this.#numbers = [];
    this.#digits = '';
  }

  /**
   * Not a marker after all: what was read is text, and `char` is read afresh (it may open a marker). Nothing read
   * since the `[` can open one (digits, commas, whitespace), so this is where a regex retrying from the next
   * character would find its next match too.
   */
  #fail(char: string): void {
    this.#literal();
    this.#read(char);
  }

  #literal(): void {
    const text = this.#marker;
    this.#state = 'outside';
    this.#marker = [];
    for (const char of text) this.#emit(char);
  }

  #close(): void {
    this.#state = 'outside';
    this.#marker = [];
    const kept: number[] = [];
    for (const digits of this.#numbers) {
      const n = Number(digits);
      if (n < 1 || n > this.#passages.length) continue;
      if (!this.#order.includes(n)) {
        this.#order.push(n);
        this.#introduced.push(this.#citation(n));
      }
      const renumbered = this.#order.indexOf(n) + 1;
      if (!kept.includes(renumbered)) kept.push(renumbered);
    }
    for (const k of kept) for (const char of `[${k}]`) this.#emit(char);
  }

  #citation(n: number): Citation {
    const passage = this.#passages[n - 1];
    return {
      document_id: passage.metadata.document_id,
      title: passage.metadata.title,
      snippet: bestSnippet(passage.pageContent, this.#question),
      similarity: round(passage.metadata.similarity),
      page_start: passage.metadata.page_start ?? null,
      page_end: passage.metadata.page_end ?? null,
      location: citationLocation(passage.metadata),
      scanned: passage.metadata.heading_path.includes(SCANNED_HEADING),
    };
  }

  /** One character of text after marker mapping, through the whitespace tidying. */
  #emit(char: string): void {
    // Whitespace before the first character of text is trimmed: not even held.
    if (!this.#started && isTrimmed(char)) return;
    if (isBlank(char)) {
      this.#blanks += char;
      return;
    }
    if (isTrimmed(char)) {
      this.#endBlanks(false);
      this.#whitespace.push(char);
      return;
    }
    // Blanks right before punctuation go; a longer run elsewhere becomes one space; a single blank stays as written.
    this.#endBlanks(PUNCTUATION.includes(char));
    if (this.#started) this.#out.push(...this.#whitespace);
    this.#whitespace = [];
    this.#started = true;
    this.#out.push(char);
  }

  #endBlanks(beforePunctuation: boolean): void {
    if (this.#blanks.length === 0) return;
    if (!beforePunctuation) this.#whitespace.push(this.#blanks.length >= 2 ? ' ' : this.#blanks);
    this.#blanks = '';
  }

  #flush(final: boolean): AnswerDelta {
    let text = this.#heldSurrogate + this.#out.join('');
    this.#heldSurrogate = '';
    const last = text.charCodeAt(text.length - 1);
    if (!final && last >= 0xd800 && last <= 0xdbff) {
      this.#heldSurrogate = text.slice(-1);
      text = text.slice(0, -1);
    }
    const delta = { text, citations: this.#introduced };
    this.#out = [];
    this.#introduced = [];
    return delta;
  }
}

/**
 * Maps a whole answer's [n] markers to citations (the incremental mapper over one piece): markers are renumbered in
 * order of first use, markers naming no passage are dropped, and `citations` lists exactly the passages cited, so
 * [k] in the answer is citations[k-1].
 */
export function mapCitations(rawAnswer: string, passages: Document<PassageMetadata>[], question: string): ChainAnswer {
  const mapper = new CitationMapper(passages, question);
  const whole = mapper.push(rawAnswer);
  const rest = mapper.end();
  return { answer: whole.text + rest.text, citations: [...whole.citations, ...rest.citations] };
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

const SNIPPET_LIMIT = 500;
const WORD = /[\p{L}\p{N}]+/gu;

/** The passage's most relevant part, at most ~500 characters: the run of sentences sharing most words with the question. */
export function bestSnippet(text: string, question: string): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  if (clean.length <= SNIPPET_LIMIT) return clean;
  const questionWords = new Set((question.toLowerCase().match(WORD) ?? []).filter((word) => word.length > 2));
  const sentences = clean.split(/(?<=[.!?])\s+/);
  // Each sentence's words are matched once: a window can hold ~250 short sentences, and matching inside the window
  // loop would redo that work for every window a sentence falls in.
  const sentenceScores = sentences.map(
    (sentence) => (sentence.toLowerCase().match(WORD) ?? []).filter((word) => questionWords.has(word)).length,
  );
  let best = { score: -1, start: 0, end: 1 };
  for (let start = 0; start < sentences.length; start += 1) {
    let length = 0;
    let score = 0;
    for (let end = start; end < sentences.length; end += 1) {
      length += sentences[end].length + 1;
      if (length > SNIPPET_LIMIT && end > start) break;
      score += sentenceScores[end];
      if (score > best.score) best = { score, start, end: end + 1 };
    }
  }
  const snippet = sentences.slice(best.start, best.end).join(' ');
  return snippet.length <= SNIPPET_LIMIT ? snippet : `${snippet.slice(0, SNIPPET_LIMIT - 1).trimEnd()}…`;
}
