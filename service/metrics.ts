// Prometheus metrics: every metric this service exports, defined here, in one registry of its own (never prom-client's
// global one, so tests can build several apps in one process). Served in the text format on a port of its own
// (http/metricsServer.ts), never on the API's.
//
// With KBQA_API_PROCESSES > 1 every API process keeps its registry and the node:cluster primary serves them as one
// (createClusterMetrics): it asks each process over IPC at scrape time and adds them up, counters and histograms
// summed, except what every process reads from the shared store (the job counts), which is taken once. The sums never
// fall while processes miss a scrape or die (Prometheus would read that as a counter reset): see createClusterMetrics.
//
// Two kinds: what code records as it happens (requests, query stages, upstream errors), and what is read at scrape
// time from read-only getters (ingestion jobs from the store, worker pools): the store, search and rag layers never
// import this module; they are asked when Prometheus asks.
// Over 400 lines on purpose: every metric is defined here (one registry, one place to read it).
import type { Worker } from 'node:cluster';
import {
  AggregatorRegistry,
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type MetricObjectWithValues,
  type MetricValue,
  type MetricValueWithName,
} from 'prom-client';
import type { PdfPoolStats } from './extraction/pdf.ts';
import type { QueryTimings } from './queryTimings.ts';
import type { ModelPoolStats } from './rag/modelPool.ts';
import type { SentenceCounts } from './rag/sentenceChecks.ts';
import type { IngestJobCounts } from './store/index.ts';

/** Per-stage durations of one answered query (the streamed answer's first-delta time is not a stage). */
export type QueryStageTimings = Pick<QueryTimings, 'embedMs' | 'searchMs' | 'answerMs'>;

/** Where scrape-time values come from: read-only getters, each asked once per scrape. */
export interface MetricSources {
  store: { countJobsByState(now: number, maxTimeMs: number): Promise<IngestJobCounts> };
  models: { stats(): ModelPoolStats };
  jobs: { runningJobs(): string[]; pdfPoolStats(): PdfPoolStats | null };
}

/** How long a scrape waits for the store's job counts before reporting without them. */
export const STORE_READ_TIMEOUT_MS = 2_000;

/** Seconds: from a few ms (a key lookup, a cached probe) to an LLM answer near its timeout. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

const UPSTREAM_COMPONENTS = ['opensearch', 'mongodb', 'embedder', 'answer-model'];

/** Route labels for requests no router matched: the web app's pages and files, and everything else. */
export const WEB_ROUTE = '(web)';
export const UNMATCHED_ROUTE = '(unmatched)';

/** What GET /metrics serves: one process's registry, or the cluster's (createClusterMetrics). */
export interface MetricsSource {
  /** The Prometheus text format. */
  scrape(): Promise<string>;
  readonly contentType: string;
}

export interface Metrics extends MetricsSource {
  readonly registry: Registry;
  /** One answered HTTP request; `route` is a route template or WEB_ROUTE / UNMATCHED_ROUTE, never a raw path. */
  observeRequest(request: { method: string; route: string; status: number; seconds: number }): void;
  observeQueryStages(timings: QueryStageTimings): void;
  /** The citation check's counts for one answer whose sentences were checked (an OpenAI-compatible model's). */
  countCheckedSentences(counts: SentenceCounts): void;
  /** A rating given to an answer of a conversation, by the model that wrote the answer (no text, no ids). */
  countAnswerRating(model: string, rating: 'up' | 'down'): void;
  /** An UpstreamUnavailableError that became a response, or that an ingestion job failed on. */
  countUpstreamError(component: string): void;
  /** Where the scrape-time gauges read from (set once the store, models and job runner exist). */
  collectFrom(sources: MetricSources): void;
}

