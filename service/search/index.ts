// The search module: everything the service asks OpenSearch, bound to one client. Only this folder talks to it.
import type { Config } from '../config.ts';
import { applySearchAssets } from './applyAssets.ts';
import { CHUNKS_ALIAS, chunkIndexName, loadSearchAssets, type SearchAssetSettings } from './assets.ts';
import {
  countChunks,
  deleteChunksOfDocument,
  deleteChunksOfDocumentVersion,
  listChunkGroups,
  deleteChunksOfKnowledgeBase,
  refreshChunks,
  type ChunkDocument,
} from './chunks.ts';
import { startBulkCoalescer } from './bulkCoalescer.ts';
import { startRefresher } from './refresher.ts';
import { createSearchClient, type SearchClient, type SearchClientOptions } from './client.ts';
import { listPluginsAndModules, searchEngineProblem } from './readiness.ts';
import { hybridSearch, lexicalQueryText, lexicalSearch, vectorSearch, type RetrievalRequest } from './retrieval.ts';
import { DEFAULT_HYBRID_TUNING, type Bm25Field, type HybridTuning } from '../hybridTuning.ts';
import { startWriteBlockCheck } from './writeBlock.ts';
import { listDocumentPassages } from './passages.ts';
import { snapshotRequests } from './snapshots.ts';
import { startServingIndexResolver, type ServingIndex, type ServingIndexResolver } from './servingIndex.ts';
import { indexAdminRequests, resolvingCommand, type IndexAdmin } from './indexAdmin.ts';
import { indexMeta } from './chunkIndices.ts';
import type { Drift } from './drift.ts';

/**
 * The chunk index's state for /readyz: the alias, the index it points to, and drift with the command that resolves
 * it (the same command `kbqa index status` names). The route publishes only the drift kinds and the command.
 */
export interface SearchIndexDetail {
  alias: string;
  index: string | null;
  drift: Drift[];
  command: string | null;
}

const DRIFT_TTL_MS = 5_000;

/** A retrieval request, optionally bound to the concrete index it was embedded for (servingIndex()). */
export type IndexedRetrievalRequest = RetrievalRequest & { index?: string };

export interface SearchIndexOptions
  extends SearchAssetSettings, Pick<SearchClientOptions, 'auth' | 'caFile' | 'resurrectAfterMs'> {
  /** The BM25 side's fields and each side's depth (fusion.ts HybridTuning); unset: text and title, the request's depth. */
  bm25Fields?: Bm25Field[];
  sentenceWeight?: number;
  bm25Depth?: number | null;
  knnDepth?: number | null;
  /** The first node; `urls`, when given, lists every node (it includes this one). */
  url: string;
  urls?: string[];
  timeoutMs: number;
  /** Least time between two group-commit refreshes (refresher.ts). */
  refreshIntervalMs?: number;
}

export type SearchIndex = ReturnType<typeof openSearchIndex>;

/**
 * The search module as configured: every node, the chunk index of this embedder, the configured RRF fusion.
 * `embedder.dimensions` is read only when an index must be created for it (or drift named with it): pass a getter
 * when they may be unknown yet (an OpenAI-compatible model down since start-up), never a value read at start-up.
 */
export function openConfiguredSearchIndex(
  config: Config,
  embedder: { readonly modelName: string; readonly dimensions: number },
): SearchIndex {
  return openSearchIndex({
    url: config.opensearch.url,
    urls: config.opensearch.urls,
    auth: config.opensearch.auth,
    caFile: config.opensearch.caFile,
    alias: config.opensearch.chunksAlias,
    timeoutMs: config.opensearch.timeoutMs,
    embedderName: embedder.modelName,
    get dimensions() {
      return embedder.dimensions;
    },
    shards: config.opensearch.shards,
    replicas: config.opensearch.replicas,
    rrfRankConstant: config.opensearch.rrfRankConstant,
    rrfWeights: config.opensearch.rrfWeights,
    hybridFusion: config.opensearch.hybridFusion,
    bm25Fields: config.opensearch.bm25Fields,
    sentenceWeight: config.opensearch.sentenceWeight,
    bm25Depth: config.opensearch.bm25Depth,
    knnDepth: config.opensearch.knnDepth,
    refreshIntervalMs: config.ingestion.refreshIntervalMs,
    assetsDir: config.opensearch.assetsDir,
    chunking: config.chunking,
  });
}

