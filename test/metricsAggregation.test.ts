// The node:cluster primary's /metrics (KBQA_API_PROCESSES > 1) never lets a counter or histogram fall, which
// Prometheus would read as a counter reset (rate()/increase() counting the whole sum again):
//
// - with stand-in API processes (the real registries and IPC handler of metrics.ts over an in-process channel, no
//   cluster): two processes' counters summed; one that misses a scrape is counted by its last answer (its gauges left
//   out); one that exits is kept in a retired total, its gauges dropped, and its replacement's counts added on; one
//   that exits after answering, in the middle of a scrape, is counted once.
// - the real API with KBQA_API_PROCESSES=2: a process SIGKILLed and replaced, and kbqa_http_requests_total read
//   across it never falls.
import type { Worker } from 'node:cluster';
import { EventEmitter } from 'node:events';
import {
  answerMetricsRequests,
  createClusterMetrics,
  createMetrics,
  type MetricSources,
  type Metrics,
} from '../service/metrics.ts';
import {
  freePort,
  getOnNewConnection,
  metricSamples,
  scrapeMetrics,
  startApiProcess,
  until,
} from './helpers/apiProcess.ts';
import { testWithDatabase } from './helpers/app.ts';

// The file's own database (the harness's): the API child's job runner claims every claimable job in its database.
const test = testWithDatabase();

const HEALTHZ = '{method="GET",route="/healthz",status="200"}';

/** The series this test follows, one number each (undefined: not in the exposition). */
function totals(exposition: string) {
  return {
    requests: metricSamples(exposition, 'kbqa_http_requests_total').get(HEALTHZ),
    durationCount: metricSamples(exposition, 'kbqa_http_request_duration_seconds_count').get(HEALTHZ),
    // Sums of 0.1 s: to the ninth decimal.
    durationSum: Number(metricSamples(exposition, 'kbqa_http_request_duration_seconds_sum').get(HEALTHZ)?.toFixed(9)),
    upstreamErrors: metricSamples(exposition, 'kbqa_upstream_errors_total').get('{component="opensearch"}'),
    modelWorkers: metricSamples(exposition, 'kbqa_model_pool_workers').get(''),
    apiProcessErrors: metricSamples(exposition, 'kbqa_metrics_collect_errors_total').get('{source="api_process"}'),
  };
}

/**
 * An API process as the primary sees it: a Worker whose IPC reaches answerMetricsRequests over a real registry
 * (createMetrics), with `modelWorkers` model threads (a gauge). `answering = false`: it receives requests and ignores
 * them (stuck); `exitAfterAnswering`: it dies right after its next answer.
 */
class StandIn {
  readonly metrics: Metrics = createMetrics();
  readonly worker: Worker;
  answering = true;
  exitAfterAnswering = false;
  private dead = false;

  constructor(id: number, modelWorkers: number) {
    const emitter = new EventEmitter();
    const channel = Object.assign(new EventEmitter(), {
      connected: true,
      send: (message: unknown) => {
        // A copy, as IPC makes: prom-client's JSON shares its value objects with the live counters.
        emitter.emit('message', structuredClone(message));
        if (this.exitAfterAnswering) this.exit();
        return true;
      },
    });
    answerMetricsRequests(this.metrics, channel as unknown as NodeJS.Process);
    this.metrics.collectFrom({
      store: { countJobsByState: async () => ({ queued: 0, retry_wait: 0, running: 0 }) },
      models: {
        stats: () => ({
          workers: modelWorkers,
          running: { interactive: 0, background: 0 },
          queued: { interactive: 0, background: 0 },
        }),
      },
      jobs: { runningJobs: () => [], pdfPoolStats: () => null },
    } as MetricSources);
    this.worker = Object.assign(emitter, {
      id,
      isDead: () => this.dead,
      send: (message: unknown) => {
        if (this.dead) throw new Error('channel closed');
        if (this.answering) channel.emit('message', structuredClone(message));
        return true;
      },
    }) as unknown as Worker;
  }

