// Which concrete index the alias points to now, and which embedder built it: what queries and chunk writes go to.
// A query resolves it once and runs on that index only (never straddling two during a swap); the vectors it sends
// are that index's embedder's. Cached for ttlMs: a migration waits longer than that after its alias swap before
// its catch-up pass, so every write aimed at the old index has landed by then (operations/indexMigration/).
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

/**
 * How long the last answer keeps serving while the alias cannot be read (OpenSearch restarting, a node gone): a
 * query goes to the index it went to a moment ago rather than failing; past this, a failed read fails the request.
 */
export const SERVING_INDEX_STALE_MS = 30_000;

export function startServingIndexResolver(
  client: SearchClient,
  alias: string,
  /** Read lazily: an OpenAI-compatible embedder's dimensions are unknown until it answers (only an alias with no index needs them). */
  configured: { readonly modelName: string; readonly dimensions: number },
  ttlMs = SERVING_INDEX_TTL_MS,
  staleMs = SERVING_INDEX_STALE_MS,
): ServingIndexResolver {
  let known: { at: number; serving: ServingIndex; family: string[] } | null = null;
  let inFlight: Promise<{ serving: ServingIndex; family: string[] }> | null = null;
  // Bumped by invalidate(): a read that began before it may have seen the alias before it moved, so its answer is
  // handed to its own callers but never cached (nor shared with callers that came after the invalidation).
  let generation = 0;

  async function read(): Promise<{ serving: ServingIndex; family: string[] }> {
    const family: FamilyIndex[] = await familyIndices(client, alias);
    const aliased = family.filter((entry) => entry.aliased);
    if (aliased.length === 0)
      return {
        serving: { index: alias, embedder: { modelName: configured.modelName, dimensions: configured.dimensions } },
        family: family.map((entry) => entry.index),
      };
    // One index behind the alias (start-up and migrations keep it so); were there two, the newest-named one.
    const live = aliased.at(-1)!;
    const embedder =
      live.meta && live.meta.embedder.dimensions > 0
        ? { modelName: live.meta.embedder.name, dimensions: live.meta.embedder.dimensions }
        : { modelName: configured.modelName, dimensions: configured.dimensions };
    return { serving: { index: live.index, embedder }, family: family.map((entry) => entry.index) };
  }

  function resolved(): Promise<{ serving: ServingIndex; family: string[] }> {
    if (known && performance.now() - known.at < ttlMs) return Promise.resolve(known);
    if (inFlight) return inFlight;
    const started = generation;
    const reading = read().then(
      (answer) => {
        if (generation === started) known = { at: performance.now(), ...answer };
        return answer;
      },
      (error: unknown) => {
        // The last answer, while it is recent enough (and not forgotten by invalidate()): a query keeps working.
        if (known && generation === started && performance.now() - known.at < staleMs) return known;
        throw error;
      },
    );
    const shared = reading.finally(() => {
      if (inFlight === shared) inFlight = null;
    });
    inFlight = shared;
    return shared;
  }

  return {
    current: async () => (await resolved()).serving,
    family: async () => (await resolved()).family,
    invalidate: () => {
      generation += 1;
      known = null;
      inFlight = null;
    },
  };
}
