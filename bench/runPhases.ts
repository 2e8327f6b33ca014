// The phases of `npm run bench` (run.ts calls them in this order), each a function named after what it measures: it
// logs as it goes and returns its section of the result. A phase that can fail alone records its error in its
// section, and the next phase runs.
import { HYBRID_DEPTH } from '../service/commands/answerQuestion.ts';
import { EXTRACTIVE_MODEL } from '../service/config.ts';
import type { SentenceVectorRecipe } from '../service/configShape.ts';
import { corpusDocument, loadBeirDataset } from '../service/eval/beir.ts';
import { queryBody } from '../service/http/routes/query.schema.ts';
import { openSearchIndex, type ChunkDocument } from '../service/search/index.ts';
import { hundredPageTextPdf } from '../test/fixtures/pdfs.ts';
import { toCleanUp } from './cleanup.ts';
import { measureCliStartup } from './cliStartup.ts';
import { bigDocument, queriesDuringIngest } from './duringIngest.ts';
import { chunkIndexStats, measureOpenSearchWork, waitForMerges } from './indexStats.ts';
import { ingestThroughApi, rawEmbedderThroughput, type BenchDocument, type IngestRun } from './ingest.ts';
import { runLoad, type LoadResult } from './load.ts';
import { only, options, root } from './options.ts';
import { comparePdfAndText, PDF_RATIO_TARGET, signInToWebApp } from './pdfIngest.ts';
import { failure, log, progress } from './progress.ts';
import { compareRefreshPolicies, policyName, refreshPolicies as refreshPoliciesFor } from './refreshPolicies.ts';
import type { BenchResult, ScaleStep } from './report.ts';
import {
  loadNeighbours,
  loadPerturbedCopies,
  NEIGHBOUR_KB_CHUNKS,
  readChunksOfKnowledgeBase,
  SCALE_NOISE_SIGMA,
} from './scale.ts';
import { apiVariant, measureSearchStage, type SearchStageQuery } from './searchStage.ts';
import { runSequentialQueries } from './sequential.ts';
import { measureQueryBurst } from './queryBurst.ts';
import { measureConversationTurns, TURN_P50_TARGET_MS } from './conversationTurns.ts';
import { createApiKey } from '../service/commands/apiKeys.ts';
import { createUser } from '../service/commands/accounts.ts';
import { createKbqaClient } from '../service/eval/apiClient.ts';
import type { BenchRun } from './setUp.ts';
import { round } from './stats.ts';

/** A query as the bench sends it: one question on the query KB. */
type QueryBody = { query: string; knowledge_base_ids: string[] };

/** A 100-page text PDF through the web upload against the same text through /api/v1 (first: a quiet index). */
/** `kbqa --help` and `kbqa keys create` as fresh processes, the API idle (bench/cliStartup.ts). */
export async function cliStartupPhase(bench: BenchRun): Promise<BenchResult['cli_startup']> {
  const { benchEnv, email, phase } = bench;
  try {
    return await phase('cli start-up (API idle)', () =>
      measureCliStartup({ root, env: benchEnv, email, runs: 5, warmup: 1, log }),
    );
  } catch (error) {
    log(`cli start-up phase failed: ${failure(error)}`);
    if (only === 'cli') throw error;
    return { error: failure(error) };
  }
}

