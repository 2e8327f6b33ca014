/**
 * Built-in, no-network "answer model": picks the few sentences of the top passages that
 * best answer the question and returns them with passage markers, e.g.
 *   "Cats sleep 16 hours a day [1]. Kittens sleep more [2]."
 * or returns nothing at all (the service then answers that the KBs hold nothing on it) when no
 * sentence answers the question.
 *
 * Passage text is treated purely as data: sentences are copied verbatim (whitespace and
 * markdown bullets/headings tidied), never interpreted. The sentences are the units of the one
 * segmentation (text/sentences.ts) that ingestion embeds too: whole sentences, list items, table rows.
 *
 * No model runs here: each sentence's vector is the one stored at ingestion (rag segmentSentences: one per unit of a
 * passage of several, the first 48; a passage of one unit is its own passage vector), handed in with the passage.
 *
 * Scoring per candidate sentence (the MAX_CANDIDATES the terms short-list first; the similarity then decides):
 *   SIM_WEIGHT * rescaled similarity: SENTENCE_SHARE its own vector's cosine, the rest its passage's (the stored
 *   sentence vector is the sentence alone, without the title and headings that place it)
 * + OVERLAP_WEIGHT * coverage: the weighted share of the question's terms the sentence holds (title terms: half),
 *   each term weighted by how few of the retrieved passages hold it (one in every passage, such as the town's
 *   name, counts TERM_WEIGHT_FLOOR; one in none counts 1: it is what the question is about that the KB may lack)
 * + TYPE_WEIGHT when the question asks for a kind of fact and the sentence fits it (answerCues.ts: a number that
 *   counts for "how many X", a length for "how far", a time or date for "when", the day or role it names …; and
 *   answerFocus.ts: the question's names, its numbers, someone for "who"),
 *   − UNTYPED_PENALTY when it does not fit
 * + small bonuses for the passage's rank and the sentence's position in its passage.
 * The decision to answer rests on the best sentence alone (answerDecision): it must fit the question, and its
 * coverage and similarity together (support) must reach minSupport (KBQA_ANSWER_MIN_SUPPORT). The rules and their
 * figures: docs/architecture.md, "The extractive answerer's decision". Then up to maxSentences-1 more if they score at least
 * MIN_RELATIVE_SCORE of the best and are not near-duplicates.
 * Deterministic: stable sorts with explicit tie-breakers, no randomness.
 * Over 400 lines: one pass (candidates, scores, the decision) over per-query state; its cues are in
 * answerCues.ts and answerFocus.ts.
 */
import { splitSentences } from '../text/sentences.ts';
import { answerKinds, fitsConstraints, holdsAnswerKind } from './answerCues.ts';
import { fitsFocus, questionFocus, shareHolding } from './answerFocus.ts';
import { contentTerms, stem, words } from './terms.ts';

/** n is the 1-based passage number; similarity = cosine(question, passage) in [0,1]. */
export interface AnswerPassage {
  n: number;
  text: string;
  title: string;
  similarity: number;
  /** The headings above the passage in its document (context its sentences may omit). */
  headings?: string[];
  /** The vectors stored at ingestion (see the top of this file); without them a sentence has its passage's similarity. */
  vectors?: { passage: ArrayLike<number>; sentences: ArrayLike<number>[] };
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
  /** The best sentence's least support to answer (default SUPPORT_THRESHOLD; KBQA_ANSWER_MIN_SUPPORT). */
  minSupport?: number;
}

const DEFAULT_MAX_SENTENCES = 3;
const DEFAULT_MAX_PASSAGES = 3;
/** Sentences the terms short-list before their similarity counts. */
const MAX_CANDIDATES = 8;

const MIN_WORDS = 3;

