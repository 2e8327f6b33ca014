// Prometheus metrics (issue 12): GET /metrics on a port of its own, in the text format; requests counted by route
// template and status, query stages, ingestion jobs and worker pools read at scrape time, upstream errors counted
// once, and a store that fails or hangs never breaks a scrape.
import type { ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { loadConfig } from '../service/config.ts';
import { createPdfExtractor } from '../service/extraction/pdf.ts';
import { startMetricsServer, type MetricsServer } from '../service/http/metricsServer.ts';
import {
  STORE_READ_TIMEOUT_MS,
  UNMATCHED_ROUTE,
  WEB_ROUTE,
  createMetrics,
  type MetricSources,
} from '../service/metrics.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { startTestApp, testWithApp, type TestApp } from './helpers/app.ts';
import { ingest } from './helpers/documentsApi.ts';
import { startTcpRelay } from './helpers/tcpRelay.ts';

interface Context {
  app: TestApp;
  metrics: MetricsServer;
  user: TestUser;
}

const test = testWithApp<Omit<Context, 'app'>>();

test.before(async (t) => {
  t.context.metrics = await startMetricsServer(t.context.app.deps.metrics, { host: '127.0.0.1', port: 0 });
  t.context.user = await makeUser(t.context.app.deps.store, { label: 'metrics' });
});

test.after.always(async (t) => {
  await t.context.metrics?.close();
});

// The Prometheus text format (0.0.4) --------------------------------------------------------------------------------

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Exposition {
  samples: Sample[];
  types: Map<string, string>;
  /** Lines that are neither a comment nor a sample (a well-formed exposition has none). */
  malformed: string[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

/**
 * A sample's value. Prometheus reads it with Go's ParseFloat, which takes NaN and Inf in any letter case: prom-client
 * writes "Nan" (the event-loop lag's mean before its first sample).
 */
function parseValue(text: string): number | null {
  const lower = text.toLowerCase();
  if (lower === 'nan') return NaN;
  if (lower === '+inf' || lower === 'inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  return DECIMAL.test(text) ? Number(text) : null;
}

/** `name{label="value",…} value [timestamp]`, scanned left to right; null when the line is not one. */
function parseSample(line: string): Sample | null {
  let at = 0;
  while (at < line.length && line[at] !== '{' && line[at] !== ' ') at += 1;
  const name = line.slice(0, at);
  if (!METRIC_NAME.test(name)) return null;
  const labels: Record<string, string> = {};
  if (line[at] === '{') {
    at += 1;
    while (line[at] !== '}') {
      const equals = line.indexOf('=', at);
      if (equals < 0 || line[equals + 1] !== '"') return null;
      const label = line.slice(at, equals);
      if (!LABEL_NAME.test(label) || Object.hasOwn(labels, label)) return null;
      let labelValue = '';
      at = equals + 2;
      for (; at < line.length && line[at] !== '"'; at += 1) {
        if (line[at] !== '\\') {
          labelValue += line[at];
          continue;
        }
        at += 1;
        const escaped = { '\\': '\\', '"': '"', n: '\n' }[line[at]];
        if (escaped === undefined) return null;
        labelValue += escaped;
      }
      if (at >= line.length) return null;
      labels[label] = labelValue;
      at += 1;
      if (line[at] === ',') at += 1;
      else if (line[at] !== '}') return null;
    }
    at += 1;
  }
  if (line[at] !== ' ') return null;
  const [valueText, timestamp, ...rest] = line.slice(at + 1).split(' ');
  const value = parseValue(valueText);
  if (value === null || rest.length > 0 || (timestamp !== undefined && !/^-?\d+$/.test(timestamp))) return null;
  return { name, labels, value };
}

function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const malformed: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const [hash, keyword, name, ...rest] = line.split(' ');
      const comment = hash === '#' && METRIC_NAME.test(name ?? '');
      if (
        comment &&
        keyword === 'TYPE' &&
        rest.length === 1 &&
        ['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest[0])
      ) {
        types.set(name, rest[0]);
      } else if (!(comment && keyword === 'HELP')) {
        malformed.push(line);
      }
      continue;
    }
    const sample = parseSample(line);
    if (sample) samples.push(sample);
    else malformed.push(line);
  }
  return { samples, types, malformed };
}

async function scrape(t: ExecutionContext<Context>, url = t.context.metrics.url): Promise<Exposition> {
  const response = await fetch(`${url}/metrics`);
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const exposition = parseExposition(await response.text());
  t.deepEqual(exposition.malformed, [], 'every line is a comment or a sample');
  return exposition;
}

/**
 * A scrape once `ready` holds of it, or the last one after 5 s: a request is counted when its response has been
 * sent ('finish'), which the client may see a moment before the server does.
 */
async function scrapeWhen(
  t: ExecutionContext<Context>,
  ready: (exposition: Exposition) => boolean,
  url = t.context.metrics.url,
): Promise<Exposition> {
  let exposition = await scrape(t, url);
  for (let tries = 0; tries < 50 && !ready(exposition); tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    exposition = await scrape(t, url);
  }
  return exposition;
}

/** The value of the one sample with exactly these labels (0 when absent: a counter not yet incremented). */
function value(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  const found = exposition.samples.filter(
    (sample) => sample.name === name && JSON.stringify(Object.entries(sample.labels).sort()) === wanted,
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${wanted}`);
  return found[0]?.value ?? 0;
}

function has(exposition: Exposition, name: string, labels: Record<string, string> = {}): boolean {
  return exposition.samples.some(
    (sample) => sample.name === name && Object.entries(labels).every(([key, wanted]) => sample.labels[key] === wanted),
  );
}

const UUID_ANYWHERE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

test('the exposition parser used here refuses what is not a comment or a sample', (t) => {
  const parsed = parseExposition(
    [
      '# HELP kbqa_x A help text with "quotes".',
      '# TYPE kbqa_x counter',
      'kbqa_x{route="/api/v1/documents/:id",note="a \\"quoted\\" \\\\ value"} 3',
      'kbqa_y 1.5e-3 1700000000000',
      'kbqa_z Nan',
      'kbqa_bad{route="/x"',
      'kbqa_bad{route=/x} 1',
      'kbqa_bad 1 2 3',
      'kbqa_bad one',
      '1bad 1',
      '# TYPE kbqa_x sometimes',
    ].join('\n'),
  );
  t.deepEqual(parsed.samples.slice(0, 2), [
    { name: 'kbqa_x', labels: { route: '/api/v1/documents/:id', note: 'a "quoted" \\ value' }, value: 3 },
    { name: 'kbqa_y', labels: {}, value: 0.0015 },
  ]);
  t.true(Number.isNaN(parsed.samples[2].value));
  t.is(parsed.types.get('kbqa_x'), 'counter');
  t.is(parsed.malformed.length, 6);
});

// Requests -------------------------------------------------------------------------------------------------------

test.serial('API calls are counted and timed by route template and status, never by raw path', async (t) => {
  const { app, user } = t.context;
  const before = await scrape(t);
  const missing = randomUUID();

  t.is((await app.call('GET', '/api/v1/me', { key: user.key })).status, 200);
  t.is((await app.call('GET', '/api/v1/me', { key: user.key })).status, 200);
  t.is((await app.call('GET', `/api/v1/documents/${missing}`, { key: user.key })).status, 404);
  // Refused by the authentication middleware, before the route runs: still labelled with the route's template.
  t.is((await app.call('GET', `/api/v1/documents/${missing}`)).status, 401);
  const document = await ingest(
    app,
    user.key,
    user.defaultKnowledgeBaseId,
    'tides.md',
    '# Tides\n\nThe harbour of Brindle Cove has two high tides a day, about 12 hours 25 minutes apart.',
  );
  const query = await app.call('POST', '/api/v1/query', {
    key: user.key,
    body: { query: 'How far apart are the high tides at Brindle Cove?' },
  });
  t.is(query.status, 200, JSON.stringify(query.body));
  t.is((await app.call('GET', `/api/v1/no-such-resource/${missing}`, { key: user.key })).status, 404);
  t.is((await app.call('GET', '/healthz')).status, 200);

  const expected: Array<[string, string, string, number]> = [
    ['GET', '/api/v1/me', '200', 2],
    ['GET', '/api/v1/documents/:id', '404', 1],
    ['GET', '/api/v1/documents/:id', '401', 1],
    ['POST', '/api/v1/documents', '201', 1],
    ['POST', '/api/v1/query', '200', 1],
    ['GET', UNMATCHED_ROUTE, '404', 1],
    ['GET', '/healthz', '200', 1],
  ];
  const counted = (exposition: Exposition) =>
    expected.every(
      ([method, route, status, count]) =>
        value(exposition, 'kbqa_http_requests_total', { method, route, status }) -
          value(before, 'kbqa_http_requests_total', { method, route, status }) >=
        count,
    );
  const after = await scrapeWhen(t, counted);
  for (const [method, route, status, count] of expected) {
    const labels = { method, route, status };
    t.is(
      value(after, 'kbqa_http_requests_total', labels) - value(before, 'kbqa_http_requests_total', labels),
      count,
      `${method} ${route} ${status}`,
    );
    const observed =
      value(after, 'kbqa_http_request_duration_seconds_count', labels) -
      value(before, 'kbqa_http_request_duration_seconds_count', labels);
    t.is(observed, count, `duration observations of ${method} ${route} ${status}`);
    t.is(
      value(after, 'kbqa_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' }),
      value(after, 'kbqa_http_request_duration_seconds_count', labels),
    );
    t.true(
      value(after, 'kbqa_http_request_duration_seconds_sum', labels) >
        value(before, 'kbqa_http_request_duration_seconds_sum', labels),
    );
  }

  // Bounded labels: templates or the two fixed names, no ids anywhere.
  const routes = new Set(
    after.samples.filter((sample) => sample.name.startsWith('kbqa_http_')).map((sample) => sample.labels.route),
  );
  for (const route of routes) t.true(route === WEB_ROUTE || route === UNMATCHED_ROUTE || route.startsWith('/'), route);
  for (const sample of after.samples) {
    for (const label of Object.values(sample.labels)) {
      t.false(UUID_ANYWHERE.test(label), `${sample.name} carries an id: ${label}`);
      t.false(label.includes(document.id) || label.includes(user.key), `${sample.name}: ${label}`);
    }
  }
  t.is(after.types.get('kbqa_http_requests_total'), 'counter');
  t.is(after.types.get('kbqa_http_request_duration_seconds'), 'histogram');
});

test.serial('the web app pages share one route label', async (t) => {
  const before = await scrape(t);
  const page = await t.context.app.call('GET', `/knowledge-bases/${randomUUID()}`);
  const labels = { method: 'GET', route: WEB_ROUTE, status: String(page.status) };
  const after = await scrapeWhen(
    t,
    (exposition) =>
      value(exposition, 'kbqa_http_requests_total', labels) > value(before, 'kbqa_http_requests_total', labels),
  );
  t.is(value(after, 'kbqa_http_requests_total', labels) - value(before, 'kbqa_http_requests_total', labels), 1);
});

test.serial('query stage durations are histograms by stage', async (t) => {
  const before = await scrape(t);
  t.context.app.deps.metrics.observeQueryStages({ embedMs: 12, searchMs: 30, answerMs: 400 });
  const after = await scrape(t);
  t.is(after.types.get('kbqa_query_stage_duration_seconds'), 'histogram');
  const seconds = { embed: 0.012, search: 0.03, answer: 0.4 };
  for (const [stage, observed] of Object.entries(seconds)) {
    const count = (exposition: Exposition) => value(exposition, 'kbqa_query_stage_duration_seconds_count', { stage });
    const sum = (exposition: Exposition) => value(exposition, 'kbqa_query_stage_duration_seconds_sum', { stage });
    t.is(count(after) - count(before), 1, stage);
    t.true(Math.abs(sum(after) - sum(before) - observed) < 1e-9, stage);
    // The observation lands in the first bucket at or above it, and every larger one.
    const bucket = (le: string) =>
      value(after, 'kbqa_query_stage_duration_seconds_bucket', { stage, le }) -
      value(before, 'kbqa_query_stage_duration_seconds_bucket', { stage, le });
    t.is(bucket('0.01'), 0, stage);
    t.is(bucket('+Inf'), 1, stage);
  }
});

// Scrape-time gauges ------------------------------------------------------------------------------------------------

test.serial('ingestion jobs by state, the process defaults and the pools are reported with sane values', async (t) => {
  const { app } = t.context;
  const now = Date.now();
  // Two jobs no runner can take (a live lease of someone else's; a back-off an hour long), removed at the end.
  const held = { id: randomUUID(), lease_owner: 'metrics-test', lease_until: now + 3_600_000, not_before: 0 };
  const backingOff = { id: randomUUID(), lease_owner: null, lease_until: null, not_before: now + 3_600_000 };
  for (const job of [held, backingOff]) {
    await app.deps.store.insertJob({
      _id: job.id,
      knowledge_base_id: randomUUID(),
      version: 1,
      content_id: job.id,
      filename: 'metrics.md',
      title: 'metrics',
      replaces: null,
      phase: 'build',
      hidden: [1],
      built: null,
      lease_owner: job.lease_owner,
      lease_until: job.lease_until,
      mode: 'async',
      attempts: 1,
      not_before: job.not_before,
      created_at: new Date(now),
    });
  }
  try {
    const exposition = await scrape(t);
    t.is(exposition.types.get('kbqa_ingest_jobs'), 'gauge');
    for (const state of ['queued', 'retry_wait', 'running']) {
      const count = value(exposition, 'kbqa_ingest_jobs', { state });
      t.true(Number.isInteger(count) && count >= 0, `${state}: ${count}`);
    }
    // The file's other tests queue jobs too: at least these are there.
    t.true(value(exposition, 'kbqa_ingest_jobs', { state: 'running' }) >= 1);
    t.true(value(exposition, 'kbqa_ingest_jobs', { state: 'retry_wait' }) >= 1);
    t.is(value(exposition, 'kbqa_metrics_collect_errors_total', { source: 'ingest_jobs' }), 0);
    t.true(value(exposition, 'kbqa_ingest_jobs_in_process') >= 0);

    const workers = value(exposition, 'kbqa_model_pool_workers');
    t.is(workers, app.deps.config.embedder.workers);
    for (const lane of ['interactive', 'background']) {
      const busy = value(exposition, 'kbqa_model_pool_busy_workers', { lane });
      t.true(busy >= 0 && busy <= workers, `${lane} busy ${busy}`);
      t.true(value(exposition, 'kbqa_model_pool_queued_tasks', { lane }) >= 0);
      t.true(
        has(exposition, 'kbqa_model_pool_busy_workers', { lane }) &&
          has(exposition, 'kbqa_model_pool_queued_tasks', { lane }),
      );
    }
    // No PDF in this app yet: its extraction pool has not been started.
    t.is(value(exposition, 'kbqa_pdf_pool_workers'), 0);
    t.is(value(exposition, 'kbqa_pdf_pool_busy_workers'), 0);
    t.is(value(exposition, 'kbqa_pdf_pool_queued_tasks'), 0);

    // collectDefaultMetrics with the kbqa_ prefix.
    t.true(value(exposition, 'kbqa_process_resident_memory_bytes') > 0);
    t.true(value(exposition, 'kbqa_nodejs_heap_size_used_bytes') > 0);
    t.true(has(exposition, 'kbqa_nodejs_eventloop_lag_seconds'));
  } finally {
    for (const job of [held, backingOff]) await app.deps.store.deleteJob(job.id);
  }
});

test.serial('the model pool gauges follow work in flight', async (t) => {
  const { app } = t.context;
  const workers = app.deps.config.embedder.workers;
  // More passage tasks than workers: the background lane is busy and has a queue while they run.
  const texts = Array.from({ length: workers * 6 }, (_, index) => `passage ${index} ${'word '.repeat(200)}`);
  const embedding = Promise.all(texts.map((text) => app.deps.rag.models.embedPassages([text])));
  const during = await scrape(t);
  await embedding;
  t.true(value(during, 'kbqa_model_pool_busy_workers', { lane: 'background' }) >= 1);
  t.true(value(during, 'kbqa_model_pool_queued_tasks', { lane: 'background' }) >= 1);
  const after = await scrape(t);
  t.is(value(after, 'kbqa_model_pool_queued_tasks', { lane: 'background' }), 0);
});

test('a PDF extractor reports its pool: its workers, never more than them busy, and nothing left once its reads end', async (t) => {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  pdf.addPage().drawText('Metrics of a small PDF.', { x: 50, y: 700, size: 12, font });
  const bytes = await pdf.save();
  const extractor = createPdfExtractor(
    { maxBytes: 1_000_000, maxPages: 10, timeoutMs: 30_000, maxMemoryMb: 1024 },
    { workers: 1 },
  );
  try {
    t.deepEqual(extractor.stats?.(), { workers: 1, busy: 0, queued: 0 });
    const reads = [extractor.extract(bytes), extractor.extract(bytes), extractor.extract(bytes)];
    // Three PDFs, one worker: at most one is read at a time, the others wait.
    const seen = extractor.stats?.();
    t.true(seen !== undefined && seen !== null && seen.busy <= 1 && seen.queued <= 3, JSON.stringify(seen));
    await Promise.all(reads);
    t.deepEqual(extractor.stats?.(), { workers: 1, busy: 0, queued: 0 });
  } finally {
    await extractor.close();
  }
});

test('a store that fails or hangs leaves the job gauges out of the scrape, counts an error, and reports the rest', async (t) => {
  const models = {
    stats: () => ({
      workers: 3,
      running: { interactive: 1, background: 2 },
      queued: { interactive: 0, background: 5 },
    }),
  };
  const jobs = { runningJobs: () => ['a', 'b'], pdfPoolStats: () => ({ workers: 1, busy: 1, queued: 2 }) };
  const failing: MetricSources = {
    store: { countJobsByState: () => Promise.reject(new Error('the metadata store is unavailable')) },
    models,
    jobs,
  };
  const hanging: MetricSources = { store: { countJobsByState: () => new Promise(() => undefined) }, models, jobs };

  for (const [name, sources] of [
    ['failing', failing],
    ['hanging', hanging],
  ] as const) {
    const metrics = createMetrics();
    metrics.collectFrom(sources);
    const server = await startMetricsServer(metrics, { host: '127.0.0.1', port: 0 });
    try {
      const started = performance.now();
      const exposition = await scrape(t, server.url);
      t.true(performance.now() - started < STORE_READ_TIMEOUT_MS + 1_000, `${name}: the scrape is bounded`);
      t.false(has(exposition, 'kbqa_ingest_jobs'), `${name}: no job counts rather than wrong ones`);
      t.is(value(exposition, 'kbqa_metrics_collect_errors_total', { source: 'ingest_jobs' }), 1, name);
      t.is(value(exposition, 'kbqa_ingest_jobs_in_process'), 2);
      t.is(value(exposition, 'kbqa_model_pool_workers'), 3);
      t.is(value(exposition, 'kbqa_model_pool_busy_workers', { lane: 'background' }), 2);
      t.is(value(exposition, 'kbqa_model_pool_queued_tasks', { lane: 'background' }), 5);
      t.is(value(exposition, 'kbqa_pdf_pool_workers'), 1);
      t.is(value(exposition, 'kbqa_pdf_pool_busy_workers'), 1);
      t.is(value(exposition, 'kbqa_pdf_pool_queued_tasks'), 2);
      t.true(value(exposition, 'kbqa_process_resident_memory_bytes') > 0);
    } finally {
      await server.close();
    }
  }
});

// Upstream errors ---------------------------------------------------------------------------------------------------

test('an OpenSearch outage is counted once per 503, and once per ingestion attempt no request waits for', async (t) => {
  const { app: healthy } = t.context;
  const opensearch = new URL(loadConfig().opensearch.url);
  const relay = await startTcpRelay({ host: opensearch.hostname, port: Number(opensearch.port) });
  const app = await startTestApp({
    KBQA_OPENSEARCH_URL: `http://127.0.0.1:${relay.port}`,
    KBQA_OPENSEARCH_TIMEOUT_MS: '1000',
  });
  const server = await startMetricsServer(app.deps.metrics, { host: '127.0.0.1', port: 0 });
  const user = await makeUser(app.deps.store, { label: 'metrics-outage' });
  let queuedId: string | undefined;
  try {
    relay.cut();
    const count = (exposition: Exposition) =>
      value(exposition, 'kbqa_upstream_errors_total', { component: 'opensearch' });
    const first = await scrape(t, server.url);
    t.is(count(first), 0);
    t.is(
      value(first, 'kbqa_upstream_errors_total', { component: 'mongodb' }),
      0,
      'every component reads 0 before its first error',
    );

    const query = await app.call('POST', '/api/v1/query', { key: user.key, body: { query: 'Is anybody there?' } });
    t.is(query.status, 503, JSON.stringify(query.body));
    const answered503 = (exposition: Exposition) =>
      value(exposition, 'kbqa_http_requests_total', { method: 'POST', route: '/api/v1/query', status: '503' });
    const afterQuery = await scrapeWhen(t, (exposition) => answered503(exposition) >= 1, server.url);
    t.is(count(afterQuery), 1);
    t.is(answered503(afterQuery), 1);

    // A request waiting for its document: its job fails on the outage and the request answers 503, counted once.
    const waited = await app.call('POST', '/api/v1/documents', {
      key: user.key,
      body: {
        kb_id: user.defaultKnowledgeBaseId,
        filename: 'waited.md',
        content: '# Waited\n\nA document whose request waits for it.',
      },
    });
    t.is(waited.status, 503, JSON.stringify(waited.body));
    t.is(count(await scrape(t, server.url)), 2);

    // A queued document: nobody waits, so the runner counts the attempt that failed (it will be retried).
    const queued = await app.call('POST', '/api/v1/documents', {
      key: user.key,
      headers: { prefer: 'respond-async' },
      body: {
        kb_id: user.defaultKnowledgeBaseId,
        filename: 'queued.md',
        content: '# Queued\n\nA document nobody waits for.',
      },
    });
    t.is(queued.status, 202, JSON.stringify(queued.body));
    queuedId = queued.body.document.id as string;
    const deadline = Date.now() + 30_000;
    let seen = 2;
    while (Date.now() < deadline && seen < 3) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      seen = count(await scrape(t, server.url));
    }
    t.true(seen >= 3, `the queued job's failed attempt is counted (saw ${seen})`);
  } finally {
    await server.close();
    await app.close();
    await relay.close();
    // The queued document is removed by the app that reaches OpenSearch (its job would otherwise wait for a retry).
    if (queuedId) await healthy.call('DELETE', `/api/v1/documents/${queuedId}`, { key: user.key });
  }
});