export async function pdfVsTextPhase(bench: BenchRun): Promise<NonNullable<BenchResult['pdf_ingest']>> {
  const { index, runningApi, apiKey, email, password, newKnowledgeBase, phase } = bench;
  let pdfIngest: NonNullable<BenchResult['pdf_ingest']>;
  {
    const knowledgeBaseIds: string[] = [];
    try {
      const fixture = await hundredPageTextPdf();
      const session = await signInToWebApp(runningApi.url, email, password);
      log(
        `pdf vs text: ${fixture.pages.length}-page PDF (${(fixture.pdf.byteLength / 1024).toFixed(0)} KiB) via the web upload vs the same text (${(Buffer.byteLength(fixture.text, 'utf8') / 1024).toFixed(0)} KiB) via /api/v1; ${options.pdfWarmup} warm-up + ${options.pdfRuns} measured of each, alternating, each into a fresh KB`,
      );
      const compared = await phase('pdf vs text ingest', () =>
        comparePdfAndText({
          url: runningApi.url,
          apiKey,
          session,
          fixture,
          newKnowledgeBase: async (name) => {
            const id = await newKnowledgeBase(name);
            knowledgeBaseIds.push(id);
            return id;
          },
          warmup: options.pdfWarmup,
          runs: options.pdfRuns,
          log,
        }),
      );
      pdfIngest = compared;
      log(
        `pdf vs text: PDF median ${compared.pdf.median_ms} ms (${compared.pdf.chunks} chunks, ${compared.pdf.chunks_per_s} chunks/s), ` +
          `text median ${compared.text.median_ms} ms (${compared.text.chunks} chunks, ${compared.text.chunks_per_s} chunks/s); ratio ${compared.ratio} ` +
          `(target ≤ ${PDF_RATIO_TARGET}: ${compared.ratio <= PDF_RATIO_TARGET ? 'PASS' : 'MISS'}); per chunk ${compared.per_chunk_ratio}; ` +
          `until embedding: PDF ${compared.pdf.median_until_embedding_ms ?? 'n/a'} ms, text ${compared.text.median_until_embedding_ms ?? 'n/a'} ms ` +
          `(extraction ≈ ${compared.extraction_ms ?? 'n/a'} ms, ${compared.extraction_share !== null ? `${(compared.extraction_share * 100).toFixed(0)} %` : 'n/a'} of the PDF's time)`,
      );
    } catch (error) {
      pdfIngest = { error: failure(error) };
      log(`pdf-vs-text phase failed: ${pdfIngest.error}`);
      if (only === 'pdf') throw error;
    } finally {
      // Their chunks would only blur the phases after this one.
      let removed = 0;
      for (const knowledgeBaseId of knowledgeBaseIds)
        removed += await index.deleteChunksOfKnowledgeBase(knowledgeBaseId);
      if (removed > 0) {
        await waitForMerges(index);
        log(`pdf vs text: removed its ${removed} chunks`);
      }
    }
  }
  return pdfIngest;
}

/** The BEIR dataset's documents to ingest and its judged queries (the corpus too: the big document is made of it). */
export async function loadBenchDataset() {
  const dataset = await loadBeirDataset(options.dataset, 'test');
  const corpus = dataset.corpus.map(corpusDocument).filter((document) => document.content.trim().length > 0);
  const documents: BenchDocument[] = corpus.slice(0, options.ingestDocs);
  const testQueries = [...dataset.qrels.keys()]
    .filter((id) => dataset.queries.has(id))
    .map((id) => dataset.queries.get(id) as string);
  log(`dataset ${dataset.name}: ${documents.length} documents to ingest, ${testQueries.length} test queries`);
  return { dataset, corpus, documents, testQueries };
}

/** Ingest through the API at concurrency 1 and 4, each into a fresh KB; OpenSearch's CPU per chunk. */
export async function ingestPhase(bench: BenchRun, documents: BenchDocument[]) {
  const { index, client, newKnowledgeBase, phase, phases, stack } = bench;
  const ingestRuns: IngestRun[] = [];
  for (const concurrency of [1, options.ingestConcurrency]) {
    const knowledgeBaseId = await newKnowledgeBase(`bench-ingest-c${concurrency}`);
    log(`ingest: ${documents.length} documents at concurrency ${concurrency} into KB ${knowledgeBaseId}`);
    const { result: run, opensearch } = await phase(`ingest, concurrency ${concurrency}`, () =>
      measureOpenSearchWork(
        index,
        stack.opensearch,
        () =>
          ingestThroughApi(client, knowledgeBaseId, documents, concurrency, progress(`  ingest c${concurrency}`, 25)),
        (ingested) => ingested.chunks,
      ),
    );
    run.opensearch = opensearch;
    ingestRuns.push(run);
    log(
      `ingest c${concurrency}: ${run.documents_per_s} documents/s, ${run.chunks_per_s} chunks/s (${run.chunks} chunks in ${run.seconds} s); ` +
        `OpenSearch ${opensearch.cpu_ms_per_chunk ?? 'n/a'} CPU-ms/chunk (net of idle ${opensearch.net_cpu_ms_per_chunk ?? 'n/a'}), ${opensearch.index.external_refreshes} refreshes, ${opensearch.index.merges} merges (settled after ${opensearch.merge_wait_seconds} s)`,
    );
  }
  const ingestPeaks = ingestRuns.map((run) => phases[`ingest, concurrency ${run.concurrency}`]);
  const ingestPeakMb = Math.max(
    ...ingestPeaks.map((resources) => resources.api_peak_rss_mb ?? resources.api_sampled_max_rss_mb),
  );
  const queryRun = ingestRuns[1];
  const queryKnowledgeBaseId = queryRun.knowledge_base_id;
  return { ingestRuns, ingestPeakMb, queryRun, queryKnowledgeBaseId };
}

