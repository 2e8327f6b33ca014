// `npm run bench [-- --quick]`: ONE command that measures ingest, query latency/throughput, latency at scale and the
// auth path against the running stack (OpenSearch + FerretDB), through its own API process, and writes
// bench/results/<stamp>.{json,md} (+ SVG charts, + latest.{json,md}).
//
// It works in a MongoDB database of its own (kbqa_bench_<stamp>, on the configured server; see database.ts), creates
// its own user, API key and KBs there, and at the end removes their chunks from the shared index and drops the
// database, also on failure or Ctrl-C. No timed assertion lives in the test suite: the targets are judged here.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createApiKey } from '../service/commands/apiKeys.ts';
import { createUser } from '../service/commands/accounts.ts';
import { hashPassword } from '../service/commands/passwords.ts';
import { HYBRID_DEPTH } from '../service/commands/answerQuestion.ts';
import { EXTRACTIVE_MODEL, loadConfig } from '../service/config.ts';
import { createKbqaClient } from '../service/eval/apiClient.ts';
import { corpusDocument, loadBeirDataset } from '../service/eval/beir.ts';
import { queryBody } from '../service/http/routes/query.schema.ts';
import type { Rag } from '../service/rag/index.ts';
import { openSearchIndex, type SearchIndex, type SearchIndexOptions } from '../service/search/index.ts';
import { openStore, type Store } from '../service/store/index.ts';
import { hundredPageTextPdf } from '../test/fixtures/pdfs.ts';
import { startApi, type ApiProcess } from './apiProcess.ts';
import { ingestChart, latencyHistogramChart, latencyPercentilesChart, ndcgChart, renderSvg, scaleChart } from './charts.ts';
import { benchDatabaseName, dropDatabase, withDatabase } from './database.ts';
import { bigDocument, queriesDuringIngest } from './duringIngest.ts';
import { measureCliStartup } from './cliStartup.ts';
import { chunkIndexStats, measureOpenSearchWork, waitForMerges } from './indexStats.ts';
import { ingestThroughApi, rawEmbedderThroughput, type BenchDocument, type IngestRun } from './ingest.ts';
import { runLoad, type LoadResult } from './load.ts';
import { describeMachine } from './machine.ts';
import { comparePdfAndText, PDF_RATIO_TARGET, signInToWebApp } from './pdfIngest.ts';
import { startPhase, stackPids, type PhaseResources } from './phases.ts';
import { compareRefreshPolicies, policyName, refreshPolicies as refreshPoliciesFor } from './refreshPolicies.ts';
import { buildTargets, renderMarkdown, type BenchResult, type EvalSummary, type ScaleStep } from './report.ts';
import { loadPerturbedCopies, readChunksOfKnowledgeBase, SCALE_NOISE_SIGMA } from './scale.ts';
import { apiVariant, measureSearchStage, type SearchStageQuery } from './searchStage.ts';
import { runSequentialQueries } from './sequential.ts';
import { round } from './stats.ts';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const resultsDir = join(root, 'bench', 'results');

// ---------------------------------------------------------------------------------------------------------------
// Options

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'ingest-docs': { type: 'string' },
    queries: { type: 'string' },
    'load-amount': { type: 'string' },
    'scale-steps': { type: 'string' },
    'scale-queries': { type: 'string' },
    'auth-seconds': { type: 'string' },
    'model-workers': { type: 'string' },
    'embed-threads': { type: 'string' },
    'refresh-chunks': { type: 'string' },
    'big-doc-mib': { type: 'string' },
    'during-queries': { type: 'string' },
    'group-commit-ms': { type: 'string' },
    dataset: { type: 'string' },
    only: { type: 'string' },
    'pdf-runs': { type: 'string' },
    'pdf-warmup': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});

if (args.help) {
  console.log(`usage: npm run bench -- [--quick] [--ingest-docs N] [--queries N] [--load-amount N]
                       [--scale-steps 10000,100000] [--scale-queries N] [--auth-seconds S] [--dataset DIR]
                       [--model-workers N] [--embed-threads N] [--refresh-chunks N] [--big-doc-mib M]
                       [--during-queries N] [--group-commit-ms 250,1000]
                       [--only pdf|cli] [--pdf-runs N] [--pdf-warmup N]
  --quick           60 documents, 100 sequential / 200 concurrent queries, scale 2k → 10k chunks, 300 chunks per
                    refresh policy, a 0.5 MiB "big" document, 3 s auth run
  --model-workers   model worker threads of BOTH the API process and the raw-embedder baseline
                    (default: KBQA_MODEL_WORKERS if set, else one per core)
  --embed-threads   ONNX intra-op threads per worker, both sides (default: KBQA_EMBED_THREADS if set, else 1)
  --refresh-chunks  chunks each refresh policy indexes (default 2000; refresh=wait_for takes ~1 s per 4 documents)
  --group-commit-ms group-commit intervals compared besides KBQA_REFRESH_INTERVAL_MS (default 250; 0: none)
  --big-doc-mib     size of the document ingested while queries run (default 5, capped at KBQA_MAX_CONTENT_BYTES)
  --during-queries  the sequential queries run idle, then over and over during that ingest (default 100)
  --only pdf        only the PDF-vs-text ingest phase (a 100-page text PDF through the web upload against the same
                    text through POST /api/v1/documents); the results file holds just that section
  --only cli        only \`kbqa --help\` and \`kbqa keys create\` as fresh processes, 5 measured runs of each (median)
  --pdf-runs        measured ingests of EACH kind in that phase, alternating (default 5, --quick 3)
  --pdf-warmup      warm-up ingests of each kind before them (default 1; 0: none)`);
  process.exit(0);
}

