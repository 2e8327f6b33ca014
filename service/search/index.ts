// The search module: everything the service asks OpenSearch, bound to one client. Only this folder talks to it.
import type { Config } from '../config.ts';
import { applySearchAssets, chunkIndexName, type SearchAssetSettings } from './assets.ts';
import { countChunks, deleteChunksOfDocument, deleteChunksOfDocumentVersion, listChunkGroups, deleteChunksOfKnowledgeBase, refreshChunks, type ChunkDocument } from './chunks.ts';
import { startBulkCoalescer } from './bulkCoalescer.ts';
import { startRefresher } from './refresher.ts';
import { createSearchClient } from './client.ts';
import { listPluginsAndModules, searchEngineProblem } from './readiness.ts';
import { hybridSearch, lexicalQueryText, lexicalSearch, vectorSearch, type RetrievalRequest } from './retrieval.ts';

export interface SearchIndexOptions extends SearchAssetSettings {
  url: string;
  timeoutMs: number;
  /** Least time between two group-commit refreshes (refresher.ts). */
  refreshIntervalMs?: number;
}

export type SearchIndex = ReturnType<typeof openSearchIndex>;

/** The search module as configured: the chunk index of this embedder, the configured RRF fusion. */
export function openConfiguredSearchIndex(config: Config, embedder: { modelName: string; dimensions: number }): SearchIndex {
  return openSearchIndex({
    url: config.opensearch.url,
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
  const client = createSearchClient(options.url, options.timeoutMs);
  const refresher = startRefresher(client, options.refreshIntervalMs ?? 0);
  const bulks = startBulkCoalescer(client);
  return {
    indexName: chunkIndexName(options.embedderName),
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
    refreshChunks: () => refreshChunks(client),
    deleteChunksOfDocument: (documentId: string) => deleteChunksOfDocument(client, documentId),
    deleteChunksOfDocumentVersion: (documentId: string, version: number) => deleteChunksOfDocumentVersion(client, documentId, version),
    deleteChunksOfKnowledgeBase: (knowledgeBaseId: string) => deleteChunksOfKnowledgeBase(client, knowledgeBaseId),
    listChunkGroups: (knowledgeBaseIds?: string[]) => listChunkGroups(client, knowledgeBaseIds),
    countChunks: (filter?: { document_id?: string; knowledge_base_id?: string; document_version?: number }) => countChunks(client, filter),
    hybridSearch: (request: RetrievalRequest) => hybridSearch(client, request, options.rrfRankConstant),
    lexicalSearch: (request: RetrievalRequest) => lexicalSearch(client, request),
    /** What the BM25 side sends for a question (bounded to MAX_LEXICAL_TERMS terms). */
    lexicalQueryText: (question: string) => lexicalQueryText(client, question),
    vectorSearch: (request: RetrievalRequest) => vectorSearch(client, request),
    problem: () => searchEngineProblem(client),
    listPluginsAndModules: () => listPluginsAndModules(client),
    /** Raw access for tests and the admin CLI, never for request handling. */
    request: client.request,
    close: () => client.close(),
  };
}

export type { ChunkDocument, ChunkGroup } from './chunks.ts';
export type { RetrievalRequest, RetrievedChunk } from './retrieval.ts';
