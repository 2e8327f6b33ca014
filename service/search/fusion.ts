// The hybrid query's knobs as one typed value: how the two sides are fused (the search pipeline) and how each side
// is asked (the query). Pure: rendering and validation only; retrieval.ts sends what this renders, assets.ts installs
// the named pipelines from it, config.ts and `kbqa eval --sweep` parse into it (the knobs and parsers: hybridTuning.ts).
//
// How deep each side looks (neural-search 3.x, HybridCollectorManager / HybridTopScoreDocCollector): a `hybrid`
// query's `pagination_depth` is the number of hits every sub-query keeps per shard, one priority queue per sub-query;
// the k-NN sub-query itself matches only its `k` nearest chunks per shard. So the BM25 side is exactly
// `pagination_depth` deep, and the k-NN side min(k, pagination_depth): one knob cannot make the BM25 side shallower
// than the k-NN side. Hence bm25Depth renders as pagination_depth, knnDepth as k, and a knnDepth above bm25Depth is
// refused by validation (config, sweeps) and cut to it at query time. Both are per shard: the fusion ranks each
// side's hits from all shards together (RRFNormalizationTechnique sorts them globally), so with S shards a side
// brings up to S × depth candidates.
import { type Bm25Field, type HybridTuning } from '../hybridTuning.ts';

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
export function sideDepths(
  tuning: Pick<HybridTuning, 'bm25Depth' | 'knnDepth'>,
  request: { depth: number; size: number },
) {
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
const BARE_RRF_PIPELINE: SearchPipelineBody = {
  phase_results_processors: [{ 'score-ranker-processor': { combination: { technique: 'rrf' } } }],
};

/**
 * The search pipeline for a tuning. `base` is the versioned file (search-pipelines/kbqa-hybrid-rrf.v1.json) for the
 * named pipelines: for rrf its score-ranker-processor gets the rank constant and weights, as before; for min_max and
 * l2 its phase results processors are replaced by a normalization-processor. With `explain`, the
 * hybrid_score_explanation response processor is added: each hit's `_explanation` then lists the per-side
 * normalized scores (1 / (rank_constant + rank) for rrf, which sideRanksFromExplanation reads back).
 */
export function renderHybridPipeline(
  tuning: PipelineTuning,
  explain: boolean,
  base: SearchPipelineBody = BARE_RRF_PIPELINE,
): SearchPipelineBody {
  const pipeline = structuredClone(base);
  if (tuning.fusion === 'rrf') {
    for (const processor of pipeline.phase_results_processors) {
      const combination = (
        processor['score-ranker-processor'] as
          { combination?: { rank_constant?: number; parameters?: Record<string, unknown> } } | undefined
      )?.combination;
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
  if (explain)
    pipeline.response_processors = [...(pipeline.response_processors ?? []), { hybrid_score_explanation: {} }];
  return pipeline;
}

/** A short label for tables and logs: `rrf k=60 w=0.5:0.5 depth=50/50 fields=text:title`. */
