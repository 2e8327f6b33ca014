// Which concrete index the alias points to now, and which embedder built it: what queries and chunk writes go to.
// A query resolves it once and runs on that index only (never straddling two during a swap); the vectors it sends
// are that index's embedder's. Cached for ttlMs: a migration waits longer than that after its alias swap before
// its catch-up pass, so every write aimed at the old index has landed by then (commands/indexMigration.ts).
import type { SearchClient } from './client.ts';
import { familyIndices, type FamilyIndex } from './chunkIndices.ts';

export interface ServingIndex {
  /** The concrete index (the alias itself when it does not exist yet: requests then fail as they would have). */
  index: string;
  /** The embedder whose vectors it holds: a question is embedded with it, and chunks written to it too. */
  embedder: { modelName: string; dimensions: number };
}

export interface ServingIndexResolver {
  current(): Promise<ServingIndex>;
  /** Every index of the alias's family (deletes go to all of them: a kept old index, a migration's target). */
  family(): Promise<string[]>;
  /** Forgets the cached answer (after this process moved the alias). */
  invalidate(): void;
}

/** How long a resolution is reused. */
export const SERVING_INDEX_TTL_MS = 2_000;

export function startServingIndexResolver(
  client: SearchClient,
  alias: string,
  configured: { modelName: string; dimensions: number },
  ttlMs = SERVING_INDEX_TTL_MS,
): ServingIndexResolver {
  let known: { at: number; serving: ServingIndex; family: string[] } | null = null;
  let inFlight: Promise<{ serving: ServingIndex; family: string[] }> | null = null;

  async function read(): Promise<{ serving: ServingIndex; family: string[] }> {
    const family: FamilyIndex[] = await familyIndices(client, alias);
    const aliased = family.filter((entry) => entry.aliased);
    if (aliased.length === 0) return { serving: { index: alias, embedder: configured }, family: family.map((entry) => entry.index) };
    // One index behind the alias (start-up and migrations keep it so); were there two, the newest-named one.
    const live = aliased.at(-1)!;
    const embedder =
      live.meta && live.meta.embedder.dimensions > 0 ? { modelName: live.meta.embedder.name, dimensions: live.meta.embedder.dimensions } : configured;
    return { serving: { index: live.index, embedder }, family: family.map((entry) => entry.index) };
  }

  async function resolved(): Promise<{ serving: ServingIndex; family: string[] }> {
    if (known && performance.now() - known.at < ttlMs) return known;
    inFlight ??= read()
      .then((answer) => {
        known = { at: performance.now(), ...answer };
        return answer;
      })
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  }

  return {
    current: async () => (await resolved()).serving,
    family: async () => (await resolved()).family,
    invalidate: () => {
      known = null;
    },
  };
}
