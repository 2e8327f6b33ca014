// What `kbqa index status | migrate | drop-old | rollback` asks OpenSearch: one named function per request. The
// sequencing (fill, catch up, check, swap) is operations/indexMigration/; only this folder talks to OpenSearch.
import {
  CHUNKS_ALIAS,
  HYBRID_EXPLAIN_SEARCH_PIPELINE,
  HYBRID_SEARCH_PIPELINE,
  chunkIndexBody,
  chunkIndexName,
  loadSearchAssets,
  type SearchAssets,
  type SearchAssetSettings,
} from './assets.ts';
import { installIndexAssets } from './applyAssets.ts';
import {
  aliasIndices,
  ensureServiceFields,
  familyIndices,
  indexMeta,
  setIndexMeta,
  type ChunkIndexMeta,
} from './chunkIndices.ts';
import { chunkVersionQuery, documentVersionId, indexChunks, listChunkGroups, type ChunkDocument } from './chunks.ts';
import { reindexScript } from './reindexScript.ts';
import type { SearchClient } from './client.ts';
import { clusterAssetDrift, indexDrift, MIGRATE_COMMAND, type Drift } from './drift.ts';
import { CopyTimedOutError, UpstreamUnavailableError } from '../errors.ts';

export interface IndexStats {
  index: string;
  /** Chunks (primary documents). */
  chunks: number;
  /** Distinct documents (a cardinality aggregation: exact up to 40,000, approximate above). */
  documents: number;
  segments: number;
  store_bytes: number;
  health: string;
}

export interface DocumentVersion {
  document_id: string;
  version: number;
}

const TASK_POLL_MS = 250;
/** How long one `_reindex` of a batch of versions may run before it is cancelled (a stuck task, a cluster in trouble). */
export const COPY_TIMEOUT_MS = 10 * 60_000;

/** Drift of the index itself (not of the cluster's assets): only a new index resolves it. */
export const INDEX_DRIFT_KINDS: ReadonlySet<Drift['kind']> = new Set([
  'analysis',
  'mappings',
  'version',
  'embedder',
  'chunking',
]);

/**
 * The command that resolves this drift, for `kbqa index status` and /readyz alike. The live index being the one
 * the current template version and embedder name, yet differing from the file, means the file was edited in place:
 * an index's analysis cannot change, so the way out is a new version, then a migration. Search pipelines are
 * installed by start-up as the API's configuration renders them (a migration never touches them).
 */
export function resolvingCommand(
  drift: Drift[],
  live: string | null,
  target: string,
  assets: Pick<SearchAssets, 'templateFile' | 'version'>,
): string | null {
  if (drift.length === 0) return null;
  const steps: string[] = [];
  const indexDrift = drift.some((entry) => INDEX_DRIFT_KINDS.has(entry.kind));
  if (indexDrift && live === target)
    steps.push(
      `copy ${assets.templateFile} to index-templates/kbqa-chunks.v${assets.version + 1}.json, then ${MIGRATE_COMMAND}`,
    );
  else if (indexDrift || drift.some((entry) => entry.kind === 'index_template' || entry.kind === 'ingest_pipeline'))
    steps.push(MIGRATE_COMMAND);
  if (drift.some((entry) => entry.kind === 'search_pipeline'))
    steps.push('restart the API (start-up installs the search pipelines as its configuration renders them)');
  return steps.join('; ');
}

