// The hybrid query's knobs as one typed value: how the two sides are fused (the search pipeline) and how each side
// is asked (the query). Pure: rendering and validation only; retrieval.ts sends what this renders, assets.ts installs
// the named pipelines from it, config.ts and `kbqa eval --sweep` parse into it.
//
// How deep each side looks (neural-search 3.x, HybridCollectorManager / HybridTopScoreDocCollector): a `hybrid`
// query's `pagination_depth` is the number of hits every sub-query keeps per shard, one priority queue per sub-query;
// the k-NN sub-query itself matches only its `k` nearest chunks per shard. So the BM25 side is exactly
// `pagination_depth` deep, and the k-NN side min(k, pagination_depth): one knob cannot make the BM25 side shallower
// than the k-NN side. Hence bm25Depth renders as pagination_depth, knnDepth as k, and a knnDepth above bm25Depth is
// refused by validation (config, sweeps) and cut to it at query time. Both are per shard: the fusion ranks each
// side's hits from all shards together (RRFNormalizationTechnique sorts them globally), so with S shards a side
// brings up to S × depth candidates.

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
   * sentence's (retrieval.ts SENTENCE_SCORE); 0 is the chunk's k-NN score alone.
   */
  sentenceWeight: number;
}

/**
 * The defaults, tuned on SciFact's dev split only (README "Tuning the fusion"): RRF with k 5 and weights 0.3 : 0.7,
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

/**
 * Clauses the BM25 side may build. OpenSearch builds one clause per analysed term and field searched and refuses a
 * query past indices.query.bool.max_clause_count (1024); half of it leaves room for the filters and the k-NN side.
 */
export const LEXICAL_CLAUSE_BUDGET = 512;

/** The most terms the BM25 side sends over `fieldCount` fields (256 over text and title). */
export function maxLexicalTerms(fieldCount: number): number {
  return Math.floor(LEXICAL_CLAUSE_BUDGET / Math.max(1, fieldCount));
}

/** multi_match's `fields`: `text` for boost 1 (what the service always sent), `title^2` otherwise. */
export function multiMatchFields(fields: Bm25Field[]): string[] {
  return fields.map((field) => (field.boost === 1 ? field.name : `${field.name}^${field.boost}`));
}

/**
 * The field whose analyzer makes the most tokens of a question, to count the BM25 side's clauses with: a `.standard`
 * field keeps the stopwords kbqa_english drops (both use the standard tokenizer, so nothing else differs).
 */
export function countingField(fields: Bm25Field[]): string {
  return fields.find((field) => field.name.endsWith('.standard'))?.name ?? 'text';
}

/** pagination_depth and k for a request (see the top of this file). */
export function sideDepths(tuning: Pick<HybridTuning, 'bm25Depth' | 'knnDepth'>, request: { depth: number; size: number }) {
  const requested = Math.max(request.depth, request.size);
  const paginationDepth = tuning.bm25Depth ?? requested;
  return { paginationDepth, k: Math.min(tuning.knnDepth ?? requested, paginationDepth) };
}

/**
 * neural-search reads `weights` as a list of Doubles (ScoreCombinationUtil.getWeights casts, then takes floatValue):
 * a JSON integer (0 or 1, as JSON.stringify writes them) fails every search with a class_cast_exception. A weight
 * that is a whole number is sent as the nearest non-integral double that is the same float: 1 − 2⁻³⁰ rounds to
 * 1.0f, 2⁻¹⁶⁰ underflows to 0.0f.
 */
export function weightAsDouble(weight: number): number {
  if (!Number.isInteger(weight)) return weight;
  return weight === 0 ? 2 ** -160 : weight - 2 ** -30;
}

type PipelineTuning = Pick<HybridTuning, 'fusion' | 'rankConstant' | 'weights'>;

/** Do two tunings fuse the same way (same pipeline)? Depths and fields are in the query, not the pipeline. */
export function samePipeline(a: PipelineTuning, b: PipelineTuning): boolean {
  return (
    a.fusion === b.fusion &&
    (a.fusion !== 'rrf' || a.rankConstant === b.rankConstant) &&
    a.weights[0] === b.weights[0] &&
    a.weights[1] === b.weights[1]
  );
}

function normalizationProcessor(tuning: PipelineTuning) {
  return {
    'normalization-processor': {
      normalization: { technique: tuning.fusion },
      combination: { technique: 'arithmetic_mean', parameters: { weights: tuning.weights.map(weightAsDouble) } },
    },
  };
}

export interface SearchPipelineBody {
  description?: string;
  phase_results_processors: Array<Record<string, unknown>>;
  response_processors?: unknown[];
  [key: string]: unknown;
}

/** What a pipeline without a file to start from (an inline one) fuses with: the RRF processor, filled in below. */
const BARE_RRF_PIPELINE: SearchPipelineBody = { phase_results_processors: [{ 'score-ranker-processor': { combination: { technique: 'rrf' } } }] };

/**
 * The search pipeline for a tuning. `base` is the versioned file (search-pipelines/kbqa-hybrid-rrf.v1.json) for the
 * named pipelines: for rrf its score-ranker-processor gets the rank constant and weights, as before; for min_max and
 * l2 its phase results processors are replaced by a normalization-processor. With `explain`, the
 * hybrid_score_explanation response processor is added: each hit's `_explanation` then lists the per-side
 * normalized scores (1 / (rank_constant + rank) for rrf, which sideRanksFromExplanation reads back).
 */
export function renderHybridPipeline(tuning: PipelineTuning, explain: boolean, base: SearchPipelineBody = BARE_RRF_PIPELINE): SearchPipelineBody {
  const pipeline = structuredClone(base);
  if (tuning.fusion === 'rrf') {
    for (const processor of pipeline.phase_results_processors) {
      const combination = (processor['score-ranker-processor'] as { combination?: { rank_constant?: number; parameters?: Record<string, unknown> } } | undefined)
        ?.combination;
      if (!combination) continue;
      combination.rank_constant = tuning.rankConstant;
      combination.parameters = { ...combination.parameters, weights: tuning.weights.map(weightAsDouble) };
    }
  } else {
    pipeline.phase_results_processors = [normalizationProcessor(tuning)];
    if (pipeline.description !== undefined) {
      pipeline.description =
        `kbqa hybrid retrieval: ${tuning.fusion} normalization of each side's scores, combined by their weighted arithmetic mean ` +
        `(KBQA_HYBRID_FUSION=${tuning.fusion}, weights [bm25, knn] from KBQA_RRF_WEIGHTS); the file holds the default, RRF.`;
    }
  }
  if (explain) pipeline.response_processors = [...(pipeline.response_processors ?? []), { hybrid_score_explanation: {} }];
  return pipeline;
}

/** A short label for tables and logs: `rrf k=60 w=0.5:0.5 depth=50/50 fields=text:title`. */
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
  if (Math.abs(numbers[0] + numbers[1] - 1) > 0.01) return { problem: `weights "${text}" must sum to 1 (neural-search refuses others)` };
  return { value: [numbers[0], numbers[1]] };
}

export function parseInteger(text: string, range: { min: number; max: number }): Parsed<number> {
  const parsed = parseNumber(text, range);
  if ('problem' in parsed || !Number.isInteger(parsed.value)) return { problem: `"${text}" is not a whole number from ${range.min} to ${range.max}` };
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
    if (!Number.isFinite(boost) || boost <= 0 || boost > 1000 || (caret !== -1 && item.slice(caret + 1).trim() === '')) {
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