/**
 * The raw embedder on the same documents, in this process, API idle: a pool of the API's size, as busy. Twice: without
 * sentence vectors (the baseline the API's ingest is judged against: what sentence vectors cost shows in the ratio),
 * then with the configured ones beside it.
 */
export async function rawEmbedderPhase(
  bench: BenchRun,
  documents: BenchDocument[],
  testQueries: string[],
  queryRun: IngestRun,
) {
  const { config, phase } = bench;
  const { loadRag } = await import('../service/rag/index.ts');
  log(
    `raw embedder: loading a pool of ${config.embedder.workers} workers × ${config.embedder.threads} thread(s) in the bench process…`,
  );
  const loadedRag = await loadRag(config);
  toCleanUp.rag = loadedRag;
  const rawRun = (recipe: SentenceVectorRecipe | null) =>
    phase(
      `raw embedder, ${options.ingestConcurrency} documents in flight (API idle), sentence vectors ${recipe ?? 'off'}`,
      () =>
        rawEmbedderThroughput(
          loadedRag,
          documents,
          { concurrency: options.ingestConcurrency, threadsPerWorker: config.embedder.threads },
          recipe,
        ),
    );
  const raw = await rawRun(null);
  const recipe = config.chunking.sentenceVectorRecipe;
  const rawWithSentences = recipe ? await rawRun(recipe) : null;
  for (const run of [raw, rawWithSentences]) {
    if (run)
      log(
        `raw embedder, sentence vectors ${run.sentence_vectors}: ${run.chunks_per_s} chunks/s (${run.chunks} chunks in ${run.seconds} s; splitting took ${run.split_seconds} s)`,
      );
  }
  // The scale step's search-stage queries need the questions' vectors: the API's own query embedding.
  const scaleTexts = testQueries.slice(0, options.scaleQueries);
  const scaleVectors: SearchStageQuery[] = [];
  for (const text of scaleTexts) scaleVectors.push({ text, vector: await loadedRag.embedQuestion(text) });
  await loadedRag.close();
  toCleanUp.rag = null;
  const ratio = round(queryRun.chunks_per_s / raw.chunks_per_s, 3);
  log(`ingest ratio API@${options.ingestConcurrency} ÷ raw@${raw.concurrency} = ${ratio}`);
  return { raw, rawWithSentences, ratio, scaleTexts, scaleVectors };
}

