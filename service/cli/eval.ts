// `kbqa eval beir DIR`: retrieval quality of a running kbqa service on a dataset in BEIR layout. Ingests the corpus
// through the real API (resumable), runs every judged query through POST /query, and scores the ranked documents;
// with --ablate also BM25-only and dense-only over the same index through the service's own search module.
// With --sweep, instead: a grid of query-time hybrid knobs over that one index (each query embedded once), one row
// per grid point, through the search module's hybridSearch with each point as an override (pipelines sent inline).
// Over 400 lines because both runs (eval and --sweep) share their set-up and rankings (their result shapes and
// tables are in evalResults.ts), and the command's arguments are read beside them; the metrics, the dataset and the
// grid are in service/eval/.
// Over 400 lines: the beir modes (run, --ablate, --sweep) share ingestion and scoring; results are in evalResults.ts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadConfig } from '../config.ts';
import { corpusDocument, corpusIdFromFilename, loadBeirDataset, sliceDataset, type BeirDataset } from '../eval/beir.ts';
import { createKbqaClient, forEachConcurrently, type KbqaClient } from '../eval/apiClient.ts';
import {
  averageMetrics,
  citationMetrics,
  citedRanking,
  collapseToDocuments,
  type CitedRanking,
  type RankingMetrics,
} from '../eval/metrics.ts';
import { parseSweep, SWEEP_KNOBS } from '../eval/sweep.ts';
import { describeTuning, formatBm25Fields, tuningProblem, type HybridTuning } from '../hybridTuning.ts';
import { sideDepths } from '../search/fusion.ts';
import { escapeForTerminal, escapeJsonForTerminal } from './terminalText.ts';

import {
  formatEvalTable,
  formatSweepTable,
  type EvalOptions,
  type SweepOptions,
  type TuningRecord,
  type SweepRow,
  type SweepResult,
  type EvalResult,
} from './evalResults.ts';

export { formatEvalTable, formatSweepTable } from './evalResults.ts';
export type { EvalOptions, SweepOptions, TuningRecord, SweepRow, SweepResult, EvalResult } from './evalResults.ts';

/** The API's max_results ceiling: Recall@50 is measured at it. */
const RETRIEVAL_DEPTH = 50;

function progress(label: string, total: number, quiet: boolean) {
  let done = 0;
  const started = Date.now();
  const interactive = process.stderr.isTTY;
  let lastPrinted = -1;
  return {
    tick() {
      done += 1;
      if (quiet) return;
      const percent = Math.floor((done / total) * 100);
      if (!interactive && percent < lastPrinted + 10 && done !== total) return;
      lastPrinted = percent;
      const width = 30;
      const filled = Math.round((done / total) * width);
      const rate = done / Math.max(0.001, (Date.now() - started) / 1000);
      const line = `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${rate.toFixed(1)}/s`;
      process.stderr.write(interactive ? `\r${line}${done === total ? '\n' : ''}` : `${line}\n`);
    },
  };
}

async function resolveKnowledgeBase(
  client: KbqaClient,
  dataset: BeirDataset,
  requested: string | undefined,
  sliced: boolean,
): Promise<string> {
  if (requested) return requested;
  // Reusing the KB named after the dataset makes a re-run resume instead of starting over.
  const name = `beir-${dataset.name}${sliced ? `-${dataset.corpus.length}` : ''}`;
  const existing = (await client.listKnowledgeBases()).find(
    (knowledgeBase) => knowledgeBase.name === name && knowledgeBase.role === 'owner',
  );
  if (existing) return existing.id;
  return (await client.createKnowledgeBase(name, `BEIR ${dataset.name} corpus loaded by kbqa eval`)).id;
}

export async function ingestCorpus(
  client: KbqaClient,
  knowledgeBaseId: string,
  dataset: BeirDataset,
  concurrency: number,
  quiet = false,
): Promise<EvalResult['ingest']> {
  const already = await client.listDocumentFilenames(knowledgeBaseId);
  const pending = dataset.corpus.filter((entry) => !already.has(corpusDocument(entry).filename));
  const started = Date.now();
  let chunks = 0;
  if (pending.length > 0) {
    const bar = progress(`ingest ${dataset.name}`, pending.length, quiet);
    await forEachConcurrently(
      pending,
      concurrency,
      async (entry) => {
        const { filename, content } = corpusDocument(entry);
        if (content.trim().length === 0) return;
        const document = await client.ingestDocument(knowledgeBaseId, filename, content);
        chunks += document.chunks; // after the await: `chunks += await …` would read a stale total
      },
      () => bar.tick(),
    );
  }
  return {
    ingested: pending.length,
    skipped: dataset.corpus.length - pending.length,
    seconds: (Date.now() - started) / 1000,
    chunks,
  };
}

