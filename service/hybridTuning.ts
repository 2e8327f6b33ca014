// The hybrid query's tunable knobs, their defaults and their parsers: what a search engineer can set (one env var
// each in config.ts, one value of a list in `kbqa eval --sweep`). A leaf: it imports nothing, so config.ts and
// search/ both import it without an arrow between them. Rendering the knobs into queries and pipelines is
// search/fusion.ts.

export const FUSION_TECHNIQUES = ['rrf', 'min_max', 'l2'] as const;
/**
 * rrf: neural-search's score-ranker-processor, score = Σ weight / (rank_constant + rank) (the contract's default).
 * min_max / l2: its normalization-processor, each side's scores normalized so, then combined by a weighted
 * arithmetic mean.
 */
export type FusionTechnique = (typeof FUSION_TECHNIQUES)[number];

/** The chunk fields BM25 can search: the analysed text fields of the index template (`.standard`: no stemming, no stopwords). */
export const BM25_FIELD_NAMES = ['text', 'title', 'text.standard', 'title.standard'] as const;

export interface Bm25Field {
  name: (typeof BM25_FIELD_NAMES)[number];
  /** multi_match's per-field boost (1: as is). */
  boost: number;
}

export interface HybridTuning {
  fusion: FusionTechnique;
  /** RRF's k; unused by min_max and l2. */
  rankConstant: number;
  /** [bm25, knn]; neural-search wants them in [0, 1] summing to 1 (± 0.01), for every technique. */
  weights: [number, number];
  /** Hits the BM25 side keeps (pagination_depth, per shard); null: the request's depth (max(depth, size)). */
  bm25Depth: number | null;
  /** Hits the k-NN side keeps (k, per shard, at most bm25Depth); null: the request's depth (max(depth, size)). */
  knnDepth: number | null;
  /** Fields BM25 searches, with boosts. */
  bm25Fields: Bm25Field[];
  /**
   * The k-NN side's sentence-level term: a chunk's dense score is its own k-NN score plus this times its best
   * sentence's (search/sentenceVectors.ts SENTENCE_SCORE); 0 is the chunk's k-NN score alone.
   */
  sentenceWeight: number;
}

/**
 * The defaults, tuned on SciFact's dev split only (docs/search-engineering.md, "Tuning the fusion"): RRF with k 5 and weights 0.3 : 0.7,
 * each side the request's depth, text and title, sentence weight 0.5 (with 510-token chunks and the mean question
 * vector: dev nDCG@10 0.764 through the API, against 0.730 for v1's settings; test 0.743).
 */
export const DEFAULT_HYBRID_TUNING: HybridTuning = {
  fusion: 'rrf',
  rankConstant: 5,
  weights: [0.3, 0.7],
  bm25Depth: null,
  knnDepth: null,
  bm25Fields: [
    { name: 'text', boost: 1 },
    { name: 'title', boost: 1 },
  ],
  sentenceWeight: 0.5,
};

/** A sentence weight's bounds: 0 turns the sentence term off; past a few, the chunk's own score hardly counts. */
export const SENTENCE_WEIGHT_RANGE = { min: 0, max: 10 } as const;

/** neural-search's bounds (RRFNormalizationTechnique) and OpenSearch's index.max_result_window default. */
export const RANK_CONSTANT_RANGE = { min: 1, max: 10_000 } as const;
export const DEPTH_RANGE = { min: 1, max: 10_000 } as const;

export function describeTuning(tuning: HybridTuning): string {
  const fusion = tuning.fusion === 'rrf' ? `rrf k=${tuning.rankConstant}` : tuning.fusion;
  const depth = (value: number | null) => (value === null ? 'req' : String(value));
  return `${fusion} w=${tuning.weights.join(':')} depth=${depth(tuning.bm25Depth)}/${depth(tuning.knnDepth)} fields=${formatBm25Fields(tuning.bm25Fields, ':')} sentences=${tuning.sentenceWeight}`;
}

export function formatBm25Fields(fields: Bm25Field[], separator = ','): string {
  return fields.map((field) => (field.boost === 1 ? field.name : `${field.name}^${field.boost}`)).join(separator);
}

