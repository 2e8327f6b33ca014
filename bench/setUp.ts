// The bench's set-up: the stack's clients (its own database), a user with a password and an API key, its own API
// process; and what every phase then uses (BenchRun): a KB maker, the per-phase resource accounting and the fields
// every result has. What it makes is recorded for the clean-up (cleanup.ts) as it is made.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { createApiKey } from '../service/commands/apiKeys.ts';
import { createUser } from '../service/commands/accounts.ts';
import { hashPassword } from '../service/commands/passwords.ts';
import { loadConfig } from '../service/config.ts';
import { createKbqaClient } from '../service/eval/apiClient.ts';
import { openSearchIndex } from '../service/search/index.ts';
import { benchSearchOptions } from './searchOptions.ts';
import { openStore } from '../service/store/index.ts';
import { startApi } from './apiProcess.ts';
import { toCleanUp } from './cleanup.ts';
import { benchDatabaseName, withDatabase } from './database.ts';
import { describeMachine } from './machine.ts';
import { only, options, quick, root } from './options.ts';
import { startPhase, stackPids, type PhaseResources } from './phases.ts';
import { log } from './progress.ts';
import type { BenchResult } from './report.ts';
import { round } from './stats.ts';

export type BenchRun = Awaited<ReturnType<typeof setUp>>;

export async function setUp() {
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
  toCleanUp.benchDatabase = { url: config.mongodb.url, name: databaseName, timeoutMs: config.mongodb.timeoutMs };
  const store = await openStore(config.mongodb.url, config.mongodb.timeoutMs);
  toCleanUp.store = store;
  log(`MongoDB: the bench's own database ${databaseName} (dropped at the end)`);
  // KBQA_CHUNKS_ALIAS, the API child's too: the index the bench reads (_stats, chunks) is the one the API writes,
  // and a run on an alias of its own (kbqa-chunks-<name>) leaves the shared index alone.
  const searchOptions = benchSearchOptions(config, config.opensearch.chunksAlias);
  const search = openSearchIndex(searchOptions);
  toCleanUp.search = search;
  const index = search;
  // An alias of its own may not exist yet: make its index as start-up would (idempotent), before counting its chunks.
  await search.applyAssets();
  const machine = await describeMachine(search, config.mongodb.url, config.mongodb.timeoutMs);
  log(
    `machine: ${machine.cores} cores, ${machine.memory_gib} GiB, Node ${machine.node}, ${machine.opensearch}, FerretDB ${machine.ferretdb}, load ${machine.load_average_at_start.join('/')}`,
  );

  // One user: an API key for /api/v1, a password for the web app's sign-in (PDFs enter only through its upload).
  const email = `bench-${Date.now()}-${process.pid}@bench.kbqa.test`;
  const password = `bench-${randomUUID()}`;
  await createUser(store, email, undefined, { passwordHash: await hashPassword(password) });
  const { key: apiKey } = await createApiKey(store, email, 'bench');
  log(`created user ${email} (with a password) and an API key`);

  log(`starting the API process (${options.modelWorkers} model workers × ${options.embedThreads} ONNX thread(s))…`);
  const api = await startApi({ root, env: benchEnv });
  toCleanUp.api = api;
  const startupMemory = api.memory();
  const startupPeak = startupMemory ? round(startupMemory.peakMb) : null;
  const canResetPeak = api.resetPeak();
  log(
    `API ready at ${api.url} (pid ${api.pid}); peak RSS ${canResetPeak ? 'reset per phase (clear_refs)' : 'since start (clear_refs refused)'}`,
  );
  const client = createKbqaClient(api.url, apiKey);
  const newKnowledgeBase = async (name: string) => {
    const created = await client.createKnowledgeBase(
      `${name} ${stamp}`,
      'created by npm run bench; removed at the end',
    );
    toCleanUp.createdKnowledgeBases.push(created.id);
    return created.id;
  };
  const phases: Record<string, PhaseResources> = {};
  const stack = stackPids(config.localDir);
  if (stack.opensearch === undefined)
    log("OpenSearch's pid is unknown (.local/run/opensearch.pid): no OpenSearch CPU figures");
  const runningApi = api;
  const phase = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const end = startPhase(runningApi, canResetPeak, stack);
    try {
      return await work();
    } finally {
      phases[name] = end();
      const cpu = Object.entries(phases[name].cpu_percent)
        .map(([process, percent]) => `${process} ${percent}%`)
        .join(', ');
      log(
        `  [${name}] ${phases[name].seconds} s; API peak RSS ${phases[name].api_peak_rss_mb} MB; CPU (% of one core): ${cpu}`,
      );
    }
  };
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
    "`bench` is this process (clients, autocannon, the raw embedder's pool). OpenSearch and FerretDB are the shared stack: " +
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
  return {
    startedAt,
    stamp,
    store,
    databaseName,
    benchEnv,
    config,
    searchOptions,
    index,
    machine,
    email,
    password,
    apiKey,
    runningApi,
    client,
    newKnowledgeBase,
    stack,
    phases,
    phase,
    commonResult,
  };
}