/** The dataset, its KB (made and filled through the API when needed: resumable), and the judged queries. */
async function prepareRun(options: Omit<EvalOptions, 'ablate'>) {
  const full = await loadBeirDataset(options.directory, options.split);
  const dataset = options.limit ? sliceDataset(full, options.limit) : full;
  const client = createKbqaClient(options.url, options.apiKey);
  await client.me();
  const knowledgeBaseId = await resolveKnowledgeBase(
    client,
    dataset,
    options.knowledgeBaseId,
    options.limit !== undefined,
  );
  const ingest = await ingestCorpus(client, knowledgeBaseId, dataset, options.concurrency, options.quiet);
  const judged = [...dataset.qrels.keys()].filter((id) => dataset.queries.has(id));
  return { dataset, client, knowledgeBaseId, ingest, judged };
}

/**
 * Scores one retrieval mode: every judged query through `searchOne`, `concurrency` in flight, each ranking collapsed
 * to corpus documents and averaged.
 */
async function measureRankings(
  run: { dataset: BeirDataset; judged: string[]; concurrency: number; quiet: boolean },
  label: string,
  searchOne: (queryId: string) => Promise<Array<{ filename: string }>>,
): Promise<RankingMetrics & { seconds: number }> {
  const begun = Date.now();
  const rankings: Array<{ ranked: string[]; relevant: Map<string, number> }> = [];
  const bar = progress(label, run.judged.length, run.quiet);
  await forEachConcurrently(
    run.judged,
    run.concurrency,
    async (queryId) => {
      const chunks = await searchOne(queryId);
      rankings.push({
        ranked: collapseToDocuments(chunks.map((chunk) => corpusIdFromFilename(chunk.filename))),
        relevant: run.dataset.qrels.get(queryId) ?? new Map(),
      });
    },
    () => bar.tick(),
  );
  return { ...averageMetrics(rankings), seconds: (Date.now() - begun) / 1000 };
}

/** A run's JSON record, when asked for (--out). */
function writeResult(out: string | undefined, result: EvalResult | SweepResult): void {
  if (!out) return;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
}

export async function runEval(options: EvalOptions): Promise<EvalResult> {
  const { dataset, client, knowledgeBaseId, ingest, judged } = await prepareRun(options);
  const modes: EvalResult['modes'] = {};

  const run = { dataset, judged, concurrency: options.concurrency, quiet: options.quiet ?? false };
  const cited: CitedRanking[] = [];
  // Hybrid: the real API, exactly as a client calls it; its answers' citations are judged too.
  modes.hybrid = await measureRankings(run, 'queries (hybrid via API)', async (queryId) => {
    const { body } = await client.query({
      // `judged` holds only ids with a query.
      query: dataset.queries.get(queryId) as string,
      knowledge_base_ids: [knowledgeBaseId],
      max_results: RETRIEVAL_DEPTH,
      include_chunks: true,
    });
    cited.push(citedRanking(body, corpusIdFromFilename, dataset.qrels.get(queryId) ?? new Map()));
    return body.chunks ?? [];
  });

  const config = loadConfig();
  if (options.ablate) {
    // The single sides through the service's own search module: same index, analyzers, fields and KB filter.
    const { loadRag } = await import('../rag/index.ts');
    const { openConfiguredSearchIndex } = await import('../search/index.ts');
    const rag = await loadRag(config);
    const search = openConfiguredSearchIndex(config, rag.embedder);
    try {
      for (const [mode, searchSide] of [
        ['bm25', search.lexicalSearch],
        ['dense', search.vectorSearch],
      ] as const) {
        modes[mode] = await measureRankings({ ...run, concurrency: 1 }, `queries (${mode} only)`, async (queryId) => {
          const text = dataset.queries.get(queryId) ?? '';
          const vector = mode === 'dense' ? await rag.embedQuestion(text) : [];
          return searchSide({
            text,
            vector: vector.length ? vector : new Array(rag.embedder.dimensions).fill(0),
            knowledgeBaseIds: [knowledgeBaseId],
            size: RETRIEVAL_DEPTH,
            depth: RETRIEVAL_DEPTH,
          });
        });
      }
    } finally {
      await Promise.allSettled([search.close(), rag.close()]);
    }
  }

  const result: EvalResult = {
    dataset: dataset.name,
    split: options.split,
    knowledge_base_id: knowledgeBaseId,
    documents: dataset.corpus.length,
    queries: judged.length,
    ingest,
    modes,
    answers: citationMetrics(cited),
    config: {
      rrf_rank_constant: config.opensearch.rrfRankConstant,
      rrf_weights: config.opensearch.rrfWeights,
      chunk_tokens: config.chunking.chunkTokens,
      chunk_overlap_tokens: config.chunking.overlapTokens,
      sentence_vectors: config.chunking.sentenceVectorRecipe ?? 'off',
      hybrid_fusion: config.opensearch.hybridFusion,
      bm25_fields: formatBm25Fields(config.opensearch.bm25Fields),
      bm25_depth: config.opensearch.bm25Depth,
      knn_depth: config.opensearch.knnDepth,
      sentence_weight: config.opensearch.sentenceWeight,
    },
    finished_at: new Date().toISOString(),
  };
  writeResult(options.out, result);
  return result;
}