const positive = (value: string | undefined, fallback: number, name: string): number => {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${name} must be a positive integer`);
  return parsed;
};

const positiveNumber = (value: string | undefined, fallback: number, name: string): number => {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`--${name} must be a positive number`);
  return parsed;
};

const quick = Boolean(args.quick);
const ONLY_PHASES = ['pdf', 'cli'] as const;
type OnlyPhase = (typeof ONLY_PHASES)[number];
const only = (args.only ?? null) as OnlyPhase | null;
if (only !== null && !ONLY_PHASES.includes(only)) throw new Error(`--only takes one of: ${ONLY_PHASES.join(', ')}`);
const nonNegative = (value: string | undefined, fallback: number, name: string): number => {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`--${name} must be an integer ≥ 0`);
  return parsed;
};
const options = {
  quick,
  dataset: resolve(args.dataset ?? join(root, '..', 'shared', 'datasets', 'scifact')),
  ingestDocs: positive(args['ingest-docs'], quick ? 60 : 800, 'ingest-docs'),
  queries: positive(args.queries, quick ? 100 : 300, 'queries'),
  loadAmount: positive(args['load-amount'], quick ? 200 : 600, 'load-amount'),
  loadConnections: 8,
  scaleSteps: (args['scale-steps'] ?? (quick ? '2000,10000' : '10000,100000')).split(',').map((step) => positive(step.trim(), 0, 'scale-steps')),
  scaleQueries: positive(args['scale-queries'], quick ? 50 : 100, 'scale-queries'),
  authSeconds: positive(args['auth-seconds'], quick ? 3 : 10, 'auth-seconds'),
  authConnections: 32,
  // The API process and the raw-embedder baseline get the same pool, whatever the environment says.
  modelWorkers: positive(args['model-workers'] ?? (Number(process.env.KBQA_MODEL_WORKERS) > 0 ? process.env.KBQA_MODEL_WORKERS : undefined), os.availableParallelism(), 'model-workers'),
  embedThreads: positive(args['embed-threads'] ?? (Number(process.env.KBQA_EMBED_THREADS) > 0 ? process.env.KBQA_EMBED_THREADS : undefined), 1, 'embed-threads'),
  refreshChunks: positive(args['refresh-chunks'], quick ? 300 : 2000, 'refresh-chunks'),
  bigDocumentMiB: positiveNumber(args['big-doc-mib'], quick ? 0.5 : 5, 'big-doc-mib'),
  groupCommitMs: (args['group-commit-ms'] ?? '250')
    .split(',')
    .map((interval) => Number(interval.trim()))
    .filter((interval) => {
      if (!Number.isInteger(interval) || interval < 0) throw new Error('--group-commit-ms takes integers ≥ 0, comma-separated');
      return interval > 0;
    }),
  duringQueries: positive(args['during-queries'], quick ? 50 : 100, 'during-queries'),
  ingestConcurrency: 4,
  only,
  pdfRuns: positive(args['pdf-runs'], quick ? 3 : 5, 'pdf-runs'),
  pdfWarmup: nonNegative(args['pdf-warmup'], 1, 'pdf-warmup'),
};
for (let index = 1; index < options.scaleSteps.length; index += 1) {
  if (options.scaleSteps[index] <= options.scaleSteps[index - 1]) throw new Error('--scale-steps must increase');
}

// ---------------------------------------------------------------------------------------------------------------
// Progress and clean-up

const benchStarted = performance.now();
function log(message: string): void {
  console.log(`[bench +${((performance.now() - benchStarted) / 1000).toFixed(1).padStart(6)}s] ${message}`);
}

function progress(label: string, every = 10) {
  let last = -1;
  return (done: number, total: number, extra = '') => {
    const percent = Math.floor((done / total) * 100);
    if (done === total || percent >= last + every) {
      last = percent;
      log(`${label}: ${done}/${total}${extra}`);
    }
  };
}

let api: ApiProcess | null = null;
let store: Store | null = null;
let search: SearchIndex | null = null;
let rag: Rag | null = null;
const createdKnowledgeBases: string[] = [];
/** The bench's own database, once it may exist (see database.ts): dropped at the end. */
let benchDatabase: { url: string; name: string; timeoutMs: number } | null = null;

let cleanupPromise: Promise<void> | null = null;
function cleanup(): Promise<void> {
  cleanupPromise ??= (async () => {
    const step = async (label: string, work: () => Promise<unknown>) => {
      try {
        await work();
      } catch (error) {
        console.error(`[bench] clean-up: ${label} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    };
    if (api) {
      const running = api;
      await step('stopping the API process', () => running.stop());
    }
    // The chunk index is shared: the bench's chunks go one KB at a time. Its records go with its database.
    if (search) {
      const index = search;
      for (const knowledgeBaseId of createdKnowledgeBases) {
        await step(`deleting the chunks of KB ${knowledgeBaseId}`, async () => {
          const deleted = await index.deleteChunksOfKnowledgeBase(knowledgeBaseId);
          if (deleted > 0) log(`clean-up: removed ${deleted} chunks of KB ${knowledgeBaseId}`);
        });
      }
    }
    if (rag) {
      const models = rag;
      await step('stopping the model pool', () => models.close());
    }
    if (search) await step('closing the OpenSearch client', () => (search as SearchIndex).close());
    if (store) await step('closing the store', () => (store as Store).close());
    if (benchDatabase) {
      const database = benchDatabase;
      await step(`dropping the database ${database.name}`, async () => {
        await dropDatabase(database.url, database.timeoutMs);
        log(`clean-up: dropped the database ${database.name}`);
      });
    }
  })();
  return cleanupPromise;
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    interrupted = true;
    console.error(`[bench] ${signal}: cleaning up…`);
    void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}