export function openSearchIndex(options: SearchIndexOptions) {
  const client = createSearchClient({
    nodes: options.urls ?? [options.url],
    timeoutMs: options.timeoutMs,
    auth: options.auth,
    caFile: options.caFile,
    resurrectAfterMs: options.resurrectAfterMs,
  });
  const alias = options.alias ?? CHUNKS_ALIAS;
  const tuning = hybridTuningOf(options);
  // Dimensions read when needed, not now (see openConfiguredSearchIndex).
  const embedder = {
    modelName: options.embedderName,
    get dimensions() {
      return options.dimensions;
    },
  };
  const serving = startServingIndexResolver(client, alias, embedder);
  let appliedIndex: string | null = null;
  const indices = indexAdminRequests(client, options);
  return {
    alias,
    /** The index start-up found or made behind the alias (before start-up: the current version's name for this embedder). */
    get indexName(): string {
      return appliedIndex ?? chunkIndexName(options.embedderName, alias, loadSearchAssets(options.assetsDir).version);
    },
    rankConstant: options.rrfRankConstant,
    /** The configured hybrid knobs: what the named pipelines fuse with and how each side is asked. */
    hybridTuning: tuning,
    /** Applies the asset files; never changes the live index's analysis or moves the alias (drift is returned). */
    applyAssets: async () => {
      const applied = await applySearchAssets(client, options);
      appliedIndex = applied.index;
      serving.invalidate();
      return applied;
    },
    /**
     * The concrete index the alias points to and the embedder its vectors are from (cached for ~2 s): embed a
     * question or a document with that embedder, then search or write that index.
     */
    servingIndex: (): Promise<ServingIndex> => serving.current(),
    /** Forget the cached serving index (after moving the alias in this process). */
    forgetServingIndex: () => serving.invalidate(),
    ...chunkWrites(client, alias, serving, options.refreshIntervalMs ?? 0),
    ...chunkQueries(client, alias, serving, tuning),
    problem: () => searchEngineProblem(client),
    listPluginsAndModules: () => listPluginsAndModules(client),
    /** Snapshot repositories, snapshots and restores of the chunk indices: for `kbqa backup` only. */
    snapshots: snapshotRequests(client, alias),
    /** The alias family's indices, drift, and the steps of a migration: for `kbqa index` only. */
    indices,
    /** The live index and what differs from the asset files (cached for a few seconds): /readyz's detail. */
    searchIndexDetail: cachedIndexDetail(alias, serving, indices, embedder),
    /** Raw access for tests and the admin CLI, never for request handling. */
    request: client.request,
    close: () => client.close(),
  };
}

/** The configured hybrid knobs, each unset one at its default. */
function hybridTuningOf(options: SearchIndexOptions): HybridTuning {
  return {
    fusion: options.hybridFusion ?? DEFAULT_HYBRID_TUNING.fusion,
    rankConstant: options.rrfRankConstant,
    weights: options.rrfWeights,
    bm25Depth: options.bm25Depth ?? null,
    knnDepth: options.knnDepth ?? null,
    bm25Fields: options.bm25Fields ?? DEFAULT_HYBRID_TUNING.bm25Fields,
    sentenceWeight: options.sentenceWeight ?? DEFAULT_HYBRID_TUNING.sentenceWeight,
  };
}

/** Writing and deleting chunks: bulks shared between ingestions, group-commit refreshes, the write block. */
function chunkWrites(client: SearchClient, alias: string, serving: ServingIndexResolver, refreshIntervalMs: number) {
  const refresher = startRefresher(client, alias, refreshIntervalMs);
  const bulks = startBulkCoalescer(client, alias);
  const writeBlock = startWriteBlockCheck(client, alias);
  // Deletes reach every index of the family: the one served, a kept old one, a migration's target.
  const deleteTargets = async () => [...new Set([alias, ...(await serving.family())])].join(',');
  return {
    /**
     * Indexes without a refresh (call `chunksSearchable()` once the last batch of an ingestion is in), sharing bulk
     * requests with concurrent ingestions (bulkCoalescer.ts). `index`: the concrete index (servingIndex()); default
     * the alias.
     */
    indexChunks: (chunks: ChunkDocument[], index?: string) => bulks.index(chunks, index),
    removeRecreatedIndex: (index: string, documentId: string, version: number) =>
      removeRecreatedIndex(client, serving, index, documentId, version),
    bulkRequestCount: () => bulks.requests(),
    /** Group commit: resolves after a refresh (of `index`, default the alias) that began after the call (shared with concurrent ingestions). */
    chunksSearchable: (index?: string) => refresher.refreshed(index),
    refreshCount: () => refresher.count(),
    /**
     * The write block on the chunk index (a full disk's read_only_allow_delete, say) or null; cached for a second.
     * assertWritable() throws SearchIndexReadOnlyError (503) while one is set: ingestion asks before it starts.
     */
    writeBlock: () => writeBlock.current(),
    assertWritable: () => writeBlock.assertWritable(),
    refreshChunks: () => refreshChunks(client, alias),
    // Deletes ask about the block first: under it OpenSearch 3 refuses them, but only after retrying for a minute.
    deleteChunksOfDocument: (documentId: string) =>
      writeBlock.assertWritable().then(async () => deleteChunksOfDocument(client, await deleteTargets(), documentId)),
    deleteChunksOfDocumentVersion: (documentId: string, version: number) =>
      writeBlock
        .assertWritable()
        .then(async () => deleteChunksOfDocumentVersion(client, await deleteTargets(), documentId, version)),
    deleteChunksOfKnowledgeBase: (knowledgeBaseId: string) =>
      writeBlock
        .assertWritable()
        .then(async () => deleteChunksOfKnowledgeBase(client, await deleteTargets(), knowledgeBaseId)),
  };
}