// Parsing and validation, shared by config.ts (one env var each) and `kbqa eval --sweep` (one value of a list).
// Each returns the value or a problem sentence naming what is wrong; the caller says which knob it was.

export type Parsed<T> = { value: T } | { problem: string };

export function parseFusion(text: string): Parsed<FusionTechnique> {
  const value = text.trim();
  return (FUSION_TECHNIQUES as readonly string[]).includes(value)
    ? { value: value as FusionTechnique }
    : { problem: `"${value}" is not a fusion technique (${FUSION_TECHNIQUES.join(', ')})` };
}

/** `0.3,0.7` (config) or `0.3:0.7` (sweep): two numbers in [0, 1] summing to 1. */
export function parseWeights(text: string, separator: ',' | ':'): Parsed<[number, number]> {
  const parts = text.split(separator).map((part) => part.trim());
  const numbers = parts.map((part) => (part === '' ? Number.NaN : Number(part)));
  if (numbers.length !== 2 || numbers.some((weight) => !Number.isFinite(weight) || weight < 0 || weight > 1)) {
    return { problem: `"${text}" is not two weights [bm25${separator}knn], each from 0 to 1` };
  }
  // neural-search's own tolerance (ScoreCombinationUtil: 0.01); refused there at start-up or on every query otherwise.
  if (Math.abs(numbers[0] + numbers[1] - 1) > 0.01)
    return { problem: `weights "${text}" must sum to 1 (neural-search refuses others)` };
  return { value: [numbers[0], numbers[1]] };
}

export function parseInteger(text: string, range: { min: number; max: number }): Parsed<number> {
  const parsed = parseNumber(text, range);
  if ('problem' in parsed || !Number.isInteger(parsed.value))
    return { problem: `"${text}" is not a whole number from ${range.min} to ${range.max}` };
  return parsed;
}

export function parseNumber(text: string, range: { min: number; max: number }): Parsed<number> {
  const value = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(value) || value < range.min || value > range.max) {
    return { problem: `"${text}" is not a number from ${range.min} to ${range.max}` };
  }
  return { value };
}

/** `text,title^2` (config) or `text^1:title^2` (sweep): known fields, each once, boosts above 0. */
export function parseBm25Fields(text: string, separator: ',' | ':'): Parsed<Bm25Field[]> {
  const fields: Bm25Field[] = [];
  for (const raw of text.split(separator)) {
    const item = raw.trim();
    if (item === '') continue;
    const caret = item.indexOf('^');
    const name = caret === -1 ? item : item.slice(0, caret);
    const boost = caret === -1 ? 1 : Number(item.slice(caret + 1));
    if (!(BM25_FIELD_NAMES as readonly string[]).includes(name)) {
      return { problem: `"${name}" is not a field BM25 can search (${BM25_FIELD_NAMES.join(', ')})` };
    }
    if (
      !Number.isFinite(boost) ||
      boost <= 0 ||
      boost > 1000 ||
      (caret !== -1 && item.slice(caret + 1).trim() === '')
    ) {
      return { problem: `"${item}": a boost is a number above 0 and at most 1000 (field^boost)` };
    }
    if (fields.some((field) => field.name === name)) return { problem: `"${name}" is listed twice` };
    fields.push({ name: name as Bm25Field['name'], boost });
  }
  if (fields.length === 0) return { problem: 'at least one field is needed' };
  return { value: fields };
}

/** What is wrong with a tuning as a whole (each part was parsed on its own): the k-NN side cannot outreach the BM25 side. */
export function tuningProblem(tuning: Pick<HybridTuning, 'bm25Depth' | 'knnDepth'>): string | null {
  if (tuning.knnDepth !== null && tuning.bm25Depth !== null && tuning.knnDepth > tuning.bm25Depth) {
    return (
      `the k-NN side's depth (${tuning.knnDepth}) exceeds the BM25 side's (${tuning.bm25Depth}): the hybrid query's ` +
      'pagination_depth (the BM25 depth) caps every sub-query, so the k-NN side would be cut to it'
    );
  }
  return null;
}
