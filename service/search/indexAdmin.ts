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
import { indexChunks, listChunkGroups, type ChunkDocument } from './chunks.ts';
import { COPY_TIMEOUT_MS, copyVersions, versionsQuery, type DocumentVersion } from './copyVersions.ts';
import type { SearchClient } from './client.ts';
import { clusterAssetDrift, indexDrift, MIGRATE_COMMAND, type Drift } from './drift.ts';
import { UpstreamUnavailableError } from '../errors.ts';

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

/**
 * Every request `kbqa index …` makes, bound to one client and alias: the reads (what is there, how it drifted) and
 * the writes (create, fill, copy, swap, drop), built apart so each stays one look long.
 */
export function indexAdminRequests(client: SearchClient, settings: SearchAssetSettings) {
  const alias = settings.alias ?? CHUNKS_ALIAS;
  return { alias, ...indexReads(client, settings, alias), ...indexWrites(client, settings, alias) };
}

function indexReads(client: SearchClient, settings: SearchAssetSettings, alias: string) {
  return {
    /** The asset files as they are now (read on each call: they are edited while the service runs). */
    assets: () => loadSearchAssets(settings.assetsDir),
    /** The index a template version and embedder make for this alias. */
    indexNameFor: (version: number, embedderName: string) => chunkIndexName(embedderName, alias, version),
    aliasIndices: () => aliasIndices(client, alias),
    family: () => familyIndices(client, alias),
    meta: (index: string) => indexMeta(client, index),
    stats: (indices: string[]) => indexStats(client, indices),
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
    pipelinesInForce: (index: string | null) => pipelinesInForce(client, index),
    /** Waits for green, or yellow when the cluster has too few data nodes for the replicas. */
    waitForHealth: (index: string, timeoutSeconds = 120) => waitForHealth(client, settings, index, timeoutSeconds),
    /** Chunk groups per document version of one concrete index (exact, paged). */
    versionGroups: (index: string, knowledgeBaseIds?: string[]) => listChunkGroups(client, index, knowledgeBaseIds),
    countChunks: async (index: string) =>
      (await client.request<{ count: number }>('POST', `/${index}/_count`, { body: { query: { match_all: {} } } }))
        .count,
    documentsPerKnowledgeBase: (index: string, knowledgeBaseIds?: string[]) =>
      documentsPerKnowledgeBase(client, index, knowledgeBaseIds),
  };
}

function indexWrites(client: SearchClient, settings: SearchAssetSettings, alias: string) {
  return {
    setMeta: (index: string, meta: ChunkIndexMeta) => setIndexMeta(client, index, meta),
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
    refresh: (index: string) => client.request('POST', `/${index}/_refresh`, { idempotent }),
    copyVersions: (source: string, target: string, versions: DocumentVersion[], timeoutMs = COPY_TIMEOUT_MS) =>
      copyVersions(client, source, target, versions, timeoutMs),
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

/** Each of these requests lands the same however often it is sent: the client may retry it on another node. */
const idempotent = true;

/** Chunks, distinct documents, segments, bytes and health of each of these indices (missing ones left out). */
async function indexStats(client: SearchClient, indices: string[]): Promise<IndexStats[]> {
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
    rows.push({
      index,
      chunks: found.primaries.docs?.count ?? 0,
      documents: await distinctDocuments(client, index),
      segments: found.total.segments?.count ?? 0,
      store_bytes: found.total.store?.size_in_bytes ?? 0,
      health: health.find((row) => row.index === index)?.health ?? 'unknown',
    });
  }
  return rows;
}

/** A cardinality aggregation: exact up to 40,000 documents, approximate above (a status line, not a check). */
async function distinctDocuments(client: SearchClient, index: string): Promise<number> {
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
  return distinct.aggregations.documents.value;
}

async function pipelinesInForce(
  client: SearchClient,
  index: string | null,
): Promise<{ ingest: string | null; search: string[] }> {
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
}

async function waitForHealth(
  client: SearchClient,
  settings: SearchAssetSettings,
  index: string,
  timeoutSeconds: number,
): Promise<string> {
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
}

/**
 * Distinct documents per KB in one index, exact: the (KB, document) pairs OpenSearch finds, paged with a composite
 * aggregation (a `cardinality` is HyperLogLog++, whose hash collisions undercount a large KB the same way on every
 * check; a `terms` aggregation over every KB outgrows search.max_buckets). Counted by OpenSearch itself,
 * independently of the chunk groups a migration's diff reads.
 */
async function documentsPerKnowledgeBase(
  client: SearchClient,
  index: string,
  knowledgeBaseIds?: string[],
): Promise<Map<string, number>> {
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
}
