// The search module: everything the service asks OpenSearch, bound to one client. Only this folder talks to it.
import type { Config } from '../config.ts';
import { applySearchAssets, CHUNKS_ALIAS, chunkIndexName, type SearchAssetSettings } from './assets.ts';
import { countChunks, deleteChunksOfDocument, deleteChunksOfDocumentVersion, listChunkGroups, deleteChunksOfKnowledgeBase, refreshChunks, type ChunkDocument } from './chunks.ts';
import { startBulkCoalescer } from './bulkCoalescer.ts';
import { startRefresher } from './refresher.ts';
import { createSearchClient, type SearchClientOptions } from './client.ts';
import { listPluginsAndModules, searchEngineProblem } from './readiness.ts';
import { hybridSearch, lexicalQueryText, lexicalSearch, vectorSearch, type RetrievalRequest } from './retrieval.ts';
import { startWriteBlockCheck } from './writeBlock.ts';
import { snapshotRequests } from './snapshots.ts';

export interface SearchIndexOptions extends SearchAssetSettings, Pick<SearchClientOptions, 'auth' | 'caFile' | 'resurrectAfterMs'> {
  /** The first node; `urls`, when given, lists every node (it includes this one). */
  url: string;
  urls?: string[];
  timeoutMs: number;
  /** Least time between two group-commit refreshes (refresher.ts). */
  refreshIntervalMs?: number;
}

export type SearchIndex = ReturnType<typeof openSearchIndex>;

/** The search module as configured: every node, the chunk index of this embedder, the configured RRF fusion. */
export function openConfiguredSearchIndex(config: Config, embedder: { modelName: string; dimensions: number }): SearchIndex {
  return openSearchIndex({
    url: config.opensearch.url,
    urls: config.opensearch.urls,
    auth: config.opensearch.auth,
    caFile: config.opensearch.caFile,
    alias: config.opensearch.chunksAlias,
    timeoutMs: config.opensearch.timeoutMs,
    embedderName: embedder.modelName,
    dimensions: embedder.dimensions,
    shards: config.opensearch.shards,
    replicas: config.opensearch.replicas,
    rrfRankConstant: config.opensearch.rrfRankConstant,
    rrfWeights: config.opensearch.rrfWeights,
    refreshIntervalMs: config.ingestion.refreshIntervalMs,
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
  const refresher = startRefresher(client, alias, options.refreshIntervalMs ?? 0);
  const bulks = startBulkCoalescer(client, alias);
  const writeBlock = startWriteBlockCheck(client, alias);
  return {
    alias,
    indexName: chunkIndexName(options.embedderName, alias),
    rankConstant: options.rrfRankConstant,
    applyAssets: () => applySearchAssets(client, options),
    /**
     * Indexes without a refresh (call `chunksSearchable()` once the last batch of an ingestion is in), sharing bulk
     * requests with concurrent ingestions (bulkCoalescer.ts).
     */
    indexChunks: (chunks: ChunkDocument[]) => bulks.index(chunks),
    bulkRequestCount: () => bulks.requests(),
    /** Group commit: resolves after a refresh that began after the call (shared with concurrent ingestions). */
    chunksSearchable: () => refresher.refreshed(),
    refreshCount: () => refresher.count(),
    /**
     * The write block on the chunk index (a full disk's read_only_allow_delete, say) or null; cached for a second.
     * assertWritable() throws SearchIndexReadOnlyError (503) while one is set: ingestion asks before it starts.
     */
    writeBlock: () => writeBlock.current(),
    assertWritable: () => writeBlock.assertWritable(),
    refreshChunks: () => refreshChunks(client, alias),
    // Deletes ask about the block first: under it OpenSearch 3 refuses them, but only after retrying for a minute.
    deleteChunksOfDocument: (documentId: string) => writeBlock.assertWritable().then(() => deleteChunksOfDocument(client, alias, documentId)),
    deleteChunksOfDocumentVersion: (documentId: string, version: number) =>
      writeBlock.assertWritable().then(() => deleteChunksOfDocumentVersion(client, alias, documentId, version)),
    deleteChunksOfKnowledgeBase: (knowledgeBaseId: string) => writeBlock.assertWritable().then(() => deleteChunksOfKnowledgeBase(client, alias, knowledgeBaseId)),
    listChunkGroups: (knowledgeBaseIds?: string[]) => listChunkGroups(client, alias, knowledgeBaseIds),
    countChunks: (filter?: { document_id?: string; knowledge_base_id?: string; document_version?: number }) => countChunks(client, alias, filter),
    hybridSearch: (request: RetrievalRequest) => hybridSearch(client, alias, request, options.rrfRankConstant),
    lexicalSearch: (request: RetrievalRequest) => lexicalSearch(client, alias, request),
    /** What the BM25 side sends for a question (bounded to MAX_LEXICAL_TERMS terms). */
    lexicalQueryText: (question: string) => lexicalQueryText(client, alias, question),
    vectorSearch: (request: RetrievalRequest) => vectorSearch(client, alias, request),
    problem: () => searchEngineProblem(client),
    listPluginsAndModules: () => listPluginsAndModules(client),
    /** Snapshot repositories, snapshots and restores of the chunk indices: for `kbqa backup` only. */
    snapshots: snapshotRequests(client, alias),
    /** Raw access for tests and the admin CLI, never for request handling. */
    request: client.request,
    close: () => client.close(),
  };
}

export type { ChunkDocument, ChunkGroup } from './chunks.ts';
export type { RetrievalRequest, RetrievedChunk } from './retrieval.ts';
export { CHUNKS_INGEST_PIPELINE, CHUNKS_TEMPLATE, HYBRID_EXPLAIN_SEARCH_PIPELINE, HYBRID_SEARCH_PIPELINE } from './assets.ts';
