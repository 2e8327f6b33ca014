// Ingesting a document (all or nothing) and listing a KB's documents.
import { randomUUID } from 'node:crypto';
import { BadRequestError, NotFoundError, errorSummary } from '../errors.ts';
import { authorizeRead, authorizeWriteDocuments } from '../policies/knowledgeBases.ts';
import type { Rag } from '../rag/index.ts';
import type { TextSegment } from '../rag/splitter.ts';
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
 * Split → embed → index all chunks (searchable on return) → record the document → re-check the KB. If any step
 * fails, whatever was written is removed again, so a failed ingest leaves no document and no chunk behind; the
 * error names the component that failed (503 when it is unavailable, never a blanket "retry later" for a failure
 * that would repeat).
 *
 * The re-check closes the race with a delete: a KB deleted (soft or permanent) while this ingest was working is
 * already invisible when the ingest looks again, so the ingest removes what it wrote and answers 404. A delete
 * that lands after the re-check finds the document and chunks already written and removes them itself.
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
  const chunks = chunkDocuments(record, segments, vectors, deps.rag.embedder.modelName);

  let stillLive: boolean;
  try {
    await deps.search.indexChunks(chunks);
    await deps.store.insertDocument(record, input.content);
    stillLive = (await deps.store.findLiveKnowledgeBase(knowledgeBase._id)) !== null;
  } catch (error) {
    await removeIngest(deps, record._id);
    throw error;
  }
  if (!stillLive) {
    await removeIngest(deps, record._id);
    throw NotFoundError.knowledgeBase(knowledgeBase._id);
  }
  return record;
}

/** A document's chunks as indexed. Chunk ids derive from the document id, so indexing them again overwrites. */
function chunkDocuments(record: DocumentRecord, segments: TextSegment[], vectors: number[][], embedder: string): ChunkDocument[] {
  return segments.map((segment, index) => ({
    chunk_id: `${record._id}:${index}`,
    knowledge_base_id: record.knowledge_base_id,
    document_id: record._id,
    filename: record.filename,
    title: record.title,
    heading_path: segment.heading_path,
    chunk_index: index,
    text: segment.text,
    embedding: vectors[index],
    embedder,
    created_at: record.created_at.toISOString(),
  }));
}

/**
 * Rebuilds a recorded document's chunks from its stored original content (re-split, re-embed, replace). Returns
 * false when no content is stored. For `kbqa doctor --fix`, and the place a re-index starts from.
 */
export async function rebuildDocumentChunks(deps: { store: Store; search: SearchIndex; rag: Rag }, record: DocumentRecord): Promise<boolean> {
  const content = await deps.store.findDocumentContent(record._id);
  if (content === null) return false;
  const { total, segments } = await deps.rag.split(content, record.filename);
  const vectors = await deps.rag.embedSegments(record.title, segments);
  await deps.search.deleteChunksOfDocument(record._id);
  await deps.search.indexChunks(chunkDocuments(record, segments, vectors, deps.rag.embedder.modelName));
  // The splitter may have changed since the document was ingested: the record says what is indexed now.
  if (segments.length !== record.chunks || total !== record.total_chunks) {
    await deps.store.setDocumentChunkCounts(record._id, segments.length, total);
  }
  return true;
}

/** Removes one document's chunks, record and content, whichever exist. Chunk ids derive from the document id. */
async function removeIngest(deps: { store: Store; search: SearchIndex; logger: Logger }, documentId: string): Promise<void> {
  const results = await Promise.allSettled([deps.search.deleteChunksOfDocument(documentId), deps.store.deleteDocument(documentId)]);
  for (const result of results) {
    if (result.status === 'rejected') {
      // A store is down as well: `kbqa doctor --fix` finds and removes what is left (chunks by document_id).
      deps.logger.error({ err: errorSummary(result.reason), documentId }, 'could not remove an ingest that did not complete; run kbqa doctor --fix');
    }
  }
}

export async function listDocuments(store: Store, user: Principal, knowledgeBaseId: string, page: { limit?: number; cursor?: string }) {
  authorizeRead(user, await store.findLiveKnowledgeBase(knowledgeBaseId), knowledgeBaseId);
  return store.listDocuments(knowledgeBaseId, page);
}