/** Queries: sequential, then autocannon with 8 connections. */
export async function queryPhase(bench: BenchRun, testQueries: string[], queryKnowledgeBaseId: string) {
  const { runningApi, apiKey, phase } = bench;
  const queryBodies = testQueries
    .slice(0, options.queries)
    .map((query) => ({ query, knowledge_base_ids: [queryKnowledgeBaseId] }));
  log(`query: ${queryBodies.length} queries sequentially against KB ${queryKnowledgeBaseId}`);
  const sequential = await phase('query, sequential', () =>
    runSequentialQueries({
      url: runningApi.url,
      apiKey,
      bodies: queryBodies,
      warmup: 10,
      onProgress: progress('  sequential', 25),
    }),
  );
  log(
    `sequential: p50 ${sequential.latency.p50_ms} ms, p95 ${sequential.latency.p95_ms} ms, p99 ${sequential.latency.p99_ms} ms; ${sequential.queries_per_s} q/s; stages p50 ${Object.entries(
      sequential.stages,
    )
      .map(([s, t]) => `${s} ${t.p50_ms}`)
      .join(', ')}`,
  );
  const allBodies = testQueries.map((query) => JSON.stringify({ query, knowledge_base_ids: [queryKnowledgeBaseId] }));
  log(`query: autocannon, ${options.loadConnections} connections, ${options.loadAmount} requests`);
  const concurrent = await phase(`query, ${options.loadConnections} connections`, () =>
    runLoad({
      url: runningApi.url,
      apiKey,
      method: 'POST',
      path: '/api/v1/query',
      bodies: allBodies,
      connections: options.loadConnections,
      amount: options.loadAmount,
    }),
  );
  const throughputRatio = round(concurrent.requests_per_s / sequential.queries_per_s, 3);
  log(
    `concurrency ${options.loadConnections}: ${concurrent.requests_per_s} queries/s (${throughputRatio} × sequential), p50 ${concurrent.latency.p50_ms} ms, p95 ${concurrent.latency.p95_ms} ms, p99 ${concurrent.latency.p99_ms} ms, non-2xx ${concurrent.non_2xx}, errors ${concurrent.errors}`,
  );
  return { queryBodies, sequential, concurrent, throughputRatio };
}

/** Query latency while a big document ingests (into a KB of its own; the queries stay on the query KB). */
export async function duringIngestPhase(
  bench: BenchRun,
  corpus: BenchDocument[],
  queryBodies: QueryBody[],
): Promise<NonNullable<BenchResult['query']>['during_ingest']> {
  const { config, index, runningApi, apiKey, newKnowledgeBase, phase } = bench;
  let duringIngest: NonNullable<BenchResult['query']>['during_ingest'];
  try {
    const big = bigDocument(
      corpus.map((document) => document.content),
      Math.min(Math.floor(options.bigDocumentMiB * 1024 * 1024), config.limits.maxContentBytes),
    );
    const bigKnowledgeBaseId = await newKnowledgeBase('bench-big-document');
    log(
      `during ingest: ${options.duringQueries} sequential queries idle, then while a ${(big.bytes / 1024 / 1024).toFixed(2)} MiB document ingests into KB ${bigKnowledgeBaseId}`,
    );
    duringIngest = await phase(`query during a ${(big.bytes / 1024 / 1024).toFixed(1)} MiB ingest`, () =>
      queriesDuringIngest({
        url: runningApi.url,
        apiKey,
        knowledgeBaseId: bigKnowledgeBaseId,
        document: big,
        bodies: queryBodies.slice(0, options.duringQueries),
        log,
      }),
    );
    log(
      `during ingest: p95 ${duringIngest.during.latency.p95_ms} ms vs idle ${duringIngest.idle.latency.p95_ms} ms (× ${duringIngest.p95_ratio})`,
    );
    // Its thousands of chunks would only blur the phases after this one.
    const removed = await index.deleteChunksOfKnowledgeBase(bigKnowledgeBaseId);
    await waitForMerges(index);
    log(`during ingest: removed its ${removed} chunks`);
  } catch (error) {
    duringIngest = { error: failure(error) };
    log(`during-ingest phase failed: ${duringIngest.error}`);
  }
  return duringIngest;
}