  /** `count` answered /healthz requests of 0.1 s each, and one OpenSearch outage. */
  serve(count: number): void {
    for (let index = 0; index < count; index++)
      this.metrics.observeRequest({ method: 'GET', route: '/healthz', status: 200, seconds: 0.1 });
    this.metrics.countUpstreamError('opensearch');
  }

  exit(): void {
    this.dead = true;
    this.worker.emit('exit', null, 'SIGKILL');
  }
}

/** The primary's metrics over `live` stand-ins, answering within 100 ms; `died` does what apiProcesses.ts does on an exit. */
function primary(live: StandIn[]) {
  const cluster = createClusterMetrics(() => live.map((standIn) => standIn.worker), { answerTimeoutMs: 100 });
  return {
    scrape: async () => totals(await cluster.scrape()),
    died(standIn: StandIn) {
      live.splice(live.indexOf(standIn), 1);
      cluster.retireProcess(standIn.worker);
    },
  };
}

test('two processes: counters and histograms summed, gauges summed', async (t) => {
  const a = new StandIn(1, 2);
  const b = new StandIn(2, 3);
  a.serve(3);
  b.serve(5);
  const { scrape } = primary([a, b]);
  const sum = await scrape();
  t.is(sum.requests, 8);
  t.is(sum.durationCount, 8);
  t.is(sum.durationSum, 0.8);
  t.is(sum.upstreamErrors, 2);
  t.is(sum.modelWorkers, 5);
  t.is(sum.apiProcessErrors, 0);
});

test('a process that misses a scrape is counted by its last answer: nothing falls; its gauges are left out', async (t) => {
  const a = new StandIn(1, 2);
  const b = new StandIn(2, 3);
  a.serve(3);
  b.serve(5);
  const { scrape } = primary([a, b]);
  t.is((await scrape()).requests, 8);

  b.answering = false;
  a.serve(1);
  const missed = await scrape();
  t.is(missed.requests, 9, "b's 5 from its last answer, a's 4");
  t.is(missed.durationCount, 9);
  t.is(missed.upstreamErrors, 3, 'a: 2, b: 1 (its last answer)');
  t.is(missed.modelWorkers, 2, "a's only: b's reading is not current");
  t.is(missed.apiProcessErrors, 1, 'the miss is counted');

  // It answers again: its new counts, once.
  b.answering = true;
  b.serve(2);
  const back = await scrape();
  t.is(back.requests, 11);
  t.is(back.upstreamErrors, 4);
  t.is(back.modelWorkers, 5);
});

test('a process that exits: its counts stay in the sum, its gauges go, and its replacement (from 0) adds to it', async (t) => {
  const a = new StandIn(1, 2);
  const b = new StandIn(2, 3);
  a.serve(3);
  b.serve(5);
  const live = [a, b];
  const { scrape, died } = primary(live);
  const before = await scrape();
  t.is(before.requests, 8);

  // b counts 2 more it never reports, then dies: those are lost with it, and nothing falls.
  b.serve(2);
  b.exit();
  died(b);
  const afterExit = await scrape();
  t.is(afterExit.requests, 8, 'not lower than before');
  t.is(afterExit.durationCount, 8);
  t.is(afterExit.durationSum, 0.8);
  t.is(afterExit.upstreamErrors, 2);
  t.is(afterExit.modelWorkers, 2, "the dead process's gauge is gone");
  t.is(afterExit.apiProcessErrors, 0, 'a process that exited is not a miss');

  // Its replacement starts from 0 and adds on; a second death is retired on top of the first.
  const c = new StandIn(3, 4);
  live.push(c);
  const fresh = await scrape();
  t.is(fresh.requests, 8, 'a process with no requests yet adds nothing, takes nothing');
  t.is(fresh.modelWorkers, 6);
  c.serve(4);
  a.serve(1);
  const grown = await scrape();
  t.is(grown.requests, 13);
  t.is(grown.upstreamErrors, 4);
  c.exit();
  died(c);
  const secondExit = await scrape();
  t.is(secondExit.requests, 13);
  t.is(secondExit.upstreamErrors, 4);
  t.is(secondExit.modelWorkers, 2);
});

