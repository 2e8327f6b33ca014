// Group commit for the chunk index. An ingestion's chunks become searchable once, at its end, by a refresh that
// started after its last bulk was acknowledged. Every ingestion finishing while a refresh runs (or within
// `minIntervalMs` of the last one) shares the next refresh: one small segment for all of them instead of one per
// document. `refresh=wait_for` would park each ingestion until the scheduled refresh (up to refresh_interval, 1 s),
// and refresh=true per bulk writes a segment per request; the bench measures all three (see docs/architecture.md).
import type { SearchClient } from './client.ts';

export interface Refresher {
  /** Resolves once a refresh (of `target`: an index, or by default the alias) that began after this call has completed. */
  refreshed(target?: string): Promise<void>;
  /** Refreshes the chunk index has run since start (for the bench). */
  count(): number;
}

export function startRefresher(client: SearchClient, alias: string, minIntervalMs: number): Refresher {
  let waiting: Array<{ target: string; resolve: () => void; reject: (error: unknown) => void }> = [];
  let running = false;
  let lastStarted = 0;
  let refreshes = 0;

  async function cycle(): Promise<void> {
    running = true;
    try {
      while (waiting.length > 0) {
        const pause = lastStarted + minIntervalMs - Date.now();
        if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
        const batch = waiting;
        waiting = [];
        lastStarted = Date.now();
        try {
          // One refresh for every index written to (during a migration's swap, the old and the new one). An index
          // dropped meanwhile (`kbqa index drop-old`) is skipped, not a failure of every waiter: a waiter whose own
          // index is gone learns it from its writes, which fail.
          const targets = [...new Set(batch.map((waiter) => waiter.target))].join(',');
          await client.request('POST', `/${targets}/_refresh`, {
            querystring: { ignore_unavailable: true, allow_no_indices: true },
            idempotent: true,
          });
          refreshes += 1;
          for (const waiter of batch) waiter.resolve();
        } catch (error) {
          for (const waiter of batch) waiter.reject(error);
        }
      }
    } finally {
      running = false;
    }
  }

  return {
    refreshed(target = alias) {
      return new Promise<void>((resolve, reject) => {
        waiting.push({ target, resolve, reject });
        if (!running) void cycle();
      });
    },
    count: () => refreshes,
  };
}