/** Refresh policies: the same chunks bulk-indexed three ways, no API, no embedder. */
export async function refreshPoliciesPhase(
  bench: BenchRun,
  templates: ChunkDocument[],
): Promise<NonNullable<BenchResult['refresh_policies']>> {
  const { config, index, searchOptions, stack, newKnowledgeBase, phase } = bench;
  let refreshPolicies: NonNullable<BenchResult['refresh_policies']>;
  try {
    const policies = refreshPoliciesFor(config.ingestion.refreshIntervalMs, options.groupCommitMs);
    const knowledgeBaseIds: string[] = [];
    for (const [position] of policies.entries())
      knowledgeBaseIds.push(await newKnowledgeBase(`bench-refresh-${position + 1}`));
    log(
      `refresh policies: ${options.refreshChunks} chunks each, ${options.ingestConcurrency} documents in flight: ${policies.map(policyName).join('; ')}`,
    );
    try {
      refreshPolicies = await phase('refresh policies (no API)', () =>
        compareRefreshPolicies({
          search: index,
          withRefreshInterval: (refreshIntervalMs) => openSearchIndex({ ...searchOptions, refreshIntervalMs }),
          openSearchPid: stack.opensearch,
          templates,
          policies,
          knowledgeBaseIds,
          chunks: options.refreshChunks,
          concurrency: options.ingestConcurrency,
          refreshIntervalMs: config.ingestion.refreshIntervalMs,
          log,
        }),
      );
    } finally {
      for (const knowledgeBaseId of knowledgeBaseIds) await index.deleteChunksOfKnowledgeBase(knowledgeBaseId);
      await waitForMerges(index);
    }
  } catch (error) {
    refreshPolicies = { error: failure(error) };
    log(`refresh-policy phase failed: ${refreshPolicies.error}`);
  }
  return refreshPolicies;
}

/**
 * `--only scale`'s inputs without the phases before it: the documents through the API once, at concurrency 4 (their
 * chunks are the templates), and the test questions embedded by the API's own code in this process.
 */
export async function scaleInputsPhase(bench: BenchRun, documents: BenchDocument[], testQueries: string[]) {
  const { config, index, client, newKnowledgeBase, phase } = bench;
  const knowledgeBaseId = await newKnowledgeBase('bench-scale-templates');
  log(
    `scale inputs: ${documents.length} documents at concurrency ${options.ingestConcurrency} into KB ${knowledgeBaseId}`,
  );
  await phase('scale inputs: ingest', () =>
    ingestThroughApi(client, knowledgeBaseId, documents, options.ingestConcurrency, progress('  ingest', 25)),
  );
  const templates = await readChunksOfKnowledgeBase(index, knowledgeBaseId);
  const { loadRag } = await import('../service/rag/index.ts');
  const loadedRag = await loadRag(config);
  toCleanUp.rag = loadedRag;
  const scaleTexts = testQueries.slice(0, options.scaleQueries);
  const scaleVectors: SearchStageQuery[] = [];
  for (const text of scaleTexts) scaleVectors.push({ text, vector: await loadedRag.embedQuestion(text) });
  await loadedRag.close();
  toCleanUp.rag = null;
  return { templates, scaleTexts, scaleVectors };
}

