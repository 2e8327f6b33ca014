// Writing and removing chunks. Reads are in retrieval.ts.
import { isWriteBlock, safeReason, type SearchClient } from './client.ts';
import { BadRequestError, ChunkIndexingError, SearchIndexReadOnlyError, UpstreamUnavailableError } from '../errors.ts';
import type { ChunkMetadata } from './metadataFilter.ts';
import { metadataForIndex } from './metadataLayouts.ts';
import { encodeSentenceVectors, sentenceVectorFormOf } from './sentenceVectors.ts';

/** A chunk as indexed; `metadata` / `metadata_keys` are its document's metadata (metadataFilter.ts chunkMetadata). */
export interface ChunkDocument extends ChunkMetadata {
  chunk_id: string;
  knowledge_base_id: string;
  document_id: string;
  /** The document version these chunks belong to: a replacement is built beside the live one, then swapped. */
  document_version: number;
  filename: string;
  title: string;
  heading_path: string[];
  chunk_index: number;
  /** The PDF pages the chunk's text came from (1-based, inclusive); null for text and markdown documents. */
  page_start: number | null;
  page_end: number | null;
  text: string;
  embedding: number[];
  /**
   * One vector per sentence of a chunk of several (rag segmentSentences), indexed as one binary doc value (the
   * vectors one after another, in the target index's form: sentenceVectors.ts) that the dense side's sentence-level
   * score and the answerer read. Absent or empty for a chunk of one sentence, or one indexed without them.
   */
  sentence_embeddings?: number[][];
  embedder: string;
  created_at: string;
}

/** The vector as little-endian float32, base64 (see retrieval.ts: reading it back is cheap, deriving the knn_vector is not). */
export function encodeEmbedding(embedding: number[]): string {
  // Little-endian whatever this machine's byte order, as retrieval.ts decodeEmbedding reads it back.
  const bytes = Buffer.allocUnsafe(embedding.length * 4);
  for (let index = 0; index < embedding.length; index += 1) bytes.writeFloatLE(embedding[index], index * 4);
  return bytes.toString('base64');
}

/**
 * One keyword naming a chunk's document version (`<document id>:<version>`): a query hides any number of versions in
 * flight with ONE `terms` clause on it (one clause per version would reach OpenSearch's clause limit when thousands
 * of documents are queued or re-indexed).
 */
export function documentVersionId(documentId: string, version: number): string {
  return `${documentId}:${version}`;
}

export function bulkLines(alias: string, chunks: ChunkDocument[]): unknown[] {
  const lines: unknown[] = [];
  for (const chunk of chunks) {
    lines.push({ index: { _index: alias, _id: chunk.chunk_id } });
    const { sentence_embeddings: sentences, ...fields } = chunk;
    lines.push({
      ...fields,
      // As the target stores it: an index of template v1 (not yet migrated) has a field per key.
      ...(fields.metadata ? { metadata: metadataForIndex(alias, fields.metadata) } : {}),
      document_version_id: documentVersionId(chunk.document_id, chunk.document_version),
      embedding_b64: encodeEmbedding(chunk.embedding),
      // In the target's form: a v2 index (not yet migrated) takes float32, a v3 one int8.
      ...(sentences?.length
        ? { sentence_embeddings: encodeSentenceVectors(sentences, sentenceVectorFormOf(alias)) }
        : {}),
    });
  }
  return lines;
}

/**
 * Bulk requests are bounded in bytes, not only in chunks: OpenSearch refuses bodies over http.max_content_length
 * (100 MB by default), and a 5 MiB document of tiny sentences makes ~23,000 chunks (~250 MB of bulk with vectors).
 * 8 MiB per request keeps each one well inside the limit and the heap.
 */
export const MAX_BULK_BYTES = 8 * 1024 * 1024;

/**
 * An upper bound of one chunk's NDJSON bytes (action and source lines), computed without serialising it: JSON
 * escaping turns one UTF-16 unit into at most 6 bytes (\\uXXXX), a float into at most 25 characters, and the base64
 * copy of the vector is 4/3 of its float32 bytes. Serialising every chunk just to measure it would block the event
 * loop for seconds on a big document.
 */
export function chunkBytesUpperBound(chunk: ChunkDocument): number {
  return textBytesUpperBound(chunk) + metadataBytesUpperBound(chunk.metadata, chunk.metadata_keys);
}

/**
 * The metadata's part: JSON of the entries and the key list, 6 bytes a UTF-16 unit at most (a v1 index's layout is
 * no longer: each key once, a dot as %2E, instead of `{"key":…}`). Every chunk of a document shares one metadata
 * object, so it is measured once (at most 8 KiB of JSON, measured per document).
 */
