// One query at a time through POST /api/v1/query: client-side latency (performance.now around the whole HTTP call,
// body read included) and the API's Server-Timing stages.
import { round, summarize, type LatencySummary } from './stats.ts';

export function parseServerTiming(header: string | null | undefined): Record<string, number> {
  const timings: Record<string, number> = {};
  for (const part of (header ?? '').split(',')) {
    const match = /^\s*([\w-]+);dur=([\d.]+)/.exec(part);
    if (match) timings[match[1]] = Number(match[2]);
  }
  return timings;
}

export interface SequentialResult {
  queries: number;
  /** Queries sent before the measured ones (not in the latencies; in a phase's CPU). Absent in older results. */
  warmup_queries?: number;
  failures: number;
  seconds: number;
  queries_per_s: number;
  latency: LatencySummary;
  /** Per Server-Timing stage (embed, search, answer) plus `other` = client latency − the stages' sum. */
  stages: Record<string, { p50_ms: number; p95_ms: number; mean_ms: number }>;
  latencies_ms: number[];
}

export async function runSequentialQueries(options: {
  url: string;
  apiKey: string;
  bodies: Array<Record<string, unknown>>;
  warmup?: number;
  onProgress?: (done: number, total: number) => void;
  /**
   * Instead of one pass over the bodies, cycle through them for as long as this says so (checked before each
   * query): for measuring while something else runs.
   */
  continueWhile?: () => boolean;
}): Promise<SequentialResult> {
  const endpoint = `${options.url}/api/v1/query`;
  const headers = { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' };
  const send = async (body: Record<string, unknown>) => {
    const started = performance.now();
    const response = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(body) });
    await response.arrayBuffer();
    return {
      ms: performance.now() - started,
      ok: response.ok,
      status: response.status,
      timing: parseServerTiming(response.headers.get('server-timing')),
    };
  };

  // Warm-up (not measured): connections, JIT, OpenSearch caches for the index's structures.
  const warmup = Math.min(options.warmup ?? 5, options.bodies.length);
  for (const body of warmup > 0 ? options.bodies.slice(-warmup) : []) await send(body);

  const latencies: number[] = [];
  const stages = new Map<string, number[]>();
  let failures = 0;
  let firstFailure = '';
  const started = performance.now();
  const continueWhile = options.continueWhile;
  let sent = 0;
  while (continueWhile ? continueWhile() : sent < options.bodies.length) {
    const result = await send(options.bodies[sent % options.bodies.length]);
    sent += 1;
    if (!result.ok) {
      failures += 1;
      firstFailure ||= `HTTP ${result.status}`;
    } else {
      latencies.push(result.ms);
      let staged = 0;
      for (const [stage, ms] of Object.entries(result.timing)) {
        if (!stages.has(stage)) stages.set(stage, []);
        stages.get(stage)?.push(ms);
        staged += ms;
      }
      if (!stages.has('other')) stages.set('other', []);
      stages.get('other')?.push(Math.max(0, result.ms - staged));
    }
    if (!continueWhile) options.onProgress?.(sent, options.bodies.length);
  }
  const seconds = (performance.now() - started) / 1000;
  if (failures > 0 && latencies.length === 0) throw new Error(`every query failed (first: ${firstFailure})`);
  return {
    queries: sent,
    warmup_queries: warmup,
    failures,
    seconds: round(seconds, 2),
    queries_per_s: round(latencies.length / seconds, 1),
    latency: summarize(latencies),
    stages: Object.fromEntries(
      [...stages].map(([stage, values]) => {
        const summary = summarize(values);
        return [stage, { p50_ms: summary.p50_ms, p95_ms: summary.p95_ms, mean_ms: summary.mean_ms }];
      }),
    ),
    latencies_ms: latencies.map((value) => round(value, 2)),
  };
}