/**
 * After an ingestion found the alias moved while it wrote `index`: if that index is no longer this alias's (a
 * `kbqa index drop-old` ran) and its writes created it again from the template (a bulk to a missing index
 * creates it), it holds nothing but this version's chunks and no _meta; it is deleted, and true returned.
 * Otherwise the version's chunks stay there (a kept index is caught up by a rollback's diff).
 */
async function removeRecreatedIndex(
  client: SearchClient,
  serving: ServingIndexResolver,
  index: string,
  documentId: string,
  version: number,
): Promise<boolean> {
  if ((await serving.family()).includes(index)) return false;
  const meta = await indexMeta(client, index);
  if (meta !== null) return false;
  await client.request('POST', `/${index}/_refresh`, {
    querystring: { ignore_unavailable: true },
    idempotent: true,
  });
  const [all, own] = await Promise.all([
    countChunks(client, index),
    countChunks(client, index, { document_id: documentId, document_version: version }),
  ]);
  if (all !== own) return false;
  await client.request('DELETE', `/${index}`, { acceptStatuses: [404], idempotent: true });
  return true;
}

/** Reading chunks: listings, counts, passages, and the three kinds of retrieval. */
function chunkQueries(client: SearchClient, alias: string, serving: ServingIndexResolver, tuning: HybridTuning) {
  /** The concrete index a request goes to: the one it was embedded for, else the one served now. */
  const searched = async (request: IndexedRetrievalRequest) => request.index ?? (await serving.current()).index;
  return {
    listChunkGroups: (knowledgeBaseIds?: string[]) => listChunkGroups(client, alias, knowledgeBaseIds),
    /** A document version's first `limit` passages in reading order, and how many it has. */
    documentPassages: (documentId: string, version: number, limit: number) =>
      listDocumentPassages(client, alias, documentId, version, limit),
    countChunks: (filter?: { document_id?: string; knowledge_base_id?: string; document_version?: number }) =>
      countChunks(client, alias, filter),
    // Each query runs on one concrete index (request.index, else the one served now): never on two during a swap.
    // An override (kbqa eval --sweep) changes knobs for this request alone; a different fusion goes inline (retrieval.ts).
    hybridSearch: async (
      request: IndexedRetrievalRequest,
      override?: Partial<HybridTuning>,
      options?: { inlinePipeline?: boolean },
    ) => hybridSearch(client, await searched(request), request, tuning, override, options),
    lexicalSearch: async (request: IndexedRetrievalRequest) =>
      lexicalSearch(client, await searched(request), request, tuning.bm25Fields),
    /** What the BM25 side sends for a question (bounded to MAX_LEXICAL_TERMS terms). */
    lexicalQueryText: async (question: string) =>
      lexicalQueryText(client, (await serving.current()).index, question, tuning.bm25Fields),
    vectorSearch: async (request: IndexedRetrievalRequest) =>
      vectorSearch(client, await searched(request), request, tuning.sentenceWeight),
  };
}

/** /readyz's detail. Drift is a dozen small reads, so computed at most every DRIFT_TTL_MS whoever asks. */
function cachedIndexDetail(
  alias: string,
  serving: ServingIndexResolver,
  indices: IndexAdmin,
  embedder: { readonly modelName: string; readonly dimensions: number },
): () => Promise<SearchIndexDetail> {
  let driftKnown: { at: number; detail: SearchIndexDetail } | null = null;
  let driftInFlight: Promise<SearchIndexDetail> | null = null;
  return async (): Promise<SearchIndexDetail> => {
    if (driftKnown && performance.now() - driftKnown.at < DRIFT_TTL_MS) return driftKnown.detail;
    driftInFlight ??= (async () => {
      const { index } = await serving.current();
      const live = index === alias ? null : index;
      const drift = await indices.drift(live, embedder);
      const assets = indices.assets();
      const command = resolvingCommand(drift, live, indices.indexNameFor(assets.version, embedder.modelName), assets);
      const detail = { alias, index: live, drift, command };
      driftKnown = { at: performance.now(), detail };
      return detail;
    })().finally(() => {
      driftInFlight = null;
    });
    return driftInFlight;
  };
}

export type { ChunkDocument, ChunkGroup } from './chunks.ts';
export type { DocumentPassage, DocumentPassages } from './passages.ts';
export type { RetrievalRequest, RetrievedChunk } from './retrieval.ts';
export type { HybridTuning } from '../hybridTuning.ts';
export type { ServingIndex } from './servingIndex.ts';
export type { Drift } from './drift.ts';
export { MIGRATE_COMMAND } from './drift.ts';
export { INDEX_DRIFT_KINDS, resolvingCommand } from './indexAdmin.ts';
export type { ChunkIndexMeta } from './chunkIndices.ts';
export {
  CHUNKS_INGEST_PIPELINE,
  CHUNKS_TEMPLATE,
  HYBRID_EXPLAIN_SEARCH_PIPELINE,
  HYBRID_SEARCH_PIPELINE,
} from './assets.ts';