export function indexAdminRequests(client: SearchClient, settings: SearchAssetSettings) {
  const alias = settings.alias ?? CHUNKS_ALIAS;
  const idempotent = true;

  async function stats(indices: string[]): Promise<IndexStats[]> {
    if (indices.length === 0) return [];
    const list = indices.join(',');
    const [response, health] = await Promise.all([
      client.request<{
        indices?: Record<
          string,
          {
            primaries: { docs?: { count: number }; segments?: { count: number } };
            total: { store?: { size_in_bytes: number }; segments?: { count: number } };
          }
        >;
      }>('GET', `/${list}/_stats/docs,store,segments`, { querystring: { ignore_unavailable: true } }),
      client.request<Array<{ index: string; health: string }>>('GET', `/_cat/indices/${list}`, {
        querystring: { format: 'json', h: 'index,health', ignore_unavailable: true },
      }),
    ]);
    const rows: IndexStats[] = [];
    for (const index of indices) {
      const found = response.indices?.[index];
      if (!found) continue;
      const distinct = await client.request<{ aggregations: { documents: { value: number } } }>(
        'POST',
        `/${index}/_search`,
        {
          body: {
            size: 0,
            track_total_hits: false,
            aggs: { documents: { cardinality: { field: 'document_id', precision_threshold: 40_000 } } },
          },
        },
      );
      rows.push({
        index,
        chunks: found.primaries.docs?.count ?? 0,
        documents: distinct.aggregations.documents.value,
        segments: found.total.segments?.count ?? 0,
        store_bytes: found.total.store?.size_in_bytes ?? 0,
        health: health.find((row) => row.index === index)?.health ?? 'unknown',
      });
    }
    return rows;
  }

  return {
    alias,
    /** The asset files as they are now (read on each call: they are edited while the service runs). */
    assets: () => loadSearchAssets(settings.assetsDir),
    /** The index a template version and embedder make for this alias. */
    indexNameFor: (version: number, embedderName: string) => chunkIndexName(embedderName, alias, version),
    aliasIndices: () => aliasIndices(client, alias),
    family: () => familyIndices(client, alias),
    meta: (index: string) => indexMeta(client, index),
    setMeta: (index: string, meta: ChunkIndexMeta) => setIndexMeta(client, index, meta),
    stats,
    /** The live index's drift and the cluster's assets' drift against the files, with the configured embedder. */
    async drift(index: string | null, embedder: { modelName: string; dimensions: number }) {
      const assets = loadSearchAssets(settings.assetsDir);
      return [
        ...(index ? await indexDrift(client, assets, index, embedder, settings.chunking) : []),
        ...(await clusterAssetDrift(client, assets, settings)),
      ];
    },
    /** One index against the current template file, this embedder and the configured chunking (no cluster assets). */
    indexDrift: (index: string, embedder: { modelName: string; dimensions: number }) =>
      indexDrift(client, loadSearchAssets(settings.assetsDir), index, embedder, settings.chunking),
    /** The ingest pipeline the index runs every chunk through, and the search pipelines queries name. */
    async pipelinesInForce(index: string | null): Promise<{ ingest: string | null; search: string[] }> {
      let ingest: string | null = null;
      if (index) {
        const body = await client.request<Record<string, { settings?: Record<string, string> }>>(
          'GET',
          `/${index}/_settings/index.default_pipeline`,
          {
            querystring: { flat_settings: true },
            acceptStatuses: [404],
          },
        );
        ingest = body?.[index]?.settings?.['index.default_pipeline'] ?? null;
      }
      return { ingest, search: [HYBRID_SEARCH_PIPELINE, HYBRID_EXPLAIN_SEARCH_PIPELINE] };
    },
    /**
     * Creates a migration's target from the current template file, set up for a fill: no refresh (no small
     * segments, each with its own HNSW graph) and no replicas (written once, copied once at the end).
     */
    async createFillingIndex(
      index: string,
      embedder: { modelName: string; dimensions: number },
      migration: ChunkIndexMeta['migration'],
    ): Promise<void> {
      const assets = loadSearchAssets(settings.assetsDir);
      await client.request('PUT', `/${index}`, {
        body: chunkIndexBody(assets, settings, { embedder, replicas: 0, refreshInterval: '-1', migration }),
        idempotent,
      });
      await ensureServiceFields(client, index);
    },
    /** Before an index is written to again (`kbqa index use`): the fields this service writes (an index kept from before them). */
    ensureServiceFields: (index: string) => ensureServiceFields(client, index),
    /**
     * The ingest pipelines and the current template, as start-up installs them (no index is touched). Never the
     * search pipelines: those fuse the running API's queries as its configuration says, and a migration run with
     * another configuration (the CLI's environment) must not change them.
     */
    installAssets: () => installIndexAssets(client, settings),
    /** Back to fill settings (a resumed or reused target): no refresh, no replicas. */
    async setIndexFilling(index: string): Promise<void> {
      await client.request('PUT', `/${index}/_settings`, {
        body: { 'index.refresh_interval': '-1', 'index.number_of_replicas': 0 },
        idempotent,
      });
    },
    /** After a fill: the template's refresh interval and the configured replicas. */
    async finishFilling(index: string): Promise<void> {
      const refresh = loadSearchAssets(settings.assetsDir).template.template.settings['index.refresh_interval'] ?? null;
      await client.request('PUT', `/${index}/_settings`, {
        body: { 'index.refresh_interval': refresh, 'index.number_of_replicas': settings.replicas },
        idempotent,
      });
    },
    /** Waits for green, or yellow when the cluster has too few data nodes for the replicas. */
    async waitForHealth(index: string, timeoutSeconds = 120): Promise<string> {
      const cluster = await client.request<{ number_of_data_nodes: number }>('GET', '/_cluster/health');
      const wanted = settings.replicas < cluster.number_of_data_nodes ? 'green' : 'yellow';
      const health = await client.request<{ status: string; timed_out: boolean }>('GET', `/_cluster/health/${index}`, {
        querystring: { wait_for_status: wanted, timeout: `${timeoutSeconds}s` },
        acceptStatuses: [408],
      });
      if (health.timed_out)
        throw new UpstreamUnavailableError(
          'opensearch',
          `${index} did not reach ${wanted} within ${timeoutSeconds} s (it is ${health.status})`,
        );
      return health.status;
    },
    refresh: (index: string) => client.request('POST', `/${index}/_refresh`, { idempotent }),
    /** Chunk groups per document version of one concrete index (exact, paged). */
    versionGroups: (index: string, knowledgeBaseIds?: string[]) => listChunkGroups(client, index, knowledgeBaseIds),
    countChunks: async (index: string) =>
      (await client.request<{ count: number }>('POST', `/${index}/_count`, { body: { query: { match_all: {} } } }))
        .count,
    /**
     * Distinct documents per KB in one index, exact: the (KB, document) pairs OpenSearch finds, paged with a composite
     * aggregation (a `cardinality` is HyperLogLog++, whose hash collisions undercount a large KB the same way on every
     * check; a `terms` aggregation over every KB outgrows search.max_buckets). Counted by OpenSearch itself,
     * independently of the chunk groups a migration's diff reads.
     */
    async documentsPerKnowledgeBase(index: string, knowledgeBaseIds?: string[]): Promise<Map<string, number>> {
      const documents = new Map<string, number>();
      let after: Record<string, string> | undefined;
      for (;;) {
        const body = await client.request<{
          aggregations: {
            pairs: { after_key?: Record<string, string>; buckets: Array<{ key: { knowledge_base_id: string } }> };
          };
        }>('POST', `/${index}/_search`, {
          body: {
            size: 0,
            track_total_hits: false,
            ...(knowledgeBaseIds ? { query: { terms: { knowledge_base_id: knowledgeBaseIds } } } : {}),
            aggs: {
              pairs: {
                composite: {
                  size: 1000,
                  sources: [
                    { knowledge_base_id: { terms: { field: 'knowledge_base_id' } } },
                    { document_id: { terms: { field: 'document_id' } } },
                  ],
                  ...(after ? { after } : {}),
                },
              },
            },
          },
        });
        const { buckets, after_key: afterKey } = body.aggregations.pairs;
        for (const bucket of buckets)
          documents.set(bucket.key.knowledge_base_id, (documents.get(bucket.key.knowledge_base_id) ?? 0) + 1);
        if (buckets.length === 0 || !afterKey) return documents;
        after = afterKey;
      }
    },
    /**
     * Copies these document versions' chunks from one index to another with `_reindex` (a task, polled: a big batch
     * outlasts a request timeout). Through the target's default pipeline, like any chunk write.
     */
    async copyVersions(
      source: string,
      target: string,
      versions: DocumentVersion[],
      timeoutMs = COPY_TIMEOUT_MS,
    ): Promise<number> {
      if (versions.length === 0) return 0;
      const script = reindexScript(source, target);
      const task = await client.request<{ task: string }>('POST', '/_reindex', {
        querystring: { wait_for_completion: false, refresh: false },
        body: {
          conflicts: 'proceed',
          source: { index: source, size: 500, query: versionsQuery(versions) },
          dest: { index: target },
          // Metadata layouts (v1 → v2) and sentence-vector forms (v2 → v3) are converted as they are copied.
          ...(script ? { script } : {}),
        },
      });
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (Date.now() > deadline) {
          // Cancelled, not left running: a later pass copies these versions again (conflicts: proceed).
          await client.request('POST', `/_tasks/${task.task}/_cancel`, { acceptStatuses: [404], idempotent });
          throw new CopyTimedOutError(
            `_reindex ${source} → ${target} of ${versions.length} document version(s) did not finish within ${Math.round(timeoutMs / 1000)} s (task ${task.task}, cancelled): ` +
              `check the cluster's health (kbqa index status), then run ${MIGRATE_COMMAND} again`,
          );
        }
        const status = await client.request<{
          completed: boolean;
          response?: {
            created: number;
            updated: number;
            failures?: Array<{ cause?: { type?: string; reason?: string } }>;
          };
          error?: { type?: string; reason?: string };
        }>('GET', `/_tasks/${task.task}`);
        if (status.completed) {
          const failure = status.error ?? status.response?.failures?.[0]?.cause;
          if (failure)
            throw new Error(
              `_reindex ${source} → ${target} failed: ${failure.type ?? ''} ${failure.reason ?? ''}`.trim(),
            );
          return (status.response?.created ?? 0) + (status.response?.updated ?? 0);
        }
        await new Promise((resolve) => setTimeout(resolve, TASK_POLL_MS));
      }
    },
    /** Writes chunks to one concrete index (never via the alias), in byte-bounded bulks. */
    writeChunks: (index: string, chunks: ChunkDocument[]) => indexChunks(client, index, chunks),
    /** Removes these document versions' chunks from one index. */
    async deleteVersions(index: string, versions: DocumentVersion[]): Promise<number> {
      if (versions.length === 0) return 0;
      const response = await client.request<{ deleted: number }>('POST', `/${index}/_delete_by_query`, {
        querystring: { refresh: true, conflicts: 'proceed' },
        body: { query: versionsQuery(versions) },
        idempotent,
      });
      return response.deleted;
    },
    /**
     * Points the alias at `to` (its write index) and away from `from`, in ONE _aliases request: OpenSearch applies
     * its actions atomically, so no search ever sees the alias on none or on two indices.
     */
    async swapAlias(from: string[], to: string): Promise<void> {
      await client.request('POST', '/_aliases', {
        body: {
          actions: [
            ...from.filter((index) => index !== to).map((index) => ({ remove: { index, alias } })),
            { add: { index: to, alias, is_write_index: true } },
          ],
        },
        idempotent,
      });
    },
    deleteIndex: (index: string) => client.request('DELETE', `/${index}`, { acceptStatuses: [404], idempotent }),
  };
}

export type IndexAdmin = ReturnType<typeof indexAdminRequests>;

/** Chunks of any of these document versions: one terms clause on the version id, one clause per legacy version 0. */
function versionsQuery(versions: DocumentVersion[]): object {
  const ids = versions
    .filter((entry) => entry.version > 0)
    .map((entry) => documentVersionId(entry.document_id, entry.version));
  const legacy = versions
    .filter((entry) => entry.version === 0)
    .map((entry) => chunkVersionQuery(entry.document_id, 0));
  return {
    bool: {
      should: [...(ids.length > 0 ? [{ terms: { document_version_id: ids } }] : []), ...legacy],
      minimum_should_match: 1,
    },
  };
}
