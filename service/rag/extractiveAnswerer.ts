/**
 * Built-in, no-network "answer model": picks the few sentences of the top passages that
 * best answer the question and returns them with passage markers, e.g.
 *   "Cats sleep 16 hours a day [1]. Kittens sleep more [2]."
 *
 * Passage text is treated purely as data: sentences are copied verbatim (whitespace and
 * markdown bullets/headings tidied), never interpreted. The sentences are the units of the one
 * segmentation (text/sentences.ts) that ingestion embeds too: whole sentences, list items, table rows.
 *
 * Scoring per candidate sentence:
 *   SIM_WEIGHT * rescaled cosine(sentence, question)   (one embedDocuments call, sentence
 *                                                       prefixed with its passage title)
 * + OVERLAP_WEIGHT * share of question terms present in the sentence (title terms: half)
 * + small bonuses for the passage's rank and the sentence's position in its passage.
 * The best sentence is always kept; up to maxSentences-1 more if they score at least
 * MIN_RELATIVE_SCORE of the best and are not near-duplicates.
 * Deterministic: stable sorts with explicit tie-breakers, no randomness.
 *
 * Latency: the only model call is one embedDocuments over <= maxCandidates (4) short sentences.
 * The service passes `embedder.withBatchMode('padded', 8, 64)` (same session): one padded inference
 * call with every sentence cut at 48 tokens (rag/index.ts).
 */
import { splitSentences } from '../text/sentences.ts';
import { contentTerms, words } from './terms.ts';

/** n is the 1-based passage number; similarity = cosine(question, passage) in [0,1]. */
export interface AnswerPassage {
  n: number;
  text: string;
  title: string;
  similarity: number;
}

export interface ExtractiveAnswerInput {
  question: string;
  questionEmbedding: number[];
  passages: AnswerPassage[];
}

export interface ExtractiveAnswerOptions {
  /** Sentences in the answer (default 3). */
  maxSentences?: number;
  /** Leading passages considered (default 3). */
  maxPassages?: number;
  /** Candidate sentences embedded (default 4, in one embedDocuments call). */
  maxCandidates?: number;
}

export interface SentenceEmbedder {
  embedDocuments(texts: string[]): Promise<number[][]>;
}

const DEFAULT_MAX_SENTENCES = 3;
const DEFAULT_MAX_PASSAGES = 3;
const DEFAULT_MAX_CANDIDATES = 4;

const MIN_WORDS = 3;

const SIM_WEIGHT = 0.6;
const OVERLAP_WEIGHT = 0.4;
/** bge cosines are compressed: unrelated text sits near 0.3-0.5, strong matches 0.75+. */
const SIM_FLOOR = 0.5;
const SIM_CEIL = 0.9;
const RANK_BONUS = 0.05;
/** Share of a question term's weight credited when only the passage title contains it. */
const TITLE_TERM_CREDIT = 0.5;
const MAX_TITLE_CHARS = 120;
const LEAD_SENTENCE_BONUS = 0.02;
/** Extra sentences must score at least this fraction of the best sentence's score. */
const MIN_RELATIVE_SCORE = 0.75;
/** Drop a sentence that is this similar (cosine) to one already chosen. */
const REDUNDANT_COSINE = 0.95;
const REDUNDANT_JACCARD = 0.8;

interface Candidate {
  /** Sentence text as it will appear in the answer (before the marker). */
  text: string;
  /** Passage index in the considered slice (0 = best). */
  rank: number;
  /** Passage marker number. */
  n: number;
  /** Sentence index within its passage. */
  position: number;
  terms: Set<string>;
  /** Content terms of the passage title (context the sentence itself may omit). */
  titleTerms: Set<string>;
  /** Passage title, used as context when embedding the sentence. */
  title: string;
  /** Tier 0 = regular sentence; 1 = fragment/heading, only used when no tier-0 sentence exists. */
  tier: 0 | 1;
  overlap: number;
  score: number;
  similarity?: number;
  vector?: number[];
}

// ---------------------------------------------------------------------------------------
// Linear text helpers. Passage text is user input, so every pattern here must run in time linear in it. A pattern
// that ends a quantified run at `$` (or at a character that may never come) and is tried from every start position,
// like /\s+$/ or /(\S+)$/, rescans the same run from each of its characters: quadratic in the run's length. Trailing
// runs are therefore found by walking back from the end, and run-matching patterns start only where a run starts.

