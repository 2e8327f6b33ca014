// `npm run bench [-- --quick]`: ONE command that measures ingest, query latency/throughput, latency at scale and the
// auth path against the running stack (OpenSearch + FerretDB), through its own API process, and writes
// bench/results/<stamp>.{json,md} (+ SVG charts, + latest.{json,md}).
//
// It works in a MongoDB database of its own (kbqa_bench_<stamp>, on the configured server; see database.ts), creates
// its own user, API key and KBs there, and at the end removes their chunks from the shared index and drops the
// database, also on failure or Ctrl-C. No timed assertion lives in the test suite: the targets are judged here.
//
// main() is the list of phases, in order: each is a function named after what it measures (runPhases.ts), after the
// set-up (setUp.ts); options.ts reads the command line, cleanup.ts undoes what the run made, results.ts writes it.
// Options first: --help and a bad option end the run before anything else runs.
import { only, options } from './options.ts';
import { cleanup, toCleanUp } from './cleanup.ts';
import { ocrPhase } from './ocr.ts';
import { log, progress } from './progress.ts';
import { ingestThroughApi } from './ingest.ts';
import { buildTargets, type BenchResult } from './report.ts';
import { newestEvalResult, reportCharts, writeResults } from './results.ts';
import {
  authPhase,
  duringIngestPhase,
  ingestPhase,
  loadBenchDataset,
  cliStartupPhase,
  conversationTurnsPhase,
  pdfVsTextPhase,
  queryBurstPhase,
  queryPhase,
  rawEmbedderPhase,
  refreshPoliciesPhase,
  scaleInputsPhase,
  scalePhase,
} from './runPhases.ts';
import { readChunksOfKnowledgeBase } from './scale.ts';
import { setUp, type BenchRun } from './setUp.ts';
import type { IngestRun, RawEmbedRun } from './ingest.ts';
import { round } from './stats.ts';

async function main(): Promise<number> {
  const bench = await setUp();
  const { stamp, machine, index, commonResult } = bench;

  if (only === 'ingest') return ingestOnly(bench);
  if (only === 'ocr') {
    const ocr = await ocrPhase().catch((error: unknown) => ({ error: String(error) }));
    const partial: Omit<BenchResult, 'targets' | 'charts' | 'finished_at'> = { ...commonResult({}), ocr, eval: null };
    await writeResults({ ...partial, targets: buildTargets(partial), charts: {}, finished_at: '' }, []);
    return 'error' in ocr ? 1 : 0;
  }
  if (only === 'burst') return burstOnly(bench);
  if (only === 'conversation') return conversationOnly(bench);
  if (only === 'scale') {
    const { documents, testQueries } = await loadBenchDataset();
    const { templates, scaleTexts, scaleVectors } = await scaleInputsPhase(bench, documents, testQueries);
    const scale = await scalePhase(bench, templates, scaleTexts, scaleVectors);
    const partial: Omit<BenchResult, 'targets' | 'charts' | 'finished_at'> = {
      ...commonResult({
        ingest_docs: options.ingestDocs,
        scale_steps: options.scaleSteps.join(','),
        scale_queries: options.scaleQueries,
        neighbours: options.neighbours,
      }),
      scale,
      eval: null,
    };
    await writeResults({ ...partial, targets: buildTargets(partial), charts: {}, finished_at: '' }, []);
    return 0;
  }

  const cliStartup = await cliStartupPhase(bench);
  if (only === 'cli') {
    const partial: Omit<BenchResult, 'targets' | 'charts' | 'finished_at'> = {
      ...commonResult({}),
      cli_startup: cliStartup,
      eval: null,
    };
    await writeResults({ ...partial, targets: buildTargets(partial), charts: {}, finished_at: '' }, []);
    return 0;
  }

  const pdfIngest = await pdfVsTextPhase(bench);
  if (only === 'pdf') {
    const partial: Omit<BenchResult, 'targets' | 'charts' | 'finished_at'> = {
      ...commonResult({}),
      pdf_ingest: pdfIngest,
      eval: null,
    };
    await writeResults({ ...partial, targets: buildTargets(partial), charts: {}, finished_at: '' }, []);
    return 0;
  }

  const { dataset, corpus, documents, testQueries } = await loadBenchDataset();
  const { ingestRuns, ingestPeakMb, queryRun, queryKnowledgeBaseId } = await ingestPhase(bench, documents);
  const { raw, rawWithSentences, ratio, scaleTexts, scaleVectors } = await rawEmbedderPhase(
    bench,
    documents,
    testQueries,
    queryRun,
  );
  const { queryBodies, sequential, concurrent, throughputRatio } = await queryPhase(
    bench,
    testQueries,
    queryKnowledgeBaseId,
  );
  const conversationTurns = await conversationTurnsPhase(bench, testQueries, queryKnowledgeBaseId);
  const duringIngest = await duringIngestPhase(bench, corpus, queryBodies);
  const queryBurst = await queryBurstPhase(bench, documents, testQueries, queryKnowledgeBaseId);
  // The real chunks of the concurrency-4 KB, vectors included: templates for the refresh policies and the scale KB.
  const templates = await readChunksOfKnowledgeBase(index, queryKnowledgeBaseId);
  const refreshPolicies = await refreshPoliciesPhase(bench, templates);
  const scale = await scalePhase(bench, templates, scaleTexts, scaleVectors);
  const auth = await authPhase(bench);

  // --- report
  const common = commonResult({
    dataset: options.dataset,
    ingest_docs: options.ingestDocs,
    queries: options.queries,
    load_amount: options.loadAmount,
    load_connections: options.loadConnections,
    scale_steps: options.scaleSteps.join(','),
    scale_queries: options.scaleQueries,
    neighbours: options.neighbours,
    auth_seconds: options.authSeconds,
    auth_connections: options.authConnections,
    ingest_concurrency: options.ingestConcurrency,
    refresh_chunks: options.refreshChunks,
    group_commit_ms: options.groupCommitMs.join(','),
    big_document_mib: options.bigDocumentMiB,
    during_queries: options.duringQueries,
  });
  const partial: Omit<BenchResult, 'targets' | 'charts' | 'finished_at'> = {
    ...common,
    resources: { ...common.resources, ingest_peak_rss_mb: round(ingestPeakMb) },
    pdf_ingest: pdfIngest,
    cli_startup: cliStartup,
    ingest: ingestSection(dataset.name, documents.length, ingestRuns, raw, ratio, rawWithSentences),
    refresh_policies: refreshPolicies,
    query: {
      knowledge_base_id: queryKnowledgeBaseId,
      chunks_in_kb: queryRun.chunks,
      sequential,
      concurrent,
      throughput_ratio: throughputRatio,
      during_ingest: duringIngest,
    },
    query_burst: queryBurst,
    conversation_turns: conversationTurns,
    scale,
    auth,
    eval: newestEvalResult(),
  };
  const result: BenchResult = { ...partial, targets: buildTargets(partial), charts: {}, finished_at: '' };

  await writeResults(
    result,
    reportCharts({ stamp, machine }, result, { sequential, concurrent, ingestRuns, raw, scale }),
  );
  return 0;
}

