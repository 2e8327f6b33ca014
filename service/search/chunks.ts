// Writing and removing chunks. Reads are in retrieval.ts.
import type { SearchClient } from './client.ts';
import { CHUNKS_ALIAS } from './assets.ts';

export interface ChunkDocument {
  chunk_id: string;
  knowledge_base_id: string;
  document_id: string;
  filename: string;
  title: string;
  heading_path: string[];
  chunk_index: number;
  text: string;
  embedding: number[];
  embedder: string;
  created_at: string;
}

/** The vector as little-endian float32, base64 (see retrieval.ts: reading it back is cheap, deriving the knn_vector is not). */
export function encodeEmbedding(embedding: number[]): string {
  return Buffer.from(Float32Array.from(embedding).buffer).toString('base64');
}

function bulkLines(chunks: ChunkDocument[]): unknown[] {
  const lines: unknown[] = [];
  for (const chunk of chunks) {
    lines.push({ index: { _index: CHUNKS_ALIAS, _id: chunk.chunk_id } });
    lines.push({ ...chunk, embedding_b64: encodeEmbedding(chunk.embedding) });
  }
  return lines;
}

interface BulkResponse {
  errors: boolean;
  items: Array<Record<string, { status: number; error?: { type: string; reason: string } }>>;
}

export class ChunkIndexingError extends Error {}

/**
 * Indexes a document's chunks in ONE bulk request through the chunk ingest pipeline, returning once they are
 * searchable. refresh=true rather than wait_for: wait_for parks every request until the next scheduled refresh
 * (up to refresh_interval), which caps ingest at concurrency ÷ 1 s; an explicit refresh of a small bulk costs a
 * few ms. Throws if any chunk was rejected; the caller then removes the document's chunks.
 */
export async function indexChunks(client: SearchClient, chunks: ChunkDocument[]): Promise<void> {
  if (chunks.length === 0) return;
  const lines = bulkLines(chunks);
  const response = await client.request<BulkResponse>('POST', '/_bulk', { bulkBody: lines, querystring: { refresh: 'true' } });
  if (response.errors) {
    const failure = response.items.map((item) => Object.values(item)[0]).find((result) => result.error);
    throw new ChunkIndexingError(`chunk indexing failed: ${failure?.error?.type ?? 'unknown'}: ${failure?.error?.reason ?? ''}`);
  }
}

/** Bulk-loads chunks without waiting for a refresh (benchmarks' scale fill); refresh once at the end. */
export async function indexChunksWithoutRefresh(client: SearchClient, chunks: ChunkDocument[]): Promise<void> {
  const response = await client.request<BulkResponse>('POST', '/_bulk', { bulkBody: bulkLines(chunks) });
  if (response.errors) throw new ChunkIndexingError('chunk bulk load failed');
}

export async function refreshChunks(client: SearchClient): Promise<void> {
  await client.request('POST', `/${CHUNKS_ALIAS}/_refresh`);
}

async function deleteChunksWhere(client: SearchClient, field: string, value: string): Promise<number> {
  const response = await client.request<{ deleted: number }>('POST', `/${CHUNKS_ALIAS}/_delete_by_query`, {
    querystring: { refresh: true, conflicts: 'proceed' },
    body: { query: { term: { [field]: value } } },
  });
  return response.deleted;
}

export const deleteChunksOfDocument = (client: SearchClient, documentId: string) =>
  deleteChunksWhere(client, 'document_id', documentId);

export const deleteChunksOfKnowledgeBase = (client: SearchClient, knowledgeBaseId: string) =>
  deleteChunksWhere(client, 'knowledge_base_id', knowledgeBaseId);

export async function countChunks(client: SearchClient, filter: { document_id?: string; knowledge_base_id?: string } = {}): Promise<number> {
  const terms = Object.entries(filter).map(([field, value]) => ({ term: { [field]: value } }));
  const response = await client.request<{ count: number }>('POST', `/${CHUNKS_ALIAS}/_count`, {
    body: { query: terms.length > 0 ? { bool: { filter: terms } } : { match_all: {} } },
  });
  return response.count;
}
