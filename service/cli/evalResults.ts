// The results of `kbqa eval beir` (cli/eval.ts) and how they print: the shapes written as JSON, and the tables the
// command prints. Apart from eval.ts so that the runs themselves stay under 500 lines.
import type { CitationMetrics, RankingMetrics } from '../eval/metrics.ts';
import type { GridPoint } from '../eval/sweep.ts';
import type { HybridTuning } from '../hybridTuning.ts';
import type { SentenceVectorRecipe } from '../configShape.ts';

export interface EvalOptions {
  directory: string;
  url: string;
  apiKey: string;
  knowledgeBaseId?: string;
  ablate: boolean;
  split: string;
  limit?: number;
  concurrency: number;
  out?: string;
  quiet?: boolean;
}

export interface SweepOptions extends Omit<EvalOptions, 'ablate'> {
  /** Grid points (parseSweep). */
  grid: GridPoint[];
}

/** The fusion knobs a row ran with, named as --sweep names them; depths as the queries used them. */
export interface TuningRecord {
  fusion: HybridTuning['fusion'];
  rrf_rank_constant: number | null;
  weights: [number, number];
  bm25_depth: number;
  knn_depth: number;
  bm25_fields: string;
  sentence_weight: number;
}

export interface SweepRow {
  /** The knobs this grid point set, as given. */
  params: Record<string, string>;
  config: TuningRecord;
  /** null when the point was skipped (`skipped` says why). */
  metrics: (RankingMetrics & { seconds: number }) | null;
  skipped?: string;
  /** Same knobs as an earlier row (1-based): its measurement is reused. */
  same_as?: number;
  best: boolean;
}

export interface SweepResult {
  kind: 'sweep';
  dataset: string;
  split: string;
  knowledge_base_id: string;
  documents: number;
  queries: number;
  ingest: EvalResult['ingest'];
  /** Each judged query embedded once, up front. */
  embedding: { queries: number; seconds: number };
  /** The service's configured tuning (the base each grid point overrides). */
  configured: TuningRecord;
  chunking: { chunk_tokens: number; chunk_overlap_tokens: number; sentence_vectors: SentenceVectorRecipe | 'off' };
  rows: SweepRow[];
  /** The single sides, once, for reference (configured BM25 fields). */
  reference: { bm25: RankingMetrics & { seconds: number }; dense: RankingMetrics & { seconds: number } };
  finished_at: string;
}

export interface EvalResult {
  dataset: string;
  split: string;
  knowledge_base_id: string;
  documents: number;
  queries: number;
  ingest: { ingested: number; skipped: number; seconds: number; chunks: number };
  modes: Record<string, RankingMetrics & { seconds: number }>;
  /** The hybrid row's answers (the same POST /query responses): their citations judged by the qrels. */
  answers: CitationMetrics;
  /** As this process's environment has them (start the eval with the service's: the API's row runs on its config). */
  config: {
    rrf_rank_constant: number;
    rrf_weights: [number, number];
    chunk_tokens: number;
    chunk_overlap_tokens: number;
    /** The recipe (KBQA_SENTENCE_VECTORS); files written before 2026-11-27 hold a yes/no. */
    sentence_vectors: SentenceVectorRecipe | 'off';
    hybrid_fusion: HybridTuning['fusion'];
    bm25_fields: string;
    bm25_depth: number | null;
    knn_depth: number | null;
    sentence_weight: number;
  };
  finished_at: string;
}

const metricCells = (metrics: RankingMetrics, best = false) =>
  `${metrics.ndcg_at_10.toFixed(3)}${best ? '*' : ' '} | ${metrics.recall_at_10.toFixed(3)} | ${metrics.recall_at_50.toFixed(3)} | ${metrics.mrr_at_10.toFixed(3)}`;

/** One row per grid point in the order given, then the single sides; `*` marks the best nDCG@10 of the grid. */
export function formatSweepTable(result: SweepResult): string {
  const header =
    '| # | fusion | k | weights | bm25 depth | knn depth | bm25 fields | sentence weight | nDCG@10 | Recall@10 | Recall@50 | MRR@10 | s |';
  const lines = result.rows.map((row, index) => {
    const knobs = `| ${index + 1} | ${row.config.fusion} | ${row.config.rrf_rank_constant ?? '–'} | ${row.config.weights.join(':')} | ${row.config.bm25_depth} | ${row.config.knn_depth} | ${row.config.bm25_fields} | ${row.config.sentence_weight}`;
    // The reason in full is in the JSON and on stderr; the only one is a k-NN side deeper than the BM25 side.
    if (!row.metrics) return `${knobs} | skipped: k-NN deeper than BM25 | | | | |`;
    const seconds = row.same_as !== undefined ? `= #${row.same_as}` : row.metrics.seconds.toFixed(1);
    return `${knobs} | ${metricCells(row.metrics, row.best)} | ${seconds} |`;
  });
  const side = (label: string, metrics: RankingMetrics & { seconds: number }) =>
    `| ${label} | | | | | | | | ${metricCells(metrics)} | ${metrics.seconds.toFixed(1)} |`;
  const configured = result.configured;
  return [
    `${result.dataset} (${result.split}): ${result.documents} documents, ${result.queries} queries, KB ${result.knowledge_base_id}; ` +
      `${result.chunking.chunk_tokens}-token chunks (overlap ${result.chunking.chunk_overlap_tokens}); queries embedded once in ${result.embedding.seconds.toFixed(1)} s`,
    `configured: ${configured.fusion}${configured.rrf_rank_constant !== null ? ` k=${configured.rrf_rank_constant}` : ''} weights ${configured.weights.join(':')} ` +
      `depths ${configured.bm25_depth}/${configured.knn_depth} fields ${configured.bm25_fields} sentence weight ${configured.sentence_weight}; * best nDCG@10 of the grid`,
    header,
    `|${header
      .slice(1, -1)
      .split('|')
      .map(() => '---')
      .join('|')}|`,
    ...lines,
    side('bm25 only', result.reference.bm25),
    side('dense only', result.reference.dense),
  ].join('\n');
}

export function formatEvalTable(result: EvalResult): string {
  const rows = Object.entries(result.modes).map(
    ([mode, metrics]) =>
      `| ${mode.padEnd(6)} | ${metrics.ndcg_at_10.toFixed(3)} | ${metrics.recall_at_10.toFixed(3)} | ${metrics.recall_at_50.toFixed(3)} | ${metrics.mrr_at_10.toFixed(3)} |`,
  );
  return [
    `${result.dataset} (${result.split}): ${result.documents} documents, ${result.queries} queries, KB ${result.knowledge_base_id}`,
    '| mode   | nDCG@10 | Recall@10 | Recall@50 | MRR@10 |',
    '|--------|---------|-----------|-----------|--------|',
    ...rows,
    `answers (hybrid row's responses, ${result.answers.queries} queries): first citation relevant ${result.answers.first_citation_relevant.toFixed(3)}, ` +
      `retrieval P@1 ${result.answers.retrieval_p_at_1.toFixed(3)}, citation precision ${result.answers.citation_precision.toFixed(3)} ` +
      `(${result.answers.citations} citations; ${result.answers.uncited_queries} queries cited nothing)`,
  ].join('\n');
}
