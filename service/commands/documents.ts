// Ingesting a document (all or nothing) and listing a KB's documents.
import { randomUUID } from 'node:crypto';
import { BadRequestError, UpstreamUnavailableError } from '../errors.ts';
import { authorizeRead, authorizeWriteDocuments } from '../policies/knowledgeBases.ts';
import type { Rag } from '../rag/index.ts';
import type { ChunkDocument, SearchIndex } from '../search/index.ts';
import type { DocumentRecord, Store, Principal } from '../store/index.ts';
import type { Logger } from 'pino';

/** The filename without its extension ("notes.v2.md" → "notes.v2"); a dot-file keeps its name. */
export function titleFromFilename(filename: string): string {
  const dot = filename.lastIndexOf('.');
  return dot > 0 ? filename.slice(0, dot) : filename;
}

export interface IngestInput {
  kb_id: string;
  filename: string;
  content: string;
}

/**
 * Split → embed → index all chunks in one bulk request (searchable on return) → record the document. If any step
 * fails, whatever was written is removed again, so a failed ingest leaves no document and no chunk behind.
 */
export async function ingestDocument(
  deps: { store: Store; search: SearchIndex; rag: Rag; logger: Logger },
  user: Principal,
  input: IngestInput,
): Promise<DocumentRecord> {
  const knowledgeBase = authorizeWriteDocuments(user, await deps.store.findLiveKnowledgeBase(input.kb_id), input.kb_id);
  const title = titleFromFilename(input.filename);
  const { total, segments } = await deps.rag.split(input.content, input.filename);
  if (segments.length === 0) {
    throw new BadRequestError('content: has no text to index (no letters or digits)');
  }
  const vectors = await deps.rag.embedSegments(title, segments);

  const record: DocumentRecord = {
    _id: randomUUID(),
    knowledge_base_id: knowledgeBase._id,
    filename: input.filename,
    title,
    source: 'api',
    chunks: segments.length,
    total_chunks: total,
    created_at: new Date(),
  };
  const chunks: ChunkDocument[] = segments.map((segment, index) => ({
    chunk_id: `${record._id}:${index}`,
    knowledge_base_id: record.knowledge_base_id,
    document_id: record._id,
    filename: record.filename,
    title,
    heading_path: segment.heading_path,
    chunk_index: index,
    text: segment.text,
    embedding: vectors[index],
    embedder: deps.rag.embedder.modelName,
    created_at: record.created_at.toISOString(),
  }));

  try {
    await deps.search.indexChunks(chunks);
    await deps.store.insertDocument(record, input.content);
  } catch (error) {
    await removePartialIngest(deps, record._id);
    if (error instanceof UpstreamUnavailableError) throw error;
    throw new UpstreamUnavailableError('opensearch', 'the document could not be indexed; nothing was stored; retry later', {
      cause: error,
    });
  }
  return record;
}

async function removePartialIngest(deps: { store: Store; search: SearchIndex; logger: Logger }, documentId: string): Promise<void> {
  const results = await Promise.allSettled([deps.search.deleteChunksOfDocument(documentId), deps.store.deleteDocument(documentId)]);
  for (const result of results) {
    if (result.status === 'rejected') {
      // Both stores down at once: the chunk ids are derived from the document id, so this line is enough to clean up.
      deps.logger.error({ err: result.reason, documentId }, 'could not remove a failed ingest; remove its chunks by document_id');
    }
  }
}

export async function listDocuments(store: Store, user: Principal, knowledgeBaseId: string, page: { limit?: number; cursor?: string }) {
  authorizeRead(user, await store.findLiveKnowledgeBase(knowledgeBaseId), knowledgeBaseId);
  return store.listDocuments(knowledgeBaseId, page);
}
