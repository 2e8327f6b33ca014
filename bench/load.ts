// Concurrent load through autocannon's programmatic API: latencies are collected per response (for exact
// p50/p95/p99 and the histogram), throughput from completed requests over the wall-clock time of the run.
import autocannon from 'autocannon';
import { parseServerTiming } from './sequential.ts';
import { round, summarize, type LatencySummary } from './stats.ts';

export interface LoadResult {
  connections: number;
  requests: number;
  ok: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
  requests_per_s: number;
  latency: LatencySummary;
  /** autocannon's own (HDR histogram) figures, for cross-checking. */
  autocannon: { p50_ms: number; p90_ms: number; p99_ms: number; average_rps: number };
  /** Server-Timing p50 per stage, when the responses carry it. */
  stages_p50_ms?: Record<string, number>;
  latencies_ms: number[];
}

export async function runLoad(options: {
  url: string;
  apiKey: string;
  method: 'GET' | 'POST';
  path: string;
  connections: number;
  /** Bodies to cycle through, one per request (POST). */
  bodies?: string[];
  amount?: number;
  durationSeconds?: number;
}): Promise<LoadResult> {
  const latencies: number[] = [];
  const stages = new Map<string, number[]>();
  let next = 0;
  const headers: Record<string, string> = { authorization: `Bearer ${options.apiKey}` };
  if (options.bodies) headers['content-type'] = 'application/json';
  const bodies = options.bodies;
  const instance = autocannon({
    url: options.url,
    connections: options.connections,
    ...(options.amount !== undefined ? { amount: options.amount } : { duration: options.durationSeconds ?? 10 }),
    timeout: 30,
    requests: [
      {
        method: options.method,
        path: options.path,
        headers,
        // One shared cursor over the bodies, so the connections do not all replay the same query order.
        ...(bodies
          ? {
              setupRequest: (request) => {
                const body = bodies[next % bodies.length];
                next += 1;
                return { ...request, body };
              },
            }
          : {}),
        onResponse: (_status, _body, _context, responseHeaders) => {
          const timing = responseHeaders['server-timing'];
          if (typeof timing !== 'string') return;
          for (const [stage, ms] of Object.entries(parseServerTiming(timing))) {
            if (!stages.has(stage)) stages.set(stage, []);
            stages.get(stage)?.push(ms);
          }
        },
      },
    ],
  });
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    latencies.push(responseTime);
  });
  const started = performance.now();
  const result = await instance;
  const seconds = (performance.now() - started) / 1000;
  const completed = result.latency.totalCount;
  const stagesP50 =
    stages.size > 0
      ? Object.fromEntries([...stages].map(([stage, values]) => [stage, summarize(values).p50_ms]))
      : undefined;
  return {
    connections: options.connections,
    requests: completed,
    ok: result['2xx'],
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds: round(seconds, 2),
    requests_per_s: round(completed / seconds, 1),
    latency: summarize(latencies),
    autocannon: {
      p50_ms: result.latency.p50,
      p90_ms: result.latency.p90,
      p99_ms: result.latency.p99,
      average_rps: result.requests.average,
    },
    ...(stagesP50 ? { stages_p50_ms: stagesP50 } : {}),
    latencies_ms: latencies.map((value) => round(value, 2)),
  };
}
