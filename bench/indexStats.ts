// What the chunk index looks like and has done: refreshes, segments, merges, documents (`_stats` over the alias,
// primaries). Index-wide: the index is shared with whatever else uses the stack, so a delta over a phase also counts
// other clients' work; the report says so.
import type { SearchIndex } from '../service/search/index.ts';
import { cpuSeconds } from './phases.ts';
import { round } from './stats.ts';

export interface ChunkIndexStats {
  documents: number;
  /** Every refresh the shard ran: scheduled (index.refresh_interval), requested (_refresh, ?refresh=) and internal. */
  refreshes: number;
  /** Refreshes that made changes visible to search (scheduled and requested ones, not internal). */
  external_refreshes: number;
  segments: number;
  merges: number;
  merges_running: number;
  merge_ms: number;
}

interface PrimaryStats {
  docs?: { count: number };
  refresh?: { total: number; external_total?: number };
  segments?: { count: number };
  merges?: { current: number; total: number; total_time_in_millis: number };
}

export async function chunkIndexStats(search: SearchIndex): Promise<ChunkIndexStats> {
  const response = await search.request<{ _all: { primaries: PrimaryStats } }>(
    'GET',
    `/${search.alias}/_stats/docs,refresh,segments,merge`,
  );
  const primaries = response._all.primaries;
  return {
    documents: primaries.docs?.count ?? 0,
    refreshes: primaries.refresh?.total ?? 0,
    external_refreshes: primaries.refresh?.external_total ?? primaries.refresh?.total ?? 0,
    segments: primaries.segments?.count ?? 0,
    merges: primaries.merges?.total ?? 0,
    merges_running: primaries.merges?.current ?? 0,
    merge_ms: primaries.merges?.total_time_in_millis ?? 0,
  };
}

/** after − before for the counters (refreshes, merges, merge time); the gauges (segments, documents) as they are after. */
export function statsDelta(before: ChunkIndexStats, after: ChunkIndexStats) {
  return {
    refreshes: after.refreshes - before.refreshes,
    external_refreshes: after.external_refreshes - before.external_refreshes,
    merges: after.merges - before.merges,
    merge_ms: after.merge_ms - before.merge_ms,
    segments_before: before.segments,
    segments_after: after.segments,
  };
}

export type ChunkIndexDelta = ReturnType<typeof statsDelta>;

/**
 * Waits until no merge runs on the chunk index (at most `limitMs`), and says how long that took. A phase that
 * writes leaves merges behind; waiting charges their CPU to the phase that caused them, and keeps them from
 * slowing the next phase's queries.
 */
export async function waitForMerges(
  search: SearchIndex,
  limitMs = 60_000,
): Promise<{ seconds: number; settled: boolean }> {
  const started = performance.now();
  for (;;) {
    const stats = await chunkIndexStats(search);
    if (stats.merges_running === 0) return { seconds: round((performance.now() - started) / 1000, 2), settled: true };
    if (performance.now() - started > limitMs)
      return { seconds: round((performance.now() - started) / 1000, 2), settled: false };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** What OpenSearch spent on a piece of work: its CPU, and what the chunk index did meanwhile. */
export interface OpenSearchWork {
  /** OpenSearch's CPU from the start of the work until merges settled after it (null: its pid is unknown). */
  cpu_ms: number | null;
  cpu_ms_per_chunk: number | null;
  /**
   * OpenSearch's CPU over IDLE_SECONDS just before the work, with nothing of the bench running (its housekeeping
   * and other clients of the shared stack), in % of one core.
   */
  idle_cpu_percent: number | null;
  /** cpu_ms minus that idle rate over the work's span, per chunk: an estimate of the work's own cost. */
  net_cpu_ms_per_chunk: number | null;
  /** How long the merges the work left behind ran after it ended (included in cpu_ms). */
  merge_wait_seconds: number;
  merges_settled: boolean;
  index: ChunkIndexDelta;
}

const IDLE_SECONDS = 3;

/**
 * Runs `work` (which reports how many chunks it indexed) and charges OpenSearch's CPU to it, up to the moment the
 * merges it caused have finished. Waits for earlier merges first and samples OpenSearch's idle rate, so neither
 * a previous phase's merges nor the shared stack's background is mistaken for this work's cost.
 */
export async function measureOpenSearchWork<T>(
  search: SearchIndex,
  openSearchPid: number | undefined,
  work: () => Promise<T>,
  chunksOf: (result: T) => number,
): Promise<{ result: T; opensearch: OpenSearchWork }> {
  await waitForMerges(search);
  const idle = await idleCpuPercent(openSearchPid, IDLE_SECONDS);
  const before = await chunkIndexStats(search);
  const cpuBefore = openSearchPid === undefined ? null : cpuSeconds(openSearchPid);
  const started = performance.now();
  const result = await work();
  const merges = await waitForMerges(search);
  const cpuAfter = openSearchPid === undefined ? null : cpuSeconds(openSearchPid);
  const spanSeconds = (performance.now() - started) / 1000;
  const after = await chunkIndexStats(search);
  const cpuMs = cpuBefore === null || cpuAfter === null ? null : round((cpuAfter - cpuBefore) * 1000, 0);
  const chunks = chunksOf(result);
  const perChunk = (ms: number | null) => (ms === null || chunks === 0 ? null : round(ms / chunks, 2));
  return {
    result,
    opensearch: {
      cpu_ms: cpuMs,
      cpu_ms_per_chunk: perChunk(cpuMs),
      idle_cpu_percent: idle,
      net_cpu_ms_per_chunk:
        cpuMs === null || idle === null ? null : perChunk(Math.max(0, cpuMs - (idle / 100) * spanSeconds * 1000)),
      merge_wait_seconds: merges.seconds,
      merges_settled: merges.settled,
      index: statsDelta(before, after),
    },
  };
}

/** OpenSearch's CPU while nothing of the bench runs, in % of one core (its own housekeeping and other clients). */
export async function idleCpuPercent(openSearchPid: number | undefined, seconds: number): Promise<number | null> {
  if (openSearchPid === undefined) return null;
  const before = cpuSeconds(openSearchPid);
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const after = cpuSeconds(openSearchPid);
  if (before === null || after === null) return null;
  return round(((after - before) / ((performance.now() - started) / 1000)) * 100, 1);
}