function tuningRecord(tuning: HybridTuning): TuningRecord {
  // Depths as the sweep's queries used them (size and depth RETRIEVAL_DEPTH): a null knob is that request depth.
  const { paginationDepth, k } = sideDepths(tuning, { depth: RETRIEVAL_DEPTH, size: RETRIEVAL_DEPTH });
  return {
    fusion: tuning.fusion,
    rrf_rank_constant: tuning.fusion === 'rrf' ? tuning.rankConstant : null,
    weights: tuning.weights,
    bm25_depth: paginationDepth,
    knn_depth: k,
    bm25_fields: formatBm25Fields(tuning.bm25Fields, ':'),
    sentence_weight: tuning.sentenceWeight,
  };
}

/**
 * The sweep: every judged query embedded once, the two single sides once, then each grid point's queries through
 * hybridSearch with the point as an override, `concurrency` in flight. Every point's pipeline goes inline (this
 * process's environment need not be the service's, whose named pipelines it would otherwise read); nothing on the
 * cluster changes. Only ids come back (rankingOnly): thousands of searches would otherwise move every passage.
 */
export async function runSweep(options: SweepOptions): Promise<SweepResult> {
  const { dataset, knowledgeBaseId, ingest, judged } = await prepareRun(options);
  const quiet = options.quiet ?? false;
  const config = loadConfig();
  const { loadRag } = await import('../rag/index.ts');
  const { openConfiguredSearchIndex } = await import('../search/index.ts');
  const rag = await loadRag(config);
  const search = openConfiguredSearchIndex(config, rag.embedder);
  // The base every grid point overrides: the tuning the search module built from this process's environment.
  const configured = search.hybridTuning;
  try {
    const started = Date.now();
    const vectors = new Map<string, number[]>();
    const embedBar = progress('embed queries', judged.length, quiet);
    await forEachConcurrently(
      judged,
      options.concurrency,
      async (queryId) => {
        vectors.set(queryId, await rag.embedQuestion(dataset.queries.get(queryId) ?? ''));
      },
      () => embedBar.tick(),
    );
    const embedding = { queries: judged.length, seconds: (Date.now() - started) / 1000 };

    const requestFor = (queryId: string) => ({
      text: dataset.queries.get(queryId) ?? '',
      vector: vectors.get(queryId) ?? [],
      knowledgeBaseIds: [knowledgeBaseId],
      size: RETRIEVAL_DEPTH,
      depth: RETRIEVAL_DEPTH,
      rankingOnly: true,
    });
    const run = { dataset, judged, concurrency: options.concurrency, quiet };
    const measure = (label: string, searchOne: (queryId: string) => Promise<Array<{ filename: string }>>) =>
      measureRankings(run, label, searchOne);

    const reference = {
      bm25: await measure('bm25 only', (queryId) => search.lexicalSearch(requestFor(queryId))),
      dense: await measure('dense only', (queryId) => search.vectorSearch(requestFor(queryId))),
    };

    const rows: SweepRow[] = [];
    const measured = new Map<string, number>(); // record → index of the row that measured it
    for (const [index, point] of options.grid.entries()) {
      const tuning: HybridTuning = { ...configured, ...point.override };
      const record = tuningRecord(tuning);
      const label = `${index + 1}/${options.grid.length} ${describeTuning(tuning)}`;
      // The depths as queried (null knobs resolved): a k-NN side deeper than the BM25 side cannot be asked for.
      const knnDepth = tuning.knnDepth ?? RETRIEVAL_DEPTH;
      const problem = tuningProblem({ bm25Depth: record.bm25_depth, knnDepth });
      if (problem) {
        if (!quiet) process.stderr.write(`skipped ${label}: ${problem}\n`);
        rows.push({
          params: point.values,
          config: { ...record, knn_depth: knnDepth },
          metrics: null,
          skipped: problem,
          best: false,
        });
        continue;
      }
      const key = JSON.stringify(record);
      const earlier = measured.get(key);
      if (earlier !== undefined) {
        rows.push({
          params: point.values,
          config: record,
          metrics: rows[earlier].metrics,
          same_as: earlier + 1,
          best: false,
        });
        continue;
      }
      const metrics = await measure(`sweep ${label}`, (queryId) =>
        search.hybridSearch(requestFor(queryId), tuning, { inlinePipeline: true }),
      );
      measured.set(key, rows.length);
      rows.push({ params: point.values, config: record, metrics, best: false });
    }
    const scored = rows.filter((row) => row.metrics !== null);
    const bestNdcg = Math.max(...scored.map((row) => row.metrics?.ndcg_at_10 ?? 0));
    for (const row of scored) row.best = row.metrics?.ndcg_at_10 === bestNdcg;

    const result: SweepResult = {
      kind: 'sweep',
      dataset: dataset.name,
      split: options.split,
      knowledge_base_id: knowledgeBaseId,
      documents: dataset.corpus.length,
      queries: judged.length,
      ingest,
      embedding,
      configured: tuningRecord(configured),
      chunking: {
        chunk_tokens: config.chunking.chunkTokens,
        chunk_overlap_tokens: config.chunking.overlapTokens,
        sentence_vectors: config.chunking.sentenceVectorRecipe ?? 'off',
      },
      rows,
      reference,
      finished_at: new Date().toISOString(),
    };
    writeResult(options.out, result);
    return result;
  } finally {
    await Promise.allSettled([search.close(), rag.close()]);
  }
}