test('a process that answers and then exits during the same scrape is counted once', async (t) => {
  const a = new StandIn(1, 2);
  const b = new StandIn(2, 3);
  a.serve(3);
  b.serve(5);
  const live = [a, b];
  const cluster = createClusterMetrics(() => live.map((standIn) => standIn.worker), { answerTimeoutMs: 100 });
  t.is(totals(await cluster.scrape()).requests, 8);

  // b is stuck (the scrape waits 100 ms for it), a answers with 1 more and dies while the scrape waits.
  b.answering = false;
  a.serve(1);
  a.exitAfterAnswering = true;
  a.worker.once('exit', () => {
    live.splice(live.indexOf(a), 1);
    cluster.retireProcess(a.worker);
  });
  const during = totals(await cluster.scrape());
  t.is(during.requests, 9, "a's 4 (retired), b's 5 (its last answer): not 13");
  const after = totals(await cluster.scrape());
  t.is(after.requests, 9);
  t.is(after.modelWorkers, undefined, 'no process answered: no model-pool reading');
});

// The real API ---------------------------------------------------------------------------------------------------

test('KBQA_API_PROCESSES=2: a process SIGKILLed and replaced, and kbqa_http_requests_total never falls', async (t) => {
  const metricsPort = await freePort();
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const listening: number[] = [];
  const api = await startApiProcess(
    {
      KBQA_MONGODB_URL: t.context.databaseUrl,
      KBQA_API_PROCESSES: '2',
      KBQA_MODEL_WORKERS: '1',
      KBQA_METRICS_PORT: String(metricsPort),
      KBQA_LOG_LEVEL: 'info',
    },
    120_000,
    (text) => {
      if (!text.includes('API process listening')) return;
      const apiPid = (JSON.parse(text) as { apiPid?: number }).apiPid;
      if (apiPid) listening.push(apiPid);
    },
  );
  t.teardown(async () => {
    await api.kill();
    // SIGKILL of the primary leaves its processes to notice that it is gone: make sure.
    for (const pid of listening) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  const [victim] = await until(
    'two API processes listening',
    60_000,
    () => listening.length >= 2 && [...listening],
    api.tail,
  );

  const statuses = await Promise.all(Array.from({ length: 24 }, () => getOnNewConnection(`${api.url}/healthz`)));
  t.deepEqual([...new Set(statuses)], [200]);
  const requestsIn = (text: string) => metricSamples(text, 'kbqa_http_requests_total').get(HEALTHZ) ?? 0;
  // Settled: two scrapes in a row agree, and both processes answered.
  let previous = -1;
  const before = await until('the request count settled', 15_000, async () => {
    const text = await scrapeMetrics(metricsUrl);
    const count = requestsIn(text);
    const settled = count === previous && count >= 24 ? count : null;
    previous = count;
    return settled;
  });

  process.kill(victim, 'SIGKILL');
  const read = [before];
  const first = await scrapeMetrics(metricsUrl);
  read.push(requestsIn(first));
  await until('a replacement listening', 60_000, () => listening.length >= 3, api.tail);
  await until(
    'the primary counting two processes again',
    15_000,
    async () => metricSamples(await scrapeMetrics(metricsUrl), 'kbqa_api_processes').get('') === 2,
  );
  read.push(requestsIn(await scrapeMetrics(metricsUrl)));
  t.true(
    read.every((count, index) => index === 0 || count >= read[index - 1]),
    `never falls: ${read.join(' → ')}`,
  );
  t.is(read.at(-1), before, 'the dead process kept its requests in the sum');

  // The replacement's and the survivor's new requests add on.
  await Promise.all(Array.from({ length: 10 }, () => getOnNewConnection(`${api.url}/healthz`)));
  const after = await until('the new requests counted', 15_000, async () => {
    const count = requestsIn(await scrapeMetrics(metricsUrl));
    return count >= before + 10 ? count : null;
  });
  read.push(after);
  t.is(after, before + 10);
  t.log(`kbqa_http_requests_total ${HEALTHZ} across the kill of ${victim}: ${read.join(' → ')}`);
});