/** Scale: a dedicated KB grown with perturbed copies of the real chunks. */
export async function scalePhase(
  bench: BenchRun,
  templates: ChunkDocument[],
  scaleTexts: string[],
  scaleVectors: SearchStageQuery[],
): Promise<NonNullable<BenchResult['scale']>> {
  const { config, index, runningApi, apiKey, newKnowledgeBase, phase } = bench;
  const defaultMaxResults = queryBody([EXTRACTIVE_MODEL]).parse({ query: 'q' }).max_results;
  const scaleMethod =
    `Synthetic: the KB is filled with perturbed copies of the ${templates.length} real chunks of ${only === 'scale' ? 'the --ingest-docs documents, ingested once through the API' : 'the concurrency-4 ingest KB'} (each vector + N(0, ${SCALE_NOISE_SIGMA}²) ` +
    "per dimension, re-normalised; same text; new chunk and document ids), bulk-loaded straight through the service's " +
    'indexing code (search.indexChunks, 500 per request, 2 in flight, then one refreshChunks) — no embedder, ' +
    "no API; then the bench waits until no merge runs. At each size: the search stage alone — the service's " +
    `hybridSearch (service/search/retrieval.ts) called from the bench process with the API's parameters (size ${defaultMaxResults} = default ` +
    `max_results, depth ${HYBRID_DEPTH} = HYBRID_DEPTH, knowledge_base_ids = [scale KB], the question's vector from the API's query embedding), ` +
    `timed around the call and by OpenSearch's took, with variants that take it apart; then whole queries through the API. ` +
    `${options.scaleQueries} test queries, sequentially, each way.` +
    (options.neighbours > 0
      ? ` Neighbours: after the first step, ${options.neighbours} perturbed copies of the same templates go into other KBs ` +
        `(${NEIGHBOUR_KB_CHUNKS} per KB) and the scale KB's search stage is measured again at its first size, beside them; ` +
        'the later steps grow the KB beside them, so the judged ratio (last step ÷ first size beside the neighbours) ' +
        "compares the same index but for the KB's own growth."
      : '');
  const scale: NonNullable<BenchResult['scale']> = {
    method: scaleMethod,
    knowledge_base_id: '',
    templates: 0,
    steps: [],
    p50_ratio: null,
  };
  try {
    const scaleKnowledgeBaseId = await newKnowledgeBase('bench-scale');
    scale.knowledge_base_id = scaleKnowledgeBaseId;
    scale.templates = templates.length;
    const scaleBodies = scaleTexts.map((query) => ({ query, knowledge_base_ids: [scaleKnowledgeBaseId] }));
    const searchStageAt = (label: string) =>
      phase(`scale: search stage ${label} (no API)`, () =>
        measureSearchStage({
          url: config.opensearch.url,
          timeoutMs: config.opensearch.timeoutMs,
          alias: index.alias,
          rankConstant: config.opensearch.rrfRankConstant,
          knowledgeBaseIds: [scaleKnowledgeBaseId],
          queries: scaleVectors,
          size: defaultMaxResults,
          depth: HYBRID_DEPTH,
          warmup: 10,
        }),
      );
    let loaded = 0;
    for (const target of options.scaleSteps) {
      log(
        `scale: loading ${target - loaded} perturbed copies of ${templates.length} real chunks (KB → ${target} chunks)`,
      );
      const report = progress('  scale load', 10);
      const fill = await phase(`scale: bulk load to ${target} chunks (no API)`, () =>
        loadPerturbedCopies(index, templates, scaleKnowledgeBaseId, loaded, target - loaded, (done, total, rate) =>
          report(done, total, ` (${rate.toFixed(0)} chunks/s)`),
        ),
      );
      loaded = target;
      const merges = await waitForMerges(index, 180_000);
      const stats = await chunkIndexStats(index);
      const inKb = await index.countChunks({ knowledge_base_id: scaleKnowledgeBaseId });
      log(
        `scale: ${fill.chunks} chunks loaded in ${fill.seconds} s (${fill.chunks_per_s}/s, refresh ${fill.refresh_seconds} s); merges ran ${merges.seconds} s more; KB holds ${inKb}; index ${stats.documents} chunks in ${stats.segments} segments`,
      );
      let searchStage: ScaleStep['search_stage'] = null;
      try {
        searchStage = await searchStageAt(`at ${inKb} chunks`);
        log(
          `scale @${inKb}: search stage ${Object.entries(searchStage.variants)
            .map(([name, t]) => `${name} p50 ${t.client_p50_ms} ms (took ${t.took_p50_ms})`)
            .join('; ')}`,
        );
      } catch (error) {
        log(`scale @${inKb}: the search-stage measurement failed: ${failure(error)}`);
      }
      const queries = await phase(`scale: API queries at ${inKb} chunks`, () =>
        runSequentialQueries({ url: runningApi.url, apiKey, bodies: scaleBodies, warmup: 10 }),
      );
      scale.steps.push({
        chunks: inKb,
        load: fill,
        merge_wait_seconds: merges.seconds,
        index: { documents: stats.documents, segments: stats.segments },
        search_stage: searchStage,
        queries,
      } satisfies ScaleStep);
      log(
        `scale @${inKb}: API p50 ${queries.latency.p50_ms} ms, p95 ${queries.latency.p95_ms} ms (Server-Timing search p50 ${queries.stages.search?.p50_ms} ms)`,
      );
      if (scale.steps.length === 1 && options.neighbours > 0)
        scale.neighbours = await neighboursBeside(bench, templates, searchStage, () =>
          searchStageAt(`at ${inKb} chunks beside the neighbours`),
        );
    }
    if (scale.steps.length >= 2) {
      const first = scale.steps[0];
      const last = scale.steps[scale.steps.length - 1];
      scale.p50_ratio = round(last.queries.latency.p50_ms / first.queries.latency.p50_ms, 3);
      const searchP50 = (step: ScaleStep) => step.queries.stages.search?.p50_ms ?? Number.NaN;
      scale.search_p50_ratio = round(searchP50(last) / searchP50(first), 3);
      // Beside the neighbours, the first size was measured again in the index the later steps grew in.
      const beside = scale.neighbours?.search_stage ?? first.search_stage;
      const firstStage = beside ? apiVariant(beside) : undefined;
      const lastStage = last.search_stage ? apiVariant(last.search_stage) : undefined;
      if (firstStage && lastStage) {
        scale.search_stage_p50_ratio = round(lastStage.client_p50_ms / firstStage.client_p50_ms, 3);
        scale.search_stage_took_p50_ratio = round(lastStage.took_p50_ms / firstStage.took_p50_ms, 3);
      }
      log(
        `scale: search stage p50 ratio ${scale.search_stage_p50_ratio ?? 'n/a'} (took: ${scale.search_stage_took_p50_ratio ?? 'n/a'}); through the API: whole query ${scale.p50_ratio}, Server-Timing search ${scale.search_p50_ratio}`,
      );
    }
  } catch (error) {
    scale.error = failure(error);
    log(`scale step failed: ${scale.error}`);
  }
  return scale;
}