// The listener ------------------------------------------------------------------------------------------------------

test('/metrics is served on its own port only', async (t) => {
  const { app, metrics } = t.context;
  t.is((await app.call('GET', '/metrics')).status, 404);
  t.is((await app.call('GET', '/METRICS')).status, 404);
  t.is((await fetch(`${metrics.url}/other`)).status, 404);
  t.is((await fetch(`${metrics.url}/metrics`, { method: 'POST' })).status, 405);
  const head = await fetch(`${metrics.url}/metrics`, { method: 'HEAD' });
  t.is(head.status, 200);
});

test('KBQA_METRICS_PORT and KBQA_METRICS_HOST configure the listener; off turns it off', (t) => {
  t.deepEqual(loadConfig({}).metrics, { host: '127.0.0.1', port: 9464 });
  t.deepEqual(
    loadConfig({ KBQA_METRICS_PORT: '' }).metrics,
    { host: '127.0.0.1', port: 9464 },
    'empty means unset, as for every knob',
  );
  t.deepEqual(loadConfig({ KBQA_METRICS_PORT: '0', KBQA_METRICS_HOST: '0.0.0.0' }).metrics, {
    host: '0.0.0.0',
    port: 0,
  });
  t.is(loadConfig({ KBQA_METRICS_PORT: 'off' }).metrics, null);
  t.throws(() => loadConfig({ KBQA_METRICS_PORT: 'nine' }), { message: /KBQA_METRICS_PORT/ });
});

test('a busy metrics port names the variable that moves it', async (t) => {
  const metrics = createMetrics();
  const first = await startMetricsServer(metrics, { host: '127.0.0.1', port: 0 });
  try {
    const port = Number(new URL(first.url).port);
    await t.throwsAsync(startMetricsServer(metrics, { host: '127.0.0.1', port }), {
      message: /busy.*KBQA_METRICS_PORT/,
    });
  } finally {
    await first.close();
  }
});
