// The search module: everything the service asks OpenSearch, bound to one client. Only this folder talks to it.
import type { Config } from '../config.ts';
import { applySearchAssets, chunkIndexName, type SearchAssetSettings } from './assets.ts';
import { countChunks, deleteChunksOfDocument, listChunkGroups, deleteChunksOfKnowledgeBase, indexChunks, indexChunksWithoutRefresh, refreshChunks, type ChunkDocument } from './chunks.ts';
import { createSearchClient } from './client.ts';
import { listPluginsAndModules, searchEngineProblem } from './readiness.ts';
import { hybridSearch, lexicalQueryText, lexicalSearch, vectorSearch, type RetrievalRequest } from './retrieval.ts';

export interface SearchIndexOptions extends SearchAssetSettings {
  url: string;
  timeoutMs: number;
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
  });
}

export function openSearchIndex(options: SearchIndexOptions) {
  const client = createSearchClient(options.url, options.timeoutMs);
  return {
    indexName: chunkIndexName(options.embedderName),
    rankConstant: options.rrfRankConstant,
    applyAssets: () => applySearchAssets(client, options),
    indexChunks: (chunks: ChunkDocument[]) => indexChunks(client, chunks),
    indexChunksWithoutRefresh: (chunks: ChunkDocument[]) => indexChunksWithoutRefresh(client, chunks),
    refreshChunks: () => refreshChunks(client),
    deleteChunksOfDocument: (documentId: string) => deleteChunksOfDocument(client, documentId),
    deleteChunksOfKnowledgeBase: (knowledgeBaseId: string) => deleteChunksOfKnowledgeBase(client, knowledgeBaseId),
    listChunkGroups: (knowledgeBaseIds?: string[]) => listChunkGroups(client, knowledgeBaseIds),
    countChunks: (filter?: { document_id?: string; knowledge_base_id?: string }) => countChunks(client, filter),
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