const USAGE =
  'usage: kbqa eval beir DIR [--url U] [--api-key K] [--kb ID] [--ablate] [--split test] [--limit N] [--concurrency 4] [--out FILE] [--json]\n' +
  `       kbqa eval beir DIR --sweep 'knob=v1,v2,…' [--sweep …] [same options]   (knobs: ${SWEEP_KNOBS.join(', ')})`;

export async function runEvalCommand(
  action: string | undefined,
  positionals: string[],
  options: Record<string, unknown>,
): Promise<number> {
  if (action === 'answers') {
    const { runAnswersCommand } = await import('./evalAnswers.ts');
    return runAnswersCommand(positionals, options);
  }
  if (action !== 'beir' || positionals.length !== 1) {
    console.error(USAGE);
    return 2;
  }
  // The grid is checked before anything else: a knob that needs re-ingesting is a usage error, not a failed run.
  const sweepSpecs = options.sweep as string[] | undefined;
  const sweep = sweepSpecs?.length
    ? parseSweep(sweepSpecs, { sentenceVectors: loadConfig().chunking.sentenceVectors })
    : null;
  if (sweep && 'problem' in sweep) {
    console.error(`kbqa eval: ${sweep.problem}`);
    return 2;
  }
  if (sweep && options.ablate) {
    console.error('kbqa eval: --sweep already measures BM25-only and dense-only once; leave out --ablate');
    return 2;
  }
  const apiKey = (options['api-key'] as string | undefined) ?? process.env.KBQA_API_KEY;
  if (!apiKey) {
    console.error('kbqa eval: an API key is required (--api-key or KBQA_API_KEY)');
    return 2;
  }
  const directory = resolve(positionals[0]);
  const name = directory.split('/').pop() ?? 'dataset';
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const common = {
    directory,
    url: (options.url as string | undefined) ?? process.env.KBQA_URL ?? 'http://127.0.0.1:8080',
    apiKey,
    knowledgeBaseId: options.kb as string | undefined,
    split: (options.split as string | undefined) ?? 'test',
    limit: options.limit ? Number(options.limit) : undefined,
    concurrency: options.concurrency ? Number(options.concurrency) : 4,
    quiet: Boolean(options.json),
  };
  try {
    if (sweep) {
      const result = await runSweep({
        ...common,
        grid: sweep.grid,
        out: (options.out as string | undefined) ?? join('bench', 'results', `eval-${name}-sweep-${stamp}.json`),
      });
      console.log(
        options.json ? escapeJsonForTerminal(JSON.stringify(result)) : escapeForTerminal(formatSweepTable(result)),
      );
      return 0;
    }
    const result = await runEval({
      ...common,
      ablate: Boolean(options.ablate),
      out: (options.out as string | undefined) ?? join('bench', 'results', `eval-${name}-${stamp}.json`),
    });
    console.log(
      options.json ? escapeJsonForTerminal(JSON.stringify(result)) : escapeForTerminal(formatEvalTable(result)),
    );
    return 0;
  } catch (error) {
    console.error(escapeForTerminal(`kbqa eval: ${error instanceof Error ? error.message : String(error)}`));
    return 1;
  }
}