// Last resort if the process exits without the clean-up having stopped the API (sync: SIGKILL only).
process.on('exit', () => api?.kill());

// ---------------------------------------------------------------------------------------------------------------
// Phases

function newestEvalResult(): EvalSummary | null {
  if (!existsSync(resultsDir)) return null;
  const files = readdirSync(resultsDir)
    .filter((name) => /^eval-.*\.json$/.test(name))
    .map((name) => ({ name, mtime: statSync(join(resultsDir, name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const { name } of files) {
    try {
      const parsed = JSON.parse(readFileSync(join(resultsDir, name), 'utf8')) as Omit<EvalSummary, 'file'>;
      if (parsed.modes && Object.keys(parsed.modes).length > 0) {
        return { file: name, dataset: parsed.dataset, documents: parsed.documents, queries: parsed.queries, finished_at: parsed.finished_at, modes: parsed.modes };
      }
    } catch {
      // a half-written or foreign file: try the next one
    }
  }
  return null;
}

/**
 * Renders the charts and writes <stamp>.{json,md}, and latest.{json,md} for a whole run (a run of one phase, --only,
 * leaves latest.* to the last whole run: docs/quality-and-speed.md links it for every figure); prints the targets table.
 */
async function writeResults(result: BenchResult, charts: Array<[string, Parameters<typeof renderSvg>[0]]>): Promise<void> {
  mkdirSync(resultsDir, { recursive: true });
  for (const [name, spec] of charts) {
    const file = `${result.stamp}-${name}.svg`;
    try {
      writeFileSync(join(resultsDir, file), await renderSvg(spec));
      result.charts[name] = file;
    } catch (error) {
      log(`chart ${name} could not be rendered: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  result.finished_at = new Date().toISOString();
  const json = `${JSON.stringify(result, null, 2)}\n`;
  const markdown = renderMarkdown(result);
  writeFileSync(join(resultsDir, `${result.stamp}.json`), json);
  writeFileSync(join(resultsDir, `${result.stamp}.md`), markdown);
  if (!result.only) {
    writeFileSync(join(resultsDir, 'latest.json'), json);
    writeFileSync(join(resultsDir, 'latest.md'), markdown);
  }
  log(`wrote bench/results/${result.stamp}.{json,md}${result.only ? ' (latest.* left to the last whole run)' : ', latest.{json,md}'} and ${Object.keys(result.charts).length} charts`);

  console.log('');
  console.log('| figure | measured | target | result |');
  console.log('|---|---:|---|---|');
  for (const t of result.targets) {
    const value = t.value === null ? 'n/a' : `${t.value}${t.unit ? ` ${t.unit}` : ''}`;
    console.log(`| ${t.label} | ${value} | ${t.target} | ${t.pass === null ? '—' : t.pass ? 'PASS' : `MISS, ${t.miss_by}`} |`);
  }
  console.log('');
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const configured = loadConfig();
  // The API child and this process share one environment: the bench's database and the pool's size, explicit.
  const databaseName = benchDatabaseName(stamp);
  const benchEnv: NodeJS.ProcessEnv = {
    ...process.env,
    KBQA_MONGODB_URL: withDatabase(configured.mongodb.url, databaseName),
    KBQA_MODEL_WORKERS: String(options.modelWorkers),
    KBQA_EMBED_THREADS: String(options.embedThreads),
  };
  const config = loadConfig(benchEnv);
  log(`kbqa bench${quick ? ' (quick)' : ''}: ${JSON.stringify({ ...options, dataset: options.dataset })}`);

  // --- set-up: the stack's clients (our own database), the dataset, a user and key, our own API process
  benchDatabase = { url: config.mongodb.url, name: databaseName, timeoutMs: config.mongodb.timeoutMs };
  store = await openStore(config.mongodb.url, config.mongodb.timeoutMs);
  log(`MongoDB: the bench's own database ${databaseName} (dropped at the end)`);
  const searchOptions: SearchIndexOptions = {
    url: config.opensearch.url,
    // Bulk loads of 500 vectors and a delete of 100k chunks take longer than a request of the service does.
    timeoutMs: 300_000,
    embedderName: 'bge-small-en-v1.5',
    dimensions: 384,
    shards: config.opensearch.shards,
    replicas: config.opensearch.replicas,
    rrfRankConstant: config.opensearch.rrfRankConstant,
    rrfWeights: config.opensearch.rrfWeights,
    // The refresh-policy comparison's group commit runs the service's refresher with the service's interval.
    refreshIntervalMs: config.ingestion.refreshIntervalMs,
  };
  search = openSearchIndex(searchOptions);
  const index = search;
  const machine = await describeMachine(search, config.mongodb.url, config.mongodb.timeoutMs);
  log(`machine: ${machine.cores} cores, ${machine.memory_gib} GiB, Node ${machine.node}, ${machine.opensearch}, FerretDB ${machine.ferretdb}, load ${machine.load_average_at_start.join('/')}`);

  // One user: an API key for /api/v1, a password for the web app's sign-in (PDFs enter only through its upload).
  const email = `bench-${Date.now()}-${process.pid}@bench.kbqa.test`;
  const password = `bench-${randomUUID()}`;
  await createUser(store, email, undefined, { passwordHash: await hashPassword(password) });
  const { key: apiKey } = await createApiKey(store, email, 'bench');
  log(`created user ${email} (with a password) and an API key`);

  log(`starting the API process (${options.modelWorkers} model workers × ${options.embedThreads} ONNX thread(s))…`);
  api = await startApi({ root, env: benchEnv });
  const startupMemory = api.memory();
  const startupPeak = startupMemory ? round(startupMemory.peakMb) : null;
  const canResetPeak = api.resetPeak();
  log(`API ready at ${api.url} (pid ${api.pid}); peak RSS ${canResetPeak ? 'reset per phase (clear_refs)' : 'since start (clear_refs refused)'}`);
  const client = createKbqaClient(api.url, apiKey);
  const newKnowledgeBase = async (name: string) => {
    const created = await client.createKnowledgeBase(`${name} ${stamp}`, 'created by npm run bench; removed at the end');
    createdKnowledgeBases.push(created.id);
    return created.id;
  };
  const phases: Record<string, PhaseResources> = {};
  const stack = stackPids(config.localDir);
  if (stack.opensearch === undefined) log('OpenSearch\'s pid is unknown (.local/run/opensearch.pid): no OpenSearch CPU figures');
  const runningApi = api;
  const phase = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const end = startPhase(runningApi, canResetPeak, stack);
    try {
      return await work();
    } finally {
      phases[name] = end();
      const cpu = Object.entries(phases[name].cpu_percent).map(([process, percent]) => `${process} ${percent}%`).join(', ');
      log(`  [${name}] ${phases[name].seconds} s; API peak RSS ${phases[name].api_peak_rss_mb} MB; CPU (% of one core): ${cpu}`);
    }
  };
  const failure = (error: unknown) => (error instanceof Error ? error.message : String(error));
  const peakOfRun = () => {
    let apiPeak = { mb: startupPeak ?? 0, phase: 'start-up' };
    for (const [name, resources] of Object.entries(phases)) {
      const peak = resources.api_peak_rss_mb ?? resources.api_sampled_max_rss_mb;
      if (peak > apiPeak.mb) apiPeak = { mb: peak, phase: name };
    }
    return apiPeak;
  };
  const resourcesMethod =
    (canResetPeak
      ? 'API peak RSS is VmHWM from /proc/<pid>/status (the whole process: the main thread and every model worker thread), reset (clear_refs) at the start of each phase; VmRSS is also sampled every 200 ms. '
      : 'API peak RSS is VmHWM from /proc/<pid>/status (the whole process: the main thread and every model worker thread) since the process started (clear_refs was refused); VmRSS is also sampled every 200 ms. ') +
    `CPU is utime + stime from /proc/<pid>/stat over the phase, in % of one core (the machine has ${machine.cores}); ` +
    '`bench` is this process (clients, autocannon, the raw embedder\'s pool). OpenSearch and FerretDB are the shared stack: ' +
    'their CPU includes whatever other clients asked of them during the phase.';
  /** The fields every run's result has, whichever phases ran. */
  const commonResult = (extraOptions: BenchResult['options']) => {
    const apiPeak = peakOfRun();
    return {
      started_at: startedAt.toISOString(),
      stamp,
      quick,
      only,
      options: {
        model_workers: config.embedder.workers,
        embed_threads: config.embedder.threads,
        embed_batch_size: config.embedder.batchSize,
        refresh_interval_ms: config.ingestion.refreshIntervalMs,
        chunk_tokens: config.chunking.chunkTokens,
        pdf_runs: options.pdfRuns,
        pdf_warmup: options.pdfWarmup,
        ...extraOptions,
      },
      database: databaseName,
      machine: { ...machine, load_average_at_end: os.loadavg().map((value) => round(value, 2)) },
      resources: {
        method: resourcesMethod,
        startup_peak_mb: startupPeak,
        api_peak_rss_mb: round(apiPeak.mb),
        api_peak_rss_phase: apiPeak.phase,
        phases,
      },
    };
  };

  // --- `kbqa --help` and `kbqa keys create` as fresh processes, the API idle (bench/cliStartup.ts)
  let cliStartup: BenchResult['cli_startup'];
  if (only === null || only === 'cli') {
    try {
      cliStartup = await phase('cli start-up (API idle)', () => measureCliStartup({ root, env: benchEnv, email, runs: 5, warmup: 1, log }));
    } catch (error) {
      cliStartup = { error: failure(error) };
      log(`cli start-up phase failed: ${cliStartup.error}`);
      if (only === 'cli') throw error;
    }
  }
  if (only === 'cli') {
    const partial: Omit<BenchResult, 'targets' | 'charts' | 'finished_at'> = { ...commonResult({}), cli_startup: cliStartup, eval: null };
    await writeResults({ ...partial, targets: buildTargets(partial), charts: {}, finished_at: '' }, []);
    return 0;
  }

  // --- a 100-page text PDF through the web upload against the same text through /api/v1 (first: a quiet index)
  let pdfIngest: NonNullable<BenchResult['pdf_ingest']>;
  {
    const knowledgeBaseIds: string[] = [];
    try {
      const fixture = await hundredPageTextPdf();
      const session = await signInToWebApp(runningApi.url, email, password);
      log(`pdf vs text: ${fixture.pages.length}-page PDF (${(fixture.pdf.byteLength / 1024).toFixed(0)} KiB) via the web upload vs the same text (${(Buffer.byteLength(fixture.text, 'utf8') / 1024).toFixed(0)} KiB) via /api/v1; ${options.pdfWarmup} warm-up + ${options.pdfRuns} measured of each, alternating, each into a fresh KB`);
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
      for (const knowledgeBaseId of knowledgeBaseIds) removed += await index.deleteChunksOfKnowledgeBase(knowledgeBaseId);
      if (removed > 0) {
        await waitForMerges(index);
        log(`pdf vs text: removed its ${removed} chunks`);
      }
    }
  }

  if (only === 'pdf') {
    const partial: Omit<BenchResult, 'targets' | 'charts' | 'finished_at'> = { ...commonResult({}), pdf_ingest: pdfIngest, eval: null };
    await writeResults({ ...partial, targets: buildTargets(partial), charts: {}, finished_at: '' }, []);
    return 0;
  }

  const dataset = await loadBeirDataset(options.dataset, 'test');
  const corpus = dataset.corpus.map(corpusDocument).filter((document) => document.content.trim().length > 0);
  const documents: BenchDocument[] = corpus.slice(0, options.ingestDocs);
  const testQueries = [...dataset.qrels.keys()].filter((id) => dataset.queries.has(id)).map((id) => dataset.queries.get(id) as string);
  log(`dataset ${dataset.name}: ${documents.length} documents to ingest, ${testQueries.length} test queries`);

  // --- ingest through the API at concurrency 1 and 4, each into a fresh KB; OpenSearch's CPU per chunk
  const ingestRuns: IngestRun[] = [];
  for (const concurrency of [1, options.ingestConcurrency]) {
    const knowledgeBaseId = await newKnowledgeBase(`bench-ingest-c${concurrency}`);
    log(`ingest: ${documents.length} documents at concurrency ${concurrency} into KB ${knowledgeBaseId}`);
    const { result: run, opensearch } = await phase(`ingest, concurrency ${concurrency}`, () =>
      measureOpenSearchWork(
        index,
        stack.opensearch,
        () => ingestThroughApi(client, knowledgeBaseId, documents, concurrency, progress(`  ingest c${concurrency}`, 25)),
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
  const ingestPeakMb = Math.max(...ingestPeaks.map((resources) => resources.api_peak_rss_mb ?? resources.api_sampled_max_rss_mb));
  const queryRun = ingestRuns[1];
  const queryKnowledgeBaseId = queryRun.knowledge_base_id;

  // --- the raw embedder on the same documents, in this process, API idle: a pool of the API's size, as busy
  const { loadRag } = await import('../service/rag/index.ts');
  log(`raw embedder: loading a pool of ${config.embedder.workers} workers × ${config.embedder.threads} thread(s) in the bench process…`);
  const loadedRag = await loadRag(config);
  rag = loadedRag;
  const raw = await phase(`raw embedder, ${options.ingestConcurrency} documents in flight (API idle)`, () =>
    rawEmbedderThroughput(loadedRag, documents, { concurrency: options.ingestConcurrency, threadsPerWorker: config.embedder.threads }),
  );
  log(`raw embedder: ${raw.chunks_per_s} chunks/s (${raw.chunks} chunks in ${raw.seconds} s; splitting took ${raw.split_seconds} s)`);
  // The scale step's search-stage queries need the questions' vectors: the API's own query embedding.
  const scaleTexts = testQueries.slice(0, options.scaleQueries);
  const scaleVectors: SearchStageQuery[] = [];
  for (const text of scaleTexts) scaleVectors.push({ text, vector: await loadedRag.embedQuestion(text) });
  await loadedRag.close();
  rag = null;
  const ratio = round(queryRun.chunks_per_s / raw.chunks_per_s, 3);
  log(`ingest ratio API@${options.ingestConcurrency} ÷ raw@${raw.concurrency} = ${ratio}`);

  // --- queries: sequential, then autocannon with 8 connections
  const queryBodies = testQueries.slice(0, options.queries).map((query) => ({ query, knowledge_base_ids: [queryKnowledgeBaseId] }));
  log(`query: ${queryBodies.length} queries sequentially against KB ${queryKnowledgeBaseId}`);
  const sequential = await phase('query, sequential', () =>
    runSequentialQueries({ url: runningApi.url, apiKey, bodies: queryBodies, warmup: 10, onProgress: progress('  sequential', 25) }),
  );
  log(`sequential: p50 ${sequential.latency.p50_ms} ms, p95 ${sequential.latency.p95_ms} ms, p99 ${sequential.latency.p99_ms} ms; ${sequential.queries_per_s} q/s; stages p50 ${Object.entries(sequential.stages).map(([s, t]) => `${s} ${t.p50_ms}`).join(', ')}`);
  const allBodies = testQueries.map((query) => JSON.stringify({ query, knowledge_base_ids: [queryKnowledgeBaseId] }));
  log(`query: autocannon, ${options.loadConnections} connections, ${options.loadAmount} requests`);
  const concurrent = await phase(`query, ${options.loadConnections} connections`, () =>
    runLoad({ url: runningApi.url, apiKey, method: 'POST', path: '/api/v1/query', bodies: allBodies, connections: options.loadConnections, amount: options.loadAmount }),
  );
  const throughputRatio = round(concurrent.requests_per_s / sequential.queries_per_s, 3);
  log(`concurrency ${options.loadConnections}: ${concurrent.requests_per_s} queries/s (${throughputRatio} × sequential), p50 ${concurrent.latency.p50_ms} ms, p95 ${concurrent.latency.p95_ms} ms, p99 ${concurrent.latency.p99_ms} ms, non-2xx ${concurrent.non_2xx}, errors ${concurrent.errors}`);

  // --- query latency while a big document ingests (into a KB of its own; the queries stay on the query KB)
  let duringIngest: NonNullable<BenchResult['query']>['during_ingest'];
  try {
    const big = bigDocument(
      corpus.map((document) => document.content),
      Math.min(Math.floor(options.bigDocumentMiB * 1024 * 1024), config.limits.maxContentBytes),
    );
    const bigKnowledgeBaseId = await newKnowledgeBase('bench-big-document');
    log(`during ingest: ${options.duringQueries} sequential queries idle, then while a ${(big.bytes / 1024 / 1024).toFixed(2)} MiB document ingests into KB ${bigKnowledgeBaseId}`);
    duringIngest = await phase(`query during a ${(big.bytes / 1024 / 1024).toFixed(1)} MiB ingest`, () =>
      queriesDuringIngest({ url: runningApi.url, apiKey, knowledgeBaseId: bigKnowledgeBaseId, document: big, bodies: queryBodies.slice(0, options.duringQueries), log }),
    );
    log(`during ingest: p95 ${duringIngest.during.latency.p95_ms} ms vs idle ${duringIngest.idle.latency.p95_ms} ms (× ${duringIngest.p95_ratio})`);
    // Its thousands of chunks would only blur the phases after this one.
    const removed = await index.deleteChunksOfKnowledgeBase(bigKnowledgeBaseId);
    await waitForMerges(index);
    log(`during ingest: removed its ${removed} chunks`);
  } catch (error) {
    duringIngest = { error: failure(error) };
    log(`during-ingest phase failed: ${duringIngest.error}`);
  }

  // The real chunks of the concurrency-4 KB, vectors included: templates for the refresh policies and the scale KB.
  const templates = await readChunksOfKnowledgeBase(index, queryKnowledgeBaseId);

  // --- refresh policies: the same chunks bulk-indexed three ways, no API, no embedder
  let refreshPolicies: NonNullable<BenchResult['refresh_policies']>;
  try {
    const policies = refreshPoliciesFor(config.ingestion.refreshIntervalMs, options.groupCommitMs);
    const knowledgeBaseIds: string[] = [];
    for (const [position] of policies.entries()) knowledgeBaseIds.push(await newKnowledgeBase(`bench-refresh-${position + 1}`));
    log(`refresh policies: ${options.refreshChunks} chunks each, ${options.ingestConcurrency} documents in flight: ${policies.map(policyName).join('; ')}`);
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

  // --- scale: a dedicated KB grown with perturbed copies of the real chunks
  const defaultMaxResults = queryBody([EXTRACTIVE_MODEL]).parse({ query: 'q' }).max_results;
  const scaleMethod =
    `Synthetic: the KB is filled with perturbed copies of the real chunks of the concurrency-4 ingest KB (each vector + N(0, ${SCALE_NOISE_SIGMA}²) ` +
    'per dimension, re-normalised; same text; new chunk and document ids), bulk-loaded straight through the service\'s ' +
    'indexing code (search.indexChunks, 500 per request, 2 in flight, then one refreshChunks) — no embedder, ' +
    'no API; then the bench waits until no merge runs. At each size: the search stage alone — the service\'s ' +
    `hybridSearch (service/search/retrieval.ts) called from the bench process with the API's parameters (size ${defaultMaxResults} = default ` +
    `max_results, depth ${HYBRID_DEPTH} = HYBRID_DEPTH, knowledge_base_ids = [scale KB], the question's vector from the API's query embedding), ` +
    `timed around the call and by OpenSearch's took, with variants that take it apart; then whole queries through the API. ` +
    `${options.scaleQueries} test queries, sequentially, each way.`;
  const scale: NonNullable<BenchResult['scale']> = { method: scaleMethod, knowledge_base_id: '', templates: 0, steps: [], p50_ratio: null };
  try {
    const scaleKnowledgeBaseId = await newKnowledgeBase('bench-scale');
    scale.knowledge_base_id = scaleKnowledgeBaseId;
    scale.templates = templates.length;
    const scaleBodies = scaleTexts.map((query) => ({ query, knowledge_base_ids: [scaleKnowledgeBaseId] }));
    let loaded = 0;
    for (const target of options.scaleSteps) {
      log(`scale: loading ${target - loaded} perturbed copies of ${templates.length} real chunks (KB → ${target} chunks)`);
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
      log(`scale: ${fill.chunks} chunks loaded in ${fill.seconds} s (${fill.chunks_per_s}/s, refresh ${fill.refresh_seconds} s); merges ran ${merges.seconds} s more; KB holds ${inKb}; index ${stats.documents} chunks in ${stats.segments} segments`);
      let searchStage: ScaleStep['search_stage'] = null;
      try {
        searchStage = await phase(`scale: search stage at ${inKb} chunks (no API)`, () =>
          measureSearchStage({
            url: config.opensearch.url,
            timeoutMs: config.opensearch.timeoutMs,
            rankConstant: config.opensearch.rrfRankConstant,
            knowledgeBaseIds: [scaleKnowledgeBaseId],
            queries: scaleVectors,
            size: defaultMaxResults,
            depth: HYBRID_DEPTH,
            warmup: 10,
          }),
        );
        log(`scale @${inKb}: search stage ${Object.entries(searchStage.variants).map(([name, t]) => `${name} p50 ${t.client_p50_ms} ms (took ${t.took_p50_ms})`).join('; ')}`);
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
      log(`scale @${inKb}: API p50 ${queries.latency.p50_ms} ms, p95 ${queries.latency.p95_ms} ms (Server-Timing search p50 ${queries.stages.search?.p50_ms} ms)`);
    }
    if (scale.steps.length >= 2) {
      const first = scale.steps[0];
      const last = scale.steps[scale.steps.length - 1];
      scale.p50_ratio = round(last.queries.latency.p50_ms / first.queries.latency.p50_ms, 3);
      const searchP50 = (step: ScaleStep) => step.queries.stages.search?.p50_ms ?? Number.NaN;
      scale.search_p50_ratio = round(searchP50(last) / searchP50(first), 3);
      const firstStage = first.search_stage ? apiVariant(first.search_stage) : undefined;
      const lastStage = last.search_stage ? apiVariant(last.search_stage) : undefined;
      if (firstStage && lastStage) {
        scale.search_stage_p50_ratio = round(lastStage.client_p50_ms / firstStage.client_p50_ms, 3);
        scale.search_stage_took_p50_ratio = round(lastStage.took_p50_ms / firstStage.took_p50_ms, 3);
      }
      log(`scale: search stage p50 ratio ${scale.search_stage_p50_ratio ?? 'n/a'} (took: ${scale.search_stage_took_p50_ratio ?? 'n/a'}); through the API: whole query ${scale.p50_ratio}, Server-Timing search ${scale.search_p50_ratio}`);
    }
  } catch (error) {
    scale.error = failure(error);
    log(`scale step failed: ${scale.error}`);
  }

  // --- the auth path: GET /me, 32 connections
  let auth: NonNullable<BenchResult['auth']>;
  try {
    log(`auth: autocannon GET /api/v1/me, ${options.authConnections} connections, ${options.authSeconds} s`);
    const result: LoadResult = await phase('auth: GET /me', () =>
      runLoad({ url: runningApi.url, apiKey, method: 'GET', path: '/api/v1/me', connections: options.authConnections, durationSeconds: options.authSeconds }),
    );
    auth = { ...result, latencies_ms: [] };
    log(`auth: ${result.requests_per_s} req/s, non-2xx ${result.non_2xx}, errors ${result.errors}, p50 ${result.latency.p50_ms} ms, p99 ${result.latency.p99_ms} ms`);
  } catch (error) {
    auth = { error: failure(error) };
    log(`auth step failed: ${auth.error}`);
  }

  // --- report
  const common = commonResult({
    dataset: options.dataset,
    ingest_docs: options.ingestDocs,
    queries: options.queries,
    load_amount: options.loadAmount,
    load_connections: options.loadConnections,
    scale_steps: options.scaleSteps.join(','),
    scale_queries: options.scaleQueries,
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
    ingest: { dataset: dataset.name, documents: documents.length, api: ingestRuns, raw_embedder: raw, api4_to_raw_ratio: ratio },
    refresh_policies: refreshPolicies,
    query: {
      knowledge_base_id: queryKnowledgeBaseId,
      chunks_in_kb: queryRun.chunks,
      sequential,
      concurrent,
      throughput_ratio: throughputRatio,
      during_ingest: duringIngest,
    },
    scale,
    auth,
    eval: newestEvalResult(),
  };
  const result: BenchResult = { ...partial, targets: buildTargets(partial), charts: {}, finished_at: '' };

  const subtitle = `${quick ? 'quick run · ' : ''}${stamp} · ${machine.cores} cores · ${machine.opensearch}`;
  const charts: Array<[string, Parameters<typeof renderSvg>[0]]> = [
    [
      'latency',
      latencyPercentilesChart(
        [
          ...(['p50', 'p90', 'p95', 'p99'] as const).map((p) => ({ run: 'sequential', percentile: p, ms: sequential.latency[`${p}_ms`] })),
          ...(['p50', 'p90', 'p95', 'p99'] as const).map((p) => ({ run: `${options.loadConnections} connections`, percentile: p, ms: concurrent.latency[`${p}_ms`] })),
        ],
        subtitle,
      ),
    ],
    [
      'latency-histogram',
      latencyHistogramChart(
        [
          ...sequential.latencies_ms.map((ms) => ({ run: 'sequential', ms })),
          ...concurrent.latencies_ms.map((ms) => ({ run: `${options.loadConnections} connections`, ms })),
        ],
        subtitle,
      ),
    ],
    [
      'ingest',
      ingestChart(
        [
          ...ingestRuns.map((run) => ({ run: `API, concurrency ${run.concurrency}`, chunks_per_s: run.chunks_per_s })),
          { run: `raw embedder, ${raw.concurrency} in flight`, chunks_per_s: raw.chunks_per_s },
        ],
        subtitle,
      ),
    ],
  ];
  if (scale.steps.length > 0) {
    charts.push([
      'scale',
      scaleChart(
        scale.steps.flatMap((step) => {
          const stage = step.search_stage ? apiVariant(step.search_stage) : undefined;
          return [
            { chunks: step.chunks.toLocaleString('en-US'), percentile: 'API p50', ms: step.queries.latency.p50_ms },
            { chunks: step.chunks.toLocaleString('en-US'), percentile: 'API p95', ms: step.queries.latency.p95_ms },
            ...(stage ? [{ chunks: step.chunks.toLocaleString('en-US'), percentile: 'search stage p50', ms: stage.client_p50_ms }] : []),
          ];
        }),
        `${subtitle} · synthetic (perturbed copies)`,
      ),
    ]);
  }
  if (result.eval) {
    const evalResult = result.eval;
    charts.push([
      'ndcg',
      ndcgChart(
        evalResult.dataset,
        Object.entries(evalResult.modes).map(([mode, metrics]) => ({ mode, ndcg_at_10: metrics.ndcg_at_10 })),
        `${evalResult.file} · ${evalResult.documents} documents, ${evalResult.queries} queries`,
      ),
    ]);
  }
  await writeResults(result, charts);
  return 0;
}

main()
  .catch((error: unknown) => {
    // After Ctrl-C the clean-up stops the API under the running phase, which then fails: that is not news.
    if (interrupted) return 1;
    console.error(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    if (api) console.error(`[bench] last API output:\n${api.tail()}`);
    return 1;
  })
  .then(async (code) => {
    await cleanup();
    log('done');
    process.exit(code);
  });
