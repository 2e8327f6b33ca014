// Small statistics helpers: nearest-rank percentiles and a latency summary.

/** Nearest-rank percentile (p in 0–100) of unsorted samples; NaN when there are none. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

export interface LatencySummary {
  count: number;
  mean_ms: number;
  p50_ms: number;
  p90_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
}

export function summarize(samples: number[]): LatencySummary {
  const mean = samples.length > 0 ? samples.reduce((sum, value) => sum + value, 0) / samples.length : Number.NaN;
  return {
    count: samples.length,
    mean_ms: round(mean),
    p50_ms: round(percentile(samples, 50)),
    p90_ms: round(percentile(samples, 90)),
    p95_ms: round(percentile(samples, 95)),
    p99_ms: round(percentile(samples, 99)),
    max_ms: round(samples.length > 0 ? Math.max(...samples) : Number.NaN),
  };
}

export function round(value: number, digits = 1): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** A standard normal deviate (Box–Muller). */
export function gaussian(): number {
  let u = 0;
  while (u === 0) u = Math.random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * Math.random());
}