/** Scrape-time reads that failed: one definition for the API processes' registries and the primary's. */
function collectErrorsCounter(collect?: () => Promise<void>): Counter<'source'> {
  return new Counter({
    name: 'kbqa_metrics_collect_errors_total',
    help: 'Scrape-time reads that failed or timed out (the metrics they feed are missing from that scrape), by source: ingest_jobs (the store), api_process (an API process that did not answer the primary).',
    labelNames: ['source'] as const,
    registers: [],
    ...(collect ? { collect } : {}),
  });
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  let sources: MetricSources | null = null;

  collectDefaultMetrics({ register: registry, prefix: 'kbqa_' });

  const requests = new Counter({
    name: 'kbqa_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const requestDuration = new Histogram({
    name: 'kbqa_http_request_duration_seconds',
    help: 'Time from a request arriving to its response being sent, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const queryStages = new Histogram({
    name: 'kbqa_query_stage_duration_seconds',
    help: "Time an answered query spent in each stage: embed (the question's vector), search (hybrid retrieval), answer (the answer model).",
    labelNames: ['stage'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const upstreamErrors = new Counter({
    name: 'kbqa_upstream_errors_total',
    help: 'Dependencies found unavailable (opensearch, mongodb, embedder, answer-model): 503 responses, and ingestion jobs that failed or will be retried on an outage.',
    labelNames: ['component'] as const,
    registers,
  });
  const checkedSentences = new Counter({
    name: 'kbqa_answer_sentences_total',
    help: "Sentences of OpenAI-compatible models' answers, by the citation check's verdict: supported (its cited passages hold its numbers and most of its terms), unsupported and uncited (both marked [unverified] in the answer).",
    labelNames: ['verdict'] as const,
    registers,
  });
  for (const verdict of ['supported', 'unsupported', 'uncited']) checkedSentences.inc({ verdict }, 0);
  const answerRatings = new Counter({
    name: 'kbqa_answer_ratings_total',
    help: 'Ratings given to answers of conversations (PUT …/feedback), by the model that wrote the answer and the rating (up or down).',
    labelNames: ['model', 'rating'] as const,
    registers,
  });
  // Created before any scrape, so that "no failures" reads 0 rather than nothing (the components of errors.ts's
  // UpstreamUnavailableError; one the code adds later appears with its first error).
  for (const component of UPSTREAM_COMPONENTS) upstreamErrors.inc({ component }, 0);

  // The store's job counts: one read per scrape, shared by concurrent scrapes, bounded in time. A failure or a
  // timeout leaves the job gauges out of that scrape and counts an error; everything else is still reported.
  let jobCountsRead: Promise<IngestJobCounts | null> | null = null;
  // Registered after the job gauge (below): a scrape collects metrics in registration order, so this waits for the
  // read that scrape started, and a failure of it is counted in the same scrape.
  const collectErrors = collectErrorsCounter(async () => {
    await jobCountsRead;
  });
  collectErrors.inc({ source: 'ingest_jobs' }, 0);

  function readJobCounts(): Promise<IngestJobCounts | null> {
    if (!sources) return Promise.resolve(null);
    const store = sources.store;
    jobCountsRead ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), STORE_READ_TIMEOUT_MS);
      });
      try {
        return await Promise.race([store.countJobsByState(Date.now(), STORE_READ_TIMEOUT_MS), timeout]);
      } catch {
        collectErrors.inc({ source: 'ingest_jobs' });
        return null;
      } finally {
        clearTimeout(timer);
        jobCountsRead = null;
      }
    })();
    return jobCountsRead;
  }

  new Gauge({
    name: 'kbqa_ingest_jobs',
    help: 'Ingestion jobs in flight across every process sharing the database, by state: queued (claimable now: the queue depth), retry_wait (backing off after an outage), running (held under a live lease).',
    labelNames: ['state'] as const,
    registers,
    // Every API process reads the same jobs: one count, not one per process.
    aggregator: 'max',
    async collect() {
      const counts = await readJobCounts();
      this.reset();
      if (counts === null) return;
      for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
    },
  });
  registry.registerMetric(collectErrors);

  new Gauge({
    name: 'kbqa_ingest_jobs_in_process',
    help: 'Ingestion jobs this process is running now (at most KBQA_INGEST_CONCURRENCY from the queue, plus those requests wait for).',
    registers,
    collect() {
      this.set(sources?.jobs.runningJobs().length ?? 0);
    },
  });

  new Gauge({
    name: 'kbqa_model_pool_workers',
    help: 'Worker threads of the model pool (embedder, splitter, extractive answerer).',
    registers,
    collect() {
      this.set(sources?.models.stats().workers ?? 0);
    },
  });
  new Gauge({
    name: 'kbqa_model_pool_busy_workers',
    help: 'Model pool workers running a task, by lane: interactive (questions) or background (documents).',
    labelNames: ['lane'] as const,
    registers,
    collect() {
      const stats = sources?.models.stats();
      this.set({ lane: 'interactive' }, stats?.running.interactive ?? 0);
      this.set({ lane: 'background' }, stats?.running.background ?? 0);
    },
  });
  new Gauge({
    name: 'kbqa_model_pool_queued_tasks',
    help: 'Model pool tasks waiting for a worker, by lane.',
    labelNames: ['lane'] as const,
    registers,
    collect() {
      const stats = sources?.models.stats();
      this.set({ lane: 'interactive' }, stats?.queued.interactive ?? 0);
      this.set({ lane: 'background' }, stats?.queued.background ?? 0);
    },
  });

  // The PDF pool starts with a process's first PDF: until then it has no workers (all three read 0).
  const pdfGauge = (name: string, help: string, field: keyof PdfPoolStats) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(sources?.jobs.pdfPoolStats()?.[field] ?? 0);
      },
    });
  pdfGauge(
    'kbqa_pdf_pool_workers',
    'PDFs the extraction pool may read at once, a process each (0 until the first PDF starts it).',
    'workers',
  );
  pdfGauge('kbqa_pdf_pool_busy_workers', 'PDF reader processes reading a PDF now.', 'busy');
  pdfGauge('kbqa_pdf_pool_queued_tasks', 'PDFs waiting for a reader process.', 'queued');

  return {
    registry,
    observeRequest({ method, route, status, seconds }) {
      const labels = { method: METHODS.has(method) ? method : 'OTHER', route, status: String(status) };
      requests.inc(labels);
      requestDuration.observe(labels, seconds);
    },
    observeQueryStages({ embedMs, searchMs, answerMs }) {
      queryStages.observe({ stage: 'embed' }, embedMs / 1000);
      queryStages.observe({ stage: 'search' }, searchMs / 1000);
      queryStages.observe({ stage: 'answer' }, answerMs / 1000);
    },
    countCheckedSentences(counts) {
      for (const [verdict, count] of Object.entries(counts)) if (count > 0) checkedSentences.inc({ verdict }, count);
    },
    countAnswerRating(model, rating) {
      answerRatings.inc({ model, rating });
    },
    countUpstreamError(component) {
      upstreamErrors.inc({ component });
    },
    collectFrom(next) {
      sources = next;
    },
    scrape: () => registry.metrics(),
    contentType: registry.contentType,
  };
}