const metadataBytes = new WeakMap<object, number>();
function metadataBytesUpperBound(metadata: ChunkDocument['metadata'], keys: string[] | undefined): number {
  if (!metadata) return 0;
  let bytes = metadataBytes.get(metadata);
  if (bytes === undefined) {
    bytes = 6 * (JSON.stringify(metadata).length + JSON.stringify(keys ?? []).length);
    metadataBytes.set(metadata, bytes);
  }
  return bytes;
}

function textBytesUpperBound(chunk: ChunkDocument): number {
  const strings =
    chunk.text.length +
    chunk.title.length +
    chunk.filename.length +
    chunk.heading_path.reduce((sum, heading) => sum + heading.length + 3, 0);
  const ids =
    chunk.chunk_id.length * 2 +
    chunk.document_id.length * 2 +
    chunk.knowledge_base_id.length +
    chunk.embedder.length +
    32;
  // Sentence vectors are base64 of at most 4 bytes per component (float32; int8 is 1).
  const components = (chunk.sentence_embeddings ?? []).reduce((sum, vector) => sum + vector.length, 0);
  const sentences = Math.ceil((components * 16) / 3) + 8;
  return 6 * strings + 6 * ids + chunk.embedding.length * (25 + 6) + sentences + 512;
}

/** Groups chunks into bulk batches of at most maxBytes of NDJSON each (by the upper bound above). */
export function bulkBatches(chunks: ChunkDocument[], maxBytes = MAX_BULK_BYTES): ChunkDocument[][] {
  const batches: ChunkDocument[][] = [];
  let batch: ChunkDocument[] = [];
  let bytes = 0;
  for (const chunk of chunks) {
    const size = chunkBytesUpperBound(chunk);
    if (batch.length > 0 && bytes + size > maxBytes) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(chunk);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

interface BulkItemError {
  type: string;
  reason: string;
}

export interface BulkResponse {
  errors: boolean;
  items: Array<Record<string, { status: number; error?: BulkItemError }>>;
}

/**
 * Names why a bulk failed. Overload (429), a node's trouble (5xx) and a write block (a full disk makes OpenSearch
 * mark indices read-only) pass: they are 503s naming OpenSearch, the block its own kind (queued ingestions wait for
 * it to be lifted). Anything else is deterministic and not retried.
 */
export function bulkFailure(response: BulkResponse): Error {
  const failed = response.items.map((item) => Object.values(item)[0]).find((result) => result.error);
  const error = failed?.error ?? { type: 'unknown', reason: '' };
  if (isWriteBlock(error.type, failed?.status, error.reason))
    return new SearchIndexReadOnlyError(safeReason(error.reason) ?? error.type);
  if (/limit of total fields/i.test(error.reason)) {
    // Each distinct metadata key (per type) is a field of the shared chunk index, which has a ceiling.
    return new BadRequestError(
      'metadata: the search index holds as many distinct metadata keys as it can (index.mapping.total_fields.limit); reuse existing keys, or ask an operator to raise the limit',
    );
  }
  if (failed && (failed.status === 429 || failed.status >= 500)) {
    return new UpstreamUnavailableError(
      'opensearch',
      'the search engine is overloaded or failing; nothing was stored; retry later',
    );
  }
  return new ChunkIndexingError(`chunk indexing failed: ${error.type}: ${safeReason(error.reason) ?? ''}`);
}

/**
 * Indexes chunks through the chunk ingest pipeline in byte-bounded bulk requests, without forcing a refresh: an
 * ingestion makes its chunks searchable once, at its end, through the shared refresher (refresher.ts). A forced
 * refresh per bulk would write a tiny segment, each with its own HNSW graph, that merges then rebuild.
 */
export async function indexChunks(client: SearchClient, alias: string, chunks: ChunkDocument[]): Promise<void> {
  for (const batch of bulkBatches(chunks)) {
    // Idempotent: every chunk has its own id, so a bulk sent twice writes the same documents twice.
    const response = await client.request<BulkResponse>('POST', '/_bulk', {
      bulkBody: bulkLines(alias, batch),
      idempotent: true,
    });
    if (response.errors) throw bulkFailure(response);
  }
}

export async function refreshChunks(client: SearchClient, alias: string): Promise<void> {
  await client.request('POST', `/${alias}/_refresh`, { idempotent: true });
}

/**
 * Deletes by query after a refresh: chunks acknowledged by a bulk request that did not refresh (an earlier batch
 * of an ingest that then failed) are not yet visible to search, and _delete_by_query only deletes what it finds.
 */
async function deleteChunksWhere(client: SearchClient, targets: string, query: object): Promise<number> {
  // `targets`: the alias, or every index of its family (a comma-separated list; one dropped meanwhile is skipped).
  await client.request('POST', `/${targets}/_refresh`, {
    querystring: { ignore_unavailable: true, allow_no_indices: true },
    idempotent: true,
  });
  // Idempotent: sent twice, the second finds less to delete and the end state is the same (only its count differs).
  const response = await client.request<{ deleted: number }>('POST', `/${targets}/_delete_by_query`, {
    querystring: { refresh: true, conflicts: 'proceed', ignore_unavailable: true, allow_no_indices: true },
    body: { query },
    idempotent: true,
  });
  return response.deleted;
}

/**
 * The chunks of one version of a document. Version 0 stands for chunks indexed before documents had versions
 * (they carry no document_version).
 */
export function chunkVersionQuery(documentId: string, version: number): object {
  return version === 0
    ? {
        bool: {
          filter: [{ term: { document_id: documentId } }],
          must_not: [{ exists: { field: 'document_version' } }],
        },
      }
    : { bool: { filter: [{ term: { document_id: documentId } }, { term: { document_version: version } }] } };
}

export const deleteChunksOfDocument = (client: SearchClient, alias: string, documentId: string) =>
  deleteChunksWhere(client, alias, { term: { document_id: documentId } });

export const deleteChunksOfDocumentVersion = (
  client: SearchClient,
  alias: string,
  documentId: string,
  version: number,
) => deleteChunksWhere(client, alias, chunkVersionQuery(documentId, version));

export const deleteChunksOfKnowledgeBase = (client: SearchClient, alias: string, knowledgeBaseId: string) =>
  deleteChunksWhere(client, alias, { term: { knowledge_base_id: knowledgeBaseId } });

export async function countChunks(
  client: SearchClient,
  alias: string,
  filter: { document_id?: string; knowledge_base_id?: string; document_version?: number } = {},
): Promise<number> {
  const terms = Object.entries(filter).map(([field, value]) => ({ term: { [field]: value } }));
  const response = await client.request<{ count: number }>('POST', `/${alias}/_count`, {
    body: { query: terms.length > 0 ? { bool: { filter: terms } } : { match_all: {} } },
  });
  return response.count;
}

export interface ChunkGroup {
  document_id: string;
  knowledge_base_id: string;
  /** 0 for chunks indexed before documents had versions. */
  document_version: number;
  chunks: number;
  /** When the newest chunk of the group was indexed (ms since epoch): an ingest may still be in flight. */
  last_indexed_ms: number;
  /** Whether chunk 0 is among them (a migration writes it last: with it, the version is complete). */
  has_first_chunk: boolean;
}

/**
 * Chunk counts per (document, KB, version) over the whole index, or some KBs, paged with a composite aggregation: what
 * `kbqa doctor` compares with the document records. An admin scan, never on a request path.
 */
export async function listChunkGroups(
  client: SearchClient,
  alias: string,
  knowledgeBaseIds?: string[],
): Promise<ChunkGroup[]> {
  const groups: ChunkGroup[] = [];
  let after: Record<string, unknown> | undefined;
  for (;;) {
    const response = await client.request<{
      aggregations: {
        groups: {
          after_key?: Record<string, unknown>;
          buckets: Array<{
            key: { document_id: string; knowledge_base_id: string; document_version: number | null };
            doc_count: number;
            last_indexed: { value: number | null };
            first_chunk: { doc_count: number };
          }>;
        };
      };
    }>('POST', `/${alias}/_search`, {
      body: {
        size: 0,
        query: knowledgeBaseIds ? { terms: { knowledge_base_id: knowledgeBaseIds } } : { match_all: {} },
        aggs: {
          groups: {
            composite: {
              size: 1000,
              sources: [
                { document_id: { terms: { field: 'document_id' } } },
                { knowledge_base_id: { terms: { field: 'knowledge_base_id' } } },
                { document_version: { terms: { field: 'document_version', missing_bucket: true } } },
              ],
              ...(after ? { after } : {}),
            },
            aggs: {
              last_indexed: { max: { field: 'indexed_at' } },
              first_chunk: { filter: { term: { chunk_index: 0 } } },
            },
          },
        },
      },
    });
    const { buckets, after_key: afterKey } = response.aggregations.groups;
    for (const bucket of buckets) {
      groups.push({
        ...bucket.key,
        document_version: bucket.key.document_version ?? 0,
        chunks: bucket.doc_count,
        last_indexed_ms: bucket.last_indexed.value ?? 0,
        has_first_chunk: bucket.first_chunk.doc_count > 0,
      });
    }
    if (buckets.length === 0 || !afterKey) return groups;
    after = afterKey;
  }
}