const isSpace = (char: string) => /\s/.test(char);

/** Start of the run of characters satisfying `inRun` that ends at `end` (scanning no further back than `floor`). */
function trailingRunStart(text: string, inRun: (char: string) => boolean, end = text.length, floor = 0): number {
  let index = end;
  while (index > floor && inRun(text[index - 1])) index -= 1;
  return index;
}

// ---------------------------------------------------------------------------------------
// Scoring helpers

function dot(a: number[], b: number[]): number {
  const n = Math.min(a.length, b.length);
  let s = 0;
  for (let i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

function rescaleSimilarity(cos: number): number {
  const v = (cos - SIM_FLOOR) / (SIM_CEIL - SIM_FLOOR);
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const t of a) if (b.has(t)) inter++;
  return inter / (a.size + b.size - inter);
}

function rankBonus(rank: number, passages: number): number {
  return passages <= 1 ? RANK_BONUS : RANK_BONUS * (1 - rank / passages);
}

/** The sentence as embedded: prefixed with its passage title for context, unless redundant. */
function embeddingText(c: Candidate): string {
  const title = c.title.length > MAX_TITLE_CHARS ? c.title.slice(0, MAX_TITLE_CHARS) : c.title;
  if (!title || c.text.toLowerCase().includes(title.toLowerCase())) return c.text;
  return `${title}: ${c.text}`;
}

/** Orders by score desc, then passage rank, then position: total and deterministic. */
function byScore(a: Candidate, b: Candidate): number {
  return b.score - a.score || a.rank - b.rank || a.position - b.position;
}

/** "Cats sleep a lot." → "Cats sleep a lot [1]." ; "Is it safe?" → "Is it safe [2]?" */
function withMarker(sentence: string, n: number): string {
  // The terminal punctuation run, found from the end (/^(.*?)([.!?…]+)$/s retried the run at every character).
  const terminal = trailingRunStart(sentence, (char) => '.!?…'.includes(char));
  const body = sentence.slice(0, terminal);
  if (terminal < sentence.length && body.trim()) return `${body.trimEnd()} [${n}]${sentence.slice(terminal)}`;
  // Punctuation inside a closing quote/bracket: 'He said "hi."' → 'He said "hi." [1]'
  if (/[.!?…]["'”’)\]]+$/.test(sentence)) return `${sentence} [${n}]`;
  // No terminal punctuation (list items, headings): drop trailing separators, as trimEnd drops whitespace.
  const separators = trailingRunStart(sentence, (char) => ',;:'.includes(char) || isSpace(char));
  return `${sentence.slice(0, separators)} [${n}].`;
}

// ---------------------------------------------------------------------------------------

export interface ScoredSentence {
  text: string;
  /** Passage marker number. */
  n: number;
  /** Passage index among the considered passages (0 = best). */
  rank: number;
  /** Sentence index within its passage. */
  position: number;
  overlap: number;
  /** cosine(sentence, question), when the sentence was embedded. */
  similarity?: number;
  score: number;
}

async function shortlistSentences(
  input: ExtractiveAnswerInput,
  embedder: SentenceEmbedder,
  options: ExtractiveAnswerOptions,
): Promise<Candidate[]> {
  const maxPassages = Math.max(1, Math.floor(options.maxPassages ?? DEFAULT_MAX_PASSAGES));
  const maxCandidates = Math.max(1, Math.floor(options.maxCandidates ?? DEFAULT_MAX_CANDIDATES));

  const passages = (input.passages ?? []).slice(0, maxPassages);
  if (passages.length === 0) return [];

  // 1. Candidate sentences, de-duplicated across (overlapping) passages.
  const all: Candidate[] = [];
  const seen = new Set<string>();
  passages.forEach((p, rank) => {
    const title = (p.title ?? '').replace(/\s+/g, ' ').trim();
    const titleTerms = contentTerms(title);
    splitSentences(p.text ?? '').forEach((s, position) => {
      const key = s.text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
      if (!key || seen.has(key)) return;
      seen.add(key);
      const tier = s.heading || words(s.text).length < MIN_WORDS ? 1 : 0;
      const terms = contentTerms(s.text);
      all.push({ text: s.text, rank, n: p.n, position, terms, titleTerms, title, tier, overlap: 0, score: 0 });
    });
  });
  if (all.length === 0) return [];
  const regular = all.filter((c) => c.tier === 0);
  const pool = regular.length > 0 ? regular : all;

  // 2. Term overlap: share of the question's content terms found in the sentence (half
  //    credit when only the passage title has the term). Uniform weights on purpose: an
  //    idf computed over the retrieved passages would discount the topic term itself,
  //    which is exactly the word that tells "cats sleep 16 h" from "dogs sleep 12 h".
  const qTerms = contentTerms(input.question ?? '');
  for (const c of pool) {
    let hit = 0;
    for (const t of qTerms) {
      if (c.terms.has(t)) hit += 1;
      else if (c.titleTerms.has(t)) hit += TITLE_TERM_CREDIT;
    }
    c.overlap = qTerms.size > 0 ? hit / qTerms.size : 0;
    c.score =
      OVERLAP_WEIGHT * c.overlap +
      rankBonus(c.rank, passages.length) +
      (c.position === 0 ? LEAD_SENTENCE_BONUS : 0);
  }

  // 3. Pre-select by overlap + rank; embed the short list in one call (none for a single candidate).
  const shortlist = [...pool].sort(byScore).slice(0, maxCandidates);
  const q = input.questionEmbedding;
  if (shortlist.length > 1 && Array.isArray(q) && q.length > 0) {
    const vectors = await embedder.embedDocuments(shortlist.map(embeddingText));
    shortlist.forEach((c, i) => {
      const v = vectors[i];
      if (!v) return;
      c.vector = v;
      c.similarity = dot(v, q);
      c.score += SIM_WEIGHT * rescaleSimilarity(c.similarity);
    });
  }
  return shortlist.sort(byScore); // best first
}

/** The embedded short list with its scores, best first (for diagnostics and tuning). */
export async function scoreAnswerSentences(
  input: ExtractiveAnswerInput,
  embedder: SentenceEmbedder,
  options: ExtractiveAnswerOptions = {},
): Promise<ScoredSentence[]> {
  const ranked = await shortlistSentences(input, embedder, options);
  return ranked.map(({ text, n, rank, position, overlap, similarity, score }) => ({
    text, n, rank, position, overlap, similarity, score,
  }));
}

/**
 * The answer sentence by sentence: the sentences are chosen together (the one embedding call is the only slow step),
 * then yielded in reading order, each with its marker, each after the first led by its separating space. `signal`
 * is checked before the embedding call and between sentences.
 */
export async function* streamExtractiveAnswer(
  input: ExtractiveAnswerInput,
  embedder: SentenceEmbedder,
  options: ExtractiveAnswerOptions = {},
  signal?: AbortSignal,
): AsyncGenerator<string> {
  signal?.throwIfAborted();
  const maxSentences = Math.max(1, Math.floor(options.maxSentences ?? DEFAULT_MAX_SENTENCES));
  const ranked = await shortlistSentences(input, embedder, options);
  if (ranked.length === 0) return;

  // 4. Best sentence, plus close runners-up that are not redundant.
  const best = ranked[0];
  const chosen: Candidate[] = [best];
  for (const c of ranked.slice(1)) {
    if (chosen.length >= maxSentences) break;
    if (c.score < best.score * MIN_RELATIVE_SCORE) break;
    const redundant = chosen.some(
      (o) =>
        (c.vector && o.vector && dot(c.vector, o.vector) >= REDUNDANT_COSINE) ||
        jaccard(c.terms, o.terms) >= REDUNDANT_JACCARD,
    );
    if (!redundant) chosen.push(c);
  }

  // 5. Passage order (then sentence order), each sentence with its marker.
  chosen.sort((a, b) => a.rank - b.rank || a.position - b.position);
  for (const [index, c] of chosen.entries()) {
    signal?.throwIfAborted();
    yield `${index > 0 ? ' ' : ''}${withMarker(c.text, c.n)}`;
  }
}

/** The whole answer: the sentences of streamExtractiveAnswer, joined. */
export async function composeExtractiveAnswer(
  input: ExtractiveAnswerInput,
  embedder: SentenceEmbedder,
  options: ExtractiveAnswerOptions = {},
): Promise<string> {
  let answer = '';
  for await (const sentence of streamExtractiveAnswer(input, embedder, options)) answer += sentence;
  return answer;
}