/**
 * The neighbours: options.neighbours chunks of other KBs loaded into the shared index, then the scale KB's search stage
 * again at the same size; `alone` is the step's own measurement, made before they were loaded.
 */
async function neighboursBeside(
  bench: BenchRun,
  templates: ChunkDocument[],
  alone: ScaleStep['search_stage'],
  measure: () => Promise<NonNullable<ScaleStep['search_stage']>>,
): Promise<NonNullable<BenchResult['scale']>['neighbours']> {
  const { index, newKnowledgeBase, phase } = bench;
  log(`scale: loading ${options.neighbours} chunks of other KBs (neighbours)`);
  const report = progress('  neighbour load', 10);
  const load = await phase(`scale: neighbours, ${options.neighbours} chunks (no API)`, () =>
    loadNeighbours(index, templates, options.neighbours, newKnowledgeBase, (done, total, rate) =>
      report(done, total, ` (${rate.toFixed(0)} chunks/s)`),
    ),
  );
  const merges = await waitForMerges(index, 180_000);
  const stats = await chunkIndexStats(index);
  const searchStage = await measure();
  const before = alone ? apiVariant(alone) : undefined;
  const after = apiVariant(searchStage);
  const ratio = before && after ? round(after.client_p50_ms / before.client_p50_ms, 3) : null;
  const tookRatio = before && after ? round(after.took_p50_ms / before.took_p50_ms, 3) : null;
  log(
    `scale: beside ${load.chunks} chunks of ${load.knowledge_bases} other KBs (${load.seconds} s, merges ${merges.seconds} s more; index ${stats.documents} chunks in ${stats.segments} segments): search stage p50 ${after?.client_p50_ms} ms against ${before?.client_p50_ms} alone, ratio ${ratio ?? 'n/a'} (took: ${tookRatio ?? 'n/a'})`,
  );
  return {
    load,
    merge_wait_seconds: merges.seconds,
    index: { documents: stats.documents, segments: stats.segments },
    search_stage: searchStage,
    p50_ratio: ratio,
    took_p50_ratio: tookRatio,
  };
}

/** The auth path: GET /me, 32 connections. */
export async function authPhase(bench: BenchRun): Promise<NonNullable<BenchResult['auth']>> {
  const { runningApi, apiKey, phase } = bench;
  let auth: NonNullable<BenchResult['auth']>;
  try {
    log(`auth: autocannon GET /api/v1/me, ${options.authConnections} connections, ${options.authSeconds} s`);
    const result: LoadResult = await phase('auth: GET /me', () =>
      runLoad({
        url: runningApi.url,
        apiKey,
        method: 'GET',
        path: '/api/v1/me',
        connections: options.authConnections,
        durationSeconds: options.authSeconds,
      }),
    );
    auth = { ...result, latencies_ms: [] };
    log(
      `auth: ${result.requests_per_s} req/s, non-2xx ${result.non_2xx}, errors ${result.errors}, p50 ${result.latency.p50_ms} ms, p99 ${result.latency.p99_ms} ms`,
    );
  } catch (error) {
    auth = { error: failure(error) };
    log(`auth step failed: ${auth.error}`);
  }
  return auth;
}