// The node:cluster side ---------------------------------------------------------------------------------------------

const METRICS_REQUEST = 'kbqa:metrics-request';
const METRICS_RESPONSE = 'kbqa:metrics';

/** How long the primary waits for an API process's metrics: its store read is bounded by STORE_READ_TIMEOUT_MS. */
export const PROCESS_ANSWER_TIMEOUT_MS = STORE_READ_TIMEOUT_MS + 1_000;

/** One metric of a registry's getMetricsAsJSON(): what an API process sends the primary. */
type MetricJson = MetricObjectWithValues<MetricValue<string>>;

interface MetricsRequest {
  type: typeof METRICS_REQUEST;
  id: number;
}
interface MetricsResponse {
  type: typeof METRICS_RESPONSE;
  id: number;
  metrics?: MetricJson[];
  error?: string;
}

/** In an API process under the primary: answer its requests with this process's registry (as JSON). */
export function answerMetricsRequests(metrics: Metrics, channel: NodeJS.Process = process): void {
  channel.on('message', (message: MetricsRequest) => {
    if (message?.type !== METRICS_REQUEST) return;
    const reply = (response: Omit<MetricsResponse, 'type' | 'id'>) => {
      if (channel.connected) channel.send?.({ type: METRICS_RESPONSE, id: message.id, ...response });
    };
    metrics.registry.getMetricsAsJSON().then(
      (json) => reply({ metrics: json as MetricJson[] }),
      (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
    );
  });
}

export interface ClusterMetrics extends MetricsSource {
  /** An API process exited unexpectedly (the primary replaces it). */
  countProcessExit(): void;
  /** An API process exited, for whatever reason: its counts so far are kept in every later sum (call on every exit). */
  retireProcess(worker: Worker): void;
}

// prom-client's JSON names the type ('counter'), whatever its typings (an enum) say.
const CUMULATIVE_TYPES = new Set<unknown>(['counter', 'histogram']);

/** The counters and histograms of `answers` summed, series by series (a histogram's buckets, _sum and _count each). */
function sumCumulative(answers: MetricJson[][]): MetricJson[] {
  const byName = new Map<string, { metric: MetricJson; series: Map<string, MetricValue<string>> }>();
  for (const answer of answers) {
    for (const metric of answer) {
      if (!CUMULATIVE_TYPES.has(metric.type)) continue;
      let sums = byName.get(metric.name);
      if (!sums) byName.set(metric.name, (sums = { metric, series: new Map() }));
      for (const value of metric.values) {
        const key = JSON.stringify([
          (value as MetricValueWithName<string>).metricName ?? '',
          Object.entries(value.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        ]);
        const sum = sums.series.get(key);
        sums.series.set(key, { ...value, value: (sum?.value ?? 0) + value.value });
      }
    }
  }
  return [...byName.values()].map(({ metric, series }) => ({ ...metric, values: [...series.values()] }));
}

/**
 * The primary's GET /metrics: every API process's registry, asked over IPC and aggregated (prom-client's
 * AggregatorRegistry.aggregate: by each metric's aggregator, a sum unless it says otherwise), plus the primary's own:
 * API processes running and unexpected exits.
 *
 * Counters and histograms summed over the processes must never fall: Prometheus reads a fall as a counter reset, and
 * rate()/increase() would count the whole sum again. So the primary keeps each process's last answer (one per
 * process) and a "retired" total (one for all): a process that does not answer within `answerTimeoutMs` (it is
 * starting, stopping or stuck) is counted as a collect error and its last answer's counters and histograms stand in
 * for it (not its gauges: a gauge is a reading of now); a process that exits has its last answer's counters and
 * histograms added to the retired total, which every later scrape adds in, and its gauges dropped. What a process
 * counted after its last answer is lost with it: the sums stop growing for a moment, they do not fall.
 */
export function createClusterMetrics(
  processes: () => Worker[],
  { answerTimeoutMs = PROCESS_ANSWER_TIMEOUT_MS } = {},
): ClusterMetrics {
  const registry = new Registry();
  const collectErrors = collectErrorsCounter();
  registry.registerMetric(collectErrors);
  collectErrors.inc({ source: 'api_process' }, 0);
  const exits = new Counter({
    name: 'kbqa_api_process_exits_total',
    help: 'API processes that exited unexpectedly (each is replaced by a new one).',
    registers: [registry],
  });
  new Gauge({
    name: 'kbqa_api_processes',
    help: 'API processes running (listening on the API port) under the node:cluster primary.',
    registers: [registry],
    collect() {
      this.set(processes().length);
    },
  });
  let nextId = 0;
  /** By worker id, until the process exits: its newest answer, and the request it answered. */
  const lastAnswers = new Map<number, { request: number; metrics: MetricJson[] }>();
  /** The counters and histograms of every process that exited, as of its last answer. */
  let retired: MetricJson[] = [];

  function ask(worker: Worker, id: number): Promise<MetricJson[] | null> {
    return new Promise((resolve) => {
      const finish = (metrics: MetricJson[] | null) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        resolve(metrics);
      };
      const onMessage = (message: MetricsResponse) => {
        if (message?.type !== METRICS_RESPONSE || message.id !== id) return;
        const metrics = message.metrics ?? null;
        // Kept as it arrives, so that an exit later in this scrape retires these counts. Never for a dead process
        // (retireProcess has taken its last answer already), nor over a newer answer of a concurrent scrape.
        const kept = lastAnswers.get(worker.id);
        if (metrics && !worker.isDead() && (!kept || kept.request < id))
          lastAnswers.set(worker.id, { request: id, metrics });
        finish(metrics);
      };
      const onExit = () => finish(null);
      const timer = setTimeout(() => finish(null), answerTimeoutMs);
      worker.on('message', onMessage);
      worker.on('exit', onExit);
      try {
        worker.send({ type: METRICS_REQUEST, id } satisfies MetricsRequest);
      } catch {
        finish(null);
      }
    });
  }

  return {
    async scrape() {
      const id = nextId++;
      const workers = processes();
      const answers = await Promise.all(workers.map((worker) => ask(worker, id)));
      const missing = answers.filter((answer) => answer === null).length;
      if (missing > 0) collectErrors.inc({ source: 'api_process' }, missing);
      const all: MetricJson[][] = [];
      workers.forEach((worker, index) => {
        const kept = lastAnswers.get(worker.id);
        // None: it has not answered yet, or it exited during this scrape (its counts are in `retired` now).
        if (kept) all.push(answers[index] ?? sumCumulative([kept.metrics]));
      });
      all.push(retired, (await registry.getMetricsAsJSON()) as MetricJson[]);
      return AggregatorRegistry.aggregate(all).metrics();
    },
    contentType: registry.contentType,
    countProcessExit() {
      exits.inc();
    },
    retireProcess(worker) {
      const kept = lastAnswers.get(worker.id);
      if (!kept) return;
      lastAnswers.delete(worker.id);
      retired = sumCumulative([retired, kept.metrics]);
    },
  };
}
