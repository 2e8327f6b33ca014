// A version's chunks as the index holds them (chunkDocuments): what a job's build writes, and an index migration's
// rebuild too.
import type { SegmentEmbedding } from '../rag/index.ts';
import type { TextSegment } from '../rag/splitter.ts';
import type { ChunkDocument } from '../search/index.ts';
import type { DocumentRecord } from '../store/index.ts';
import type { ChunkMetadata } from '../search/metadataFilter.ts';

/** A document's chunks as indexed. Chunk ids derive from the document id and version: indexing again overwrites. */
export function chunkDocuments(
  /** `chunkMetadata`: the version's metadata as every chunk carries it (computed once per job: one shared object). */
  record: Pick<DocumentRecord, '_id' | 'knowledge_base_id' | 'filename' | 'title' | 'created_at'> & {
    chunkMetadata?: ChunkMetadata;
  },
  version: number,
  segments: TextSegment[],
  embeddings: SegmentEmbedding[],
  embedder: string,
  firstIndex = 0,
): ChunkDocument[] {
  return segments.map((segment, offset) => {
    const index = firstIndex + offset;
    return {
      chunk_id: `${record._id}:${version}:${index}`,
      knowledge_base_id: record.knowledge_base_id,
      document_id: record._id,
      document_version: version,
      filename: record.filename,
      title: record.title,
      heading_path: segment.heading_path,
      chunk_index: index,
      page_start: segment.page_start ?? null,
      page_end: segment.page_end ?? null,
      text: segment.text,
      embedding: embeddings[offset].vector,
      ...(embeddings[offset].sentences.length > 0 ? { sentence_embeddings: embeddings[offset].sentences } : {}),
      embedder,
      created_at: record.created_at.toISOString(),
      ...record.chunkMetadata,
    };
  });
}