/**
 * Another user's question while one key bursts 24 long questions (issue 31 §3): a second user with a KB of the first
 * 60 documents asks the test questions idle, then while the bench's user bursts on `burstKnowledgeBaseId` (made and
 * filled with `documents` when not given: --only burst).
 */
export async function queryBurstPhase(
  bench: BenchRun,
  documents: BenchDocument[],
  testQueries: string[],
  burstKnowledgeBaseId?: string,
): Promise<NonNullable<BenchResult['query_burst']>> {
  const { store, runningApi, apiKey, client, stamp, newKnowledgeBase, phase } = bench;
  try {
    let burstKb = burstKnowledgeBaseId;
    if (burstKb === undefined) {
      burstKb = await newKnowledgeBase('bench-burst');
      log(`burst: ${documents.length} documents into the burst's KB ${burstKb}`);
      await ingestThroughApi(client, burstKb, documents, options.ingestConcurrency, progress('  burst KB', 25));
    }
    const email = `bench-other-${Date.now()}-${process.pid}@bench.kbqa.test`;
    await createUser(store, email);
    const { key: otherKey } = await createApiKey(store, email, 'bench, the other user');
    const other = createKbqaClient(runningApi.url, otherKey);
    const created = await other.createKnowledgeBase(
      `bench-other ${stamp}`,
      'created by npm run bench; removed at the end',
    );
    toCleanUp.createdKnowledgeBases.push(created.id);
    const otherDocuments = documents.slice(0, 60);
    log(`burst: the other user's ${otherDocuments.length} documents into KB ${created.id}`);
    await ingestThroughApi(other, created.id, otherDocuments, options.ingestConcurrency);
    log(
      `burst: ${options.duringQueries} questions of the other user idle, then while the bench's key keeps ${options.burstConnections} long questions in flight`,
    );
    const result = await phase(`query while one key bursts ${options.burstConnections} long questions`, () =>
      measureQueryBurst({
        url: runningApi.url,
        burstKey: apiKey,
        burstKnowledgeBaseId: burstKb,
        burstTexts: documents.map((document) => document.content),
        otherKey,
        otherKnowledgeBaseId: created.id,
        otherQuestions: testQueries.slice(0, options.duringQueries),
        connections: options.burstConnections,
        log,
      }),
    );
    log(
      `burst: the other user's p95 ${result.during.latency.p95_ms} ms vs idle ${result.idle.latency.p95_ms} ms (× ${result.p95_ratio})`,
    );
    return result;
  } catch (error) {
    log(`burst phase failed: ${failure(error)}`);
    if (only === 'burst') throw error;
    return { error: failure(error) };
  }
}

/** /query against a conversation turn on the same KB and questions, alternately (bench/conversationTurns.ts). */
export async function conversationTurnsPhase(
  bench: BenchRun,
  testQueries: string[],
  knowledgeBaseId: string,
): Promise<NonNullable<BenchResult['conversation_turns']>> {
  const { runningApi, apiKey, phase } = bench;
  try {
    const questions = testQueries.slice(0, options.queries);
    log(`conversation turns: ${questions.length} questions through /query and as conversation turns, alternately`);
    const result = await phase('query vs conversation turn', () =>
      measureConversationTurns({
        url: runningApi.url,
        apiKey,
        knowledgeBaseId,
        questions,
        onProgress: progress('  query vs turn', 50),
      }),
    );
    log(
      `conversation turns: turn p50 ${result.turn.p50_ms} ms vs /query p50 ${result.query.p50_ms} ms ` +
        `(difference ${result.p50_difference_ms} ms, paired median ${result.median_paired_difference_ms} ms; target ≤ ${TURN_P50_TARGET_MS})`,
    );
    return result;
  } catch (error) {
    log(`conversation phase failed: ${failure(error)}`);
    if (only === 'conversation') throw error;
    return { error: failure(error) };
  }
}