/** The report's ingest section: the API's runs beside the raw embedder on the same documents. */
function ingestSection(
  dataset: string,
  documents: number,
  api: IngestRun[],
  raw: RawEmbedRun,
  ratio: number,
  rawWithSentences?: RawEmbedRun | null,
): NonNullable<BenchResult['ingest']> {
  return {
    dataset,
    documents,
    api,
    raw_embedder: raw,
    ...(rawWithSentences ? { raw_embedder_with_sentences: rawWithSentences } : {}),
    api4_to_raw_ratio: ratio,
  };
}

/** `--only ingest`: the API's ingest runs and the raw embedder on the same documents, nothing else. */
async function ingestOnly(bench: BenchRun): Promise<number> {
  const { documents, testQueries, dataset } = await loadBenchDataset();
  const { ingestRuns, ingestPeakMb, queryRun } = await ingestPhase(bench, documents);
  const { raw, rawWithSentences, ratio } = await rawEmbedderPhase(bench, documents, testQueries, queryRun);
  const common = bench.commonResult({
    dataset: options.dataset,
    ingest_docs: options.ingestDocs,
    ingest_concurrency: options.ingestConcurrency,
  });
  const partial: Omit<BenchResult, 'targets' | 'charts' | 'finished_at'> = {
    ...common,
    resources: { ...common.resources, ingest_peak_rss_mb: round(ingestPeakMb) },
    ingest: ingestSection(dataset.name, documents.length, ingestRuns, raw, ratio, rawWithSentences),
    eval: null,
  };
  const result: BenchResult = { ...partial, targets: buildTargets(partial), charts: {}, finished_at: '' };
  await writeResults(result, []);
  return 0;
}

/** `--only burst`: the burst's KB and the other user's, then their questions idle and during the burst. */
async function burstOnly(bench: BenchRun): Promise<number> {
  const { documents, testQueries } = await loadBenchDataset();
  const queryBurst = await queryBurstPhase(bench, documents, testQueries);
  const partial: Omit<BenchResult, 'targets' | 'charts' | 'finished_at'> = {
    ...bench.commonResult({
      dataset: options.dataset,
      ingest_docs: options.ingestDocs,
      during_queries: options.duringQueries,
      burst_connections: options.burstConnections,
    }),
    query_burst: queryBurst,
    eval: null,
  };
  await writeResults({ ...partial, targets: buildTargets(partial), charts: {}, finished_at: '' }, []);
  return 0;
}

/** `--only conversation`: --ingest-docs documents into a KB, then /query against conversation turns on them. */
async function conversationOnly(bench: BenchRun): Promise<number> {
  const { documents, testQueries } = await loadBenchDataset();
  const knowledgeBaseId = await bench.newKnowledgeBase('bench-conversation');
  log(`conversation: ${documents.length} documents into KB ${knowledgeBaseId}`);
  await ingestThroughApi(bench.client, knowledgeBaseId, documents, options.ingestConcurrency, progress('  ingest', 25));
  const conversationTurns = await conversationTurnsPhase(bench, testQueries, knowledgeBaseId);
  const partial: Omit<BenchResult, 'targets' | 'charts' | 'finished_at'> = {
    ...bench.commonResult({ dataset: options.dataset, ingest_docs: options.ingestDocs, queries: options.queries }),
    conversation_turns: conversationTurns,
    eval: null,
  };
  await writeResults({ ...partial, targets: buildTargets(partial), charts: {}, finished_at: '' }, []);
  return 0;
}

main()
  .catch((error: unknown) => {
    // After Ctrl-C the clean-up stops the API under the running phase, which then fails: that is not news.
    if (toCleanUp.interrupted) return 1;
    console.error(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    if (toCleanUp.api) console.error(`[bench] last API output:\n${toCleanUp.api.tail()}`);
    return 1;
  })
  .then(async (code) => {
    await cleanup();
    log('done');
    process.exit(code);
  });
