// `kbqa index status`: the alias, its indices (template version, embedder, counts, size), the pipelines in force
// and the drift from the files, with the command that resolves it. format.ts turns it into lines.
import { resolvingCommand, type ChunkIndexMeta, type Drift, type SearchIndex } from '../../search/index.ts';
import type { Embedder } from './plan.ts';

export interface IndexStatusEntry {
  index: string;
  /** The alias points to it. */
  live: boolean;
  template_version: number | null;
  embedder: string | null;
  dimensions: number | null;
  chunking: ChunkIndexMeta['chunking'];
  migration_state: ChunkIndexMeta['migration']['state'] | null;
  created_at: string | null;
  documents: number;
  chunks: number;
  segments: number;
  store_bytes: number;
  health: string;
}

export interface IndexStatus {
  alias: string;
  assets_dir: string;
  template: { file: string; version: number };
  configured_embedder: Embedder;
  live: string | null;
  /** What `kbqa index migrate` would build (or the live index, when it is that already). */
  target: string;
  indices: IndexStatusEntry[];
  pipelines: { ingest: string | null; search: string[] };
  drift: Drift[];
  /** The command that resolves the drift; null when there is none. */
  command: string | null;
}

export async function indexStatus(deps: { search: SearchIndex; embedder: Embedder }): Promise<IndexStatus> {
  const admin = deps.search.indices;
  const assets = admin.assets();
  const family = await admin.family();
  const stats = await admin.stats(family.map((entry) => entry.index));
  const live = family.find((entry) => entry.aliased)?.index ?? null;
  const drift = await admin.drift(live, deps.embedder);
  const target = admin.indexNameFor(assets.version, deps.embedder.modelName);
  return {
    alias: admin.alias,
    assets_dir: assets.dir,
    template: { file: assets.templateFile, version: assets.version },
    configured_embedder: { modelName: deps.embedder.modelName, dimensions: deps.embedder.dimensions },
    live,
    target,
    indices: family.map((entry) => {
      const found = stats.find((row) => row.index === entry.index);
      return {
        index: entry.index,
        live: entry.aliased,
        template_version: entry.meta?.template_version ?? null,
        embedder: entry.meta?.embedder.name ?? null,
        dimensions: entry.meta?.embedder.dimensions ?? null,
        chunking: entry.meta?.chunking ?? null,
        migration_state: entry.meta?.migration.state ?? null,
        created_at: entry.meta?.created_at ?? null,
        documents: found?.documents ?? 0,
        chunks: found?.chunks ?? 0,
        segments: found?.segments ?? 0,
        store_bytes: found?.store_bytes ?? 0,
        health: found?.health ?? 'missing',
      };
    }),
    pipelines: await admin.pipelinesInForce(live),
    drift,
    // The same command /readyz names (search/indexAdmin.ts resolvingCommand).
    command: resolvingCommand(drift, live, target, assets),
  };
}