const SIM_WEIGHT = 0.6;
/** A sentence's similarity: this share its own vector's cosine, the rest its passage's. */
const SENTENCE_SHARE = 0.35;
const OVERLAP_WEIGHT = 0.4;
/** Added when the question asks for a kind of fact and the sentence holds one; taken off when it holds none. */
const TYPE_WEIGHT = 0.1;
const UNTYPED_PENALTY = 0.3;
/** bge cosines are compressed: unrelated text sits near 0.3-0.5, strong matches 0.75+. */
const SIM_FLOOR = 0.5;
const SIM_CEIL = 0.9;
const RANK_BONUS = 0.05;
/** Share of a question term's weight credited when only the passage title contains it. */
const TITLE_TERM_CREDIT = 0.5;
/** The weight of a question term every retrieved passage holds (one none holds weighs 1). */
const TERM_WEIGHT_FLOOR = 0.2;
const LEAD_SENTENCE_BONUS = 0.02;
/** Extra sentences must score at least this fraction of the best sentence's score. */
const MIN_RELATIVE_SCORE = 0.75;
/** Drop a sentence that is this similar (cosine) to one already chosen. */
const REDUNDANT_COSINE = 0.95;
const REDUNDANT_JACCARD = 0.8;
/** The best sentence's support (answerDecision) below which the answer is "nothing" (KBQA_ANSWER_MIN_SUPPORT's default). */
export const SUPPORT_THRESHOLD = 0.25;
const SUPPORT_SIM_WEIGHT = 0.5;

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
  /** Its passage's title and headings, as text. */
  context: string;
  /** Content terms of its whole passage: text, title and headings. */
  passageTerms: Set<string>;
  /** Tier 0 = regular sentence; 1 = a fragment (under MIN_WORDS words), only used when no tier-0 sentence exists. */
  tier: 0 | 1;
  /** Its stored vector (null when the passage came without the vectors, or past the 48 embedded). */
  vector: ArrayLike<number> | null;
  similarity: number;
  overlap: number;
  /** Whether it fits the question (answerCues.ts): the kind of fact asked for, the day, role or name it names. */
  fits: boolean;
  score: number;
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

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let s = 0;
  for (let i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/** The answerer's cosine: divided by both norms, so a stored int8 vector (a multiple of the vector) needs no scale. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const norms = Math.sqrt(dot(a, a) * dot(b, b));
  return norms === 0 ? 0 : dot(a, b) / norms;
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

/** A unit's identity among the passages: its letters and digits, lower-cased. */
function unitKey(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
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
  /** The weighted share of the question's terms it holds. */
  overlap: number;
  /** cosine(sentence, question) from its stored vector (its passage's similarity without one). */
  similarity: number;
  /** Whether it fits the question: the kind of fact asked for, the day, role or name it names (answerCues.ts). */
  fits: boolean;
  score: number;
}

/** Units ingestion embeds per passage at most (rag/index.ts MAX_SENTENCES_PER_SEGMENT): the first ones. */
const STORED_UNITS = 48;

/** The stored vector of each unit of a passage, when the vectors fit the units (else none: another segmentation made them). */
function unitVectors(passage: AnswerPassage, units: number): Array<ArrayLike<number> | null> {
  const stored = passage.vectors;
  const none = () => Array.from({ length: units }, () => null);
  if (!stored) return none();
  if (units === 1) return [stored.passage];
  if (stored.sentences.length !== Math.min(units, STORED_UNITS)) return none();
  return Array.from({ length: units }, (_, index) => stored.sentences[index] ?? null);
}

/**
 * Each question term's weight: 1 − (1 − TERM_WEIGHT_FLOOR) × (the share of the retrieved passages holding it, in
 * their text or title). Every passage retrieved is counted, not only those answered from.
 */
function termWeights(questionTerms: Set<string>, holders: Array<Set<string>>): Map<string, number> {
  const weights = new Map<string, number>();
  for (const term of questionTerms) weights.set(term, 1 - (1 - TERM_WEIGHT_FLOOR) * shareHolding(term, holders));
  return weights;
}

/** Content terms of a passage's text, title and headings. */
function passageTerms(passage: AnswerPassage): Set<string> {
  return new Set([
    ...contentTerms(passage.text ?? ''),
    ...contentTerms(passage.title ?? ''),
    ...contentTerms((passage.headings ?? []).join(' ')),
  ]);
}

function rankCandidates(input: ExtractiveAnswerInput, options: ExtractiveAnswerOptions): Candidate[] {
  const maxPassages = Math.max(1, Math.floor(options.maxPassages ?? DEFAULT_MAX_PASSAGES));
  const allPassages = input.passages ?? [];
  const passages = allPassages.slice(0, maxPassages);
  if (passages.length === 0) return [];
  const q = input.questionEmbedding;
  const haveQuestion = Array.isArray(q) && q.length > 0;
  // Each retrieved passage's terms, read once: the considered passages (a prefix of them) and the term weights share them.
  const holders = allPassages.map(passageTerms);

  // 1. Candidate sentences with their stored vectors, de-duplicated across (overlapping) passages.
  const all: Candidate[] = [];
  const seen = new Set<string>();
  passages.forEach((p, rank) => {
    const title = (p.title ?? '').replace(/\s+/g, ' ').trim();
    const titleTerms = contentTerms(title);
    const context = [title, ...(p.headings ?? [])].join(' ');
    const terms = holders[rank];
    const units = splitSentences(p.text ?? '');
    const vectors = unitVectors(p, units.length);
    // A heading, a table's header row, or a line that is the passage's title or one of its headings (a section with
    // nothing under its heading is its heading's text) places the sentences under it: it is never an answer itself.
    const placing = new Set([title, ...(p.headings ?? [])].map(unitKey));
    units.forEach((s, position) => {
      const key = unitKey(s.text);
      if (!key || seen.has(key) || s.heading || placing.has(key)) return;
      seen.add(key);
      const tier = words(s.text).length < MIN_WORDS ? 1 : 0;
      const vector = vectors[position];
      // A sentence vector is the sentence alone; its passage's (title and headings as context) says where it stands.
      const similarity =
        vector && haveQuestion
          ? SENTENCE_SHARE * cosine(vector, q) + (1 - SENTENCE_SHARE) * (p.similarity ?? 0)
          : (p.similarity ?? 0);
      all.push({
        text: s.text,
        rank,
        n: p.n,
        position,
        terms: contentTerms(s.text),
        titleTerms,
        context,
        passageTerms: terms,
        tier,
        vector,
        similarity,
        overlap: 0,
        fits: true,
        score: 0,
      });
    });
  });
  if (all.length === 0) return [];
  const regular = all.filter((c) => c.tier === 0);
  const pool = regular.length > 0 ? regular : all;

  // 2. Coverage of the question's terms, weighted by how distinctive each is among the retrieved passages.
  const cue = answerKinds(input.question ?? '');
  const qTerms = new Set([...contentTerms(input.question ?? '')].filter((term) => !cue.cueWords.has(term)));
  const weights = termWeights(qTerms, holders);
  // What the question is about (answerFocus.ts): its names ("Quarry Road") that most retrieved passages lack, its
  // numbers, someone for "who".
  const focus = questionFocus(input.question ?? '', holders);
  // What "how many" counts, as a term: a passage naming it does not count it with a number of something else.
  const countedTerm = cue.counted.length > 0 ? stem(cue.counted[cue.counted.length - 1]) : null;
  let total = 0;
  for (const weight of weights.values()) total += weight;
  for (const c of pool) {
    let hit = 0;
    for (const [t, weight] of weights) {
      if (c.terms.has(t)) hit += weight;
      else if (c.titleTerms.has(t)) hit += TITLE_TERM_CREDIT * weight;
    }
    c.overlap = total > 0 ? hit / total : 0;
    c.fits =
      holdsAnswerKind(c.text, cue.kinds) &&
      fitsConstraints(c.text, cue, c.context, countedTerm !== null && c.passageTerms.has(countedTerm)) &&
      fitsFocus(c.text, c.context, c.passageTerms, focus);
    c.score =
      OVERLAP_WEIGHT * c.overlap +
      (c.fits ? (cue.kinds.size === 0 ? 0 : TYPE_WEIGHT) : -UNTYPED_PENALTY) +
      rankBonus(c.rank, passages.length) +
      (c.position === 0 ? LEAD_SENTENCE_BONUS : 0);
  }
  // 3. The similarity decides among the short list the terms chose: a sentence's own vector, without its passage's
  //    title and headings, is too weak a signal to let a sentence sharing no term win.
  const shortlist = [...pool].sort(byScore).slice(0, MAX_CANDIDATES);
  for (const c of shortlist) c.score += SIM_WEIGHT * rescaleSimilarity(c.similarity);
  return shortlist.sort(byScore); // best first
}

/** How well a sentence supports an answer: its coverage of the question's terms and its similarity, blended. */
export function support(sentence: Pick<ScoredSentence, 'overlap' | 'similarity'>): number {
  return (1 - SUPPORT_SIM_WEIGHT) * sentence.overlap + SUPPORT_SIM_WEIGHT * rescaleSimilarity(sentence.similarity);
}

/**
 * Whether the best sentence answers: it fits the question (a number that counts for "how many", the day it names …),
 * and its support reaches SUPPORT_THRESHOLD. Otherwise the answer is "nothing".
 */
export function answerDecision(
  best: Pick<ScoredSentence, 'overlap' | 'similarity' | 'fits'>,
  minSupport = SUPPORT_THRESHOLD,
): boolean {
  return best.fits && support(best) >= minSupport;
}

/** Every candidate with its scores, best first (for diagnostics and tuning). */
export function scoreAnswerSentences(
  input: ExtractiveAnswerInput,
  options: ExtractiveAnswerOptions = {},
): ScoredSentence[] {
  return rankCandidates(input, options).map(({ text, n, rank, position, overlap, similarity, fits, score }) => ({
    text,
    n,
    rank,
    position,
    overlap,
    similarity,
    fits,
    score,
  }));
}

/** The sentences of the answer, in reading order; none when the best sentence does not answer (answerDecision). */
export function chooseAnswerSentences(
  input: ExtractiveAnswerInput,
  options: ExtractiveAnswerOptions = {},
): Array<{ text: string; n: number }> {
  const maxSentences = Math.max(1, Math.floor(options.maxSentences ?? DEFAULT_MAX_SENTENCES));
  const ranked = rankCandidates(input, options);
  if (ranked.length === 0 || !answerDecision(ranked[0], options.minSupport)) return [];

  // Best sentence, plus close runners-up that are not redundant.
  const best = ranked[0];
  const chosen: Candidate[] = [best];
  for (const c of ranked.slice(1)) {
    if (chosen.length >= maxSentences) break;
    if (c.score < best.score * MIN_RELATIVE_SCORE) break;
    const redundant = chosen.some(
      (o) =>
        (c.vector && o.vector && cosine(c.vector, o.vector) >= REDUNDANT_COSINE) ||
        jaccard(c.terms, o.terms) >= REDUNDANT_JACCARD,
    );
    if (!redundant) chosen.push(c);
  }
  // Passage order (then sentence order).
  chosen.sort((a, b) => a.rank - b.rank || a.position - b.position);
  return chosen.map(({ text, n }) => ({ text, n }));
}

/**
 * The answer sentence by sentence: the sentences are chosen together, then yielded in reading order, each with its
 * marker, each after the first led by its separating space. `signal` is checked before and between sentences.
 */
export async function* streamExtractiveAnswer(
  input: ExtractiveAnswerInput,
  options: ExtractiveAnswerOptions = {},
  signal?: AbortSignal,
): AsyncGenerator<string> {
  signal?.throwIfAborted();
  for (const [index, c] of chooseAnswerSentences(input, options).entries()) {
    signal?.throwIfAborted();
    yield `${index > 0 ? ' ' : ''}${withMarker(c.text, c.n)}`;
  }
}

/** The whole answer: the sentences of streamExtractiveAnswer, joined ("" when nothing answers). */
export function composeExtractiveAnswer(input: ExtractiveAnswerInput, options: ExtractiveAnswerOptions = {}): string {
  return chooseAnswerSentences(input, options)
    .map((c, index) => `${index > 0 ? ' ' : ''}${withMarker(c.text, c.n)}`)
    .join('');
}
