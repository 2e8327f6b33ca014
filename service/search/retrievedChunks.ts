// What a search returns and how its hits become RetrievedChunks: the fields asked for, the stored vectors decoded,
// the similarity to the question, each side's rank read from an RRF explanation. The queries are retrieval.ts; this
// is the half every one of them shares after OpenSearch answers.
import type { ChunkDocument } from './chunks.ts';
import type { SearchClient } from './client.ts';
import { decodeSentenceVectors, sentenceVectorFormOf } from './sentenceVectors.ts';

/**
 * The parts of a retrieval request (retrieval.ts RetrievalRequest) that say what to return and how to read it.
 * Declared here, not imported, so the two files do not import each other.
 */
export interface ReturnedShape {
  /** The question's vector: a chunk's similarity is measured against it. */
  vector: number[];
  rankingOnly?: boolean;
  withSentenceVectors?: boolean;
}

const RETURNED_FIELDS = [
  'chunk_id',
  'knowledge_base_id',
  'document_id',
  'filename',
  'title',
  'heading_path',
  'chunk_index',
  'page_start',
  'page_end',
  'text',
  'embedding_b64',
];

/** What ranking needs (RetrievalRequest.rankingOnly): no text, no vector. */
const RANKING_FIELDS = ['chunk_id', 'knowledge_base_id', 'document_id', 'filename', 'chunk_index'];

/**
 * The fields a search returns: `_source` fields, and the sentence vectors as a doc value when asked for (never from
 * _source: the doc value is what every template version has, in the form sentenceVectors.ts reads).
 */
export function returnedFields(request: ReturnedShape): { _source: string[]; docvalue_fields?: string[] } {
  if (request.rankingOnly) return { _source: RANKING_FIELDS };
  return request.withSentenceVectors
    ? { _source: RETURNED_FIELDS, docvalue_fields: ['sentence_embeddings'] }
    : { _source: RETURNED_FIELDS };
}

/** The vectors stored at ingestion: the passage's, and one per sentence of a passage of several (none for one). */
export interface ChunkVectors {
  passage: Float32Array;
  sentences: Float32Array[];
}

/** A chunk as a search returns it: the stored fields without the vector, plus how it ranked. */
export interface RetrievedChunk extends Omit<
  ChunkDocument,
  'embedding' | 'embedder' | 'created_at' | 'document_version' | 'sentence_embeddings'
> {
  /** Fused (or single-sided) score as OpenSearch returned it. */
  score: number;
  /** Cosine similarity of the chunk's embedding to the question's, in [0, 1]. */
  similarity: number;
  bm25_rank: number | null;
  vector_rank: number | null;
  /** Only when the request asked withSentenceVectors; never presented. */
  vectors?: ChunkVectors;
}

interface Hit {
  _id: string;
  _index: string;
  _score: number;
  _source: Omit<RetrievedChunk, 'score' | 'similarity' | 'bm25_rank' | 'vector_rank' | 'vectors'> & {
    embedding_b64?: string;
    embedding?: number[];
  };
  /** docvalue_fields: the sentence vectors' doc value (base64), when asked for and the chunk has them. */
  fields?: { sentence_embeddings?: string[] };
  _explanation?: Explanation;
}

interface Explanation {
  value: number;
  description: string;
  details?: Explanation[];
}

export interface SearchResponse {
  hits: { hits: Hit[] };
}

/** Vectors are unit length, so the dot product is the cosine; clamp into [0, 1] as the API promises. */
function cosine(a: number[], b: Float32Array | number[]): number {
  let dot = 0;
  for (let index = 0; index < a.length; index += 1) dot += a[index] * b[index];
  return Math.min(1, Math.max(0, dot));
}

/** The inverse of chunks.ts encodeEmbedding: little-endian float32, whatever this machine's byte order. */
export function decodeEmbedding(base64: string): Float32Array {
  const bytes = Buffer.from(base64, 'base64');
  const vector = new Float32Array(Math.floor(bytes.length / 4));
  for (let index = 0; index < vector.length; index += 1) vector[index] = bytes.readFloatLE(index * 4);
  return vector;
}

export function toChunk(
  hit: Hit,
  request: ReturnedShape,
  ranks: { bm25: number | null; vector: number | null },
): RetrievedChunk {
  const { embedding_b64: encoded, embedding: derived, ...source } = hit._source;
  const passage = request.rankingOnly ? null : encoded ? decodeEmbedding(encoded) : Float32Array.from(derived ?? []);
  return {
    chunk_id: source.chunk_id,
    knowledge_base_id: source.knowledge_base_id,
    document_id: source.document_id,
    filename: source.filename,
    title: source.title ?? '',
    heading_path: source.heading_path ?? [],
    chunk_index: source.chunk_index,
    page_start: source.page_start ?? null,
    page_end: source.page_end ?? null,
    text: source.text ?? '',
    score: hit._score,
    similarity: passage ? cosine(request.vector, passage) : 0,
    bm25_rank: ranks.bm25,
    vector_rank: ranks.vector,
    ...(request.withSentenceVectors && passage
      ? {
          vectors: {
            passage,
            sentences: decodeSentenceVectors(
              hit.fields?.sentence_embeddings?.[0],
              passage.length,
              sentenceVectorFormOf(hit._index),
            ),
          },
        }
      : {}),
  };
}

/**
 * Reads each side's rank back from the RRF explanation: every contribution is 1 / (rank_constant + rank), listed in
 * sub-query order (BM25, then k-NN); a side that did not return the chunk contributes 0 or is absent.
 */
export function sideRanksFromExplanation(explanation: Explanation | undefined, rankConstant: number) {
  const ranks = { bm25: null as number | null, vector: null as number | null };
  const details = explanation?.details ?? [];
  details.forEach((detail, index) => {
    if (!(detail.value > 0)) return;
    const rank = Math.round(1 / detail.value - rankConstant);
    // A lone contribution is the k-NN side's when it explains a k-NN score, or the sentence script around one.
    const description = detail.details?.[0]?.description ?? '';
    const isVector =
      details.length === 1
        ? description.startsWith('within top') || description.startsWith('script score function')
        : index === 1;
    if (isVector) ranks.vector = rank;
    else ranks.bm25 = rank;
  });
  return ranks;
}

/**
 * Chunks indexed before embedding_b64 existed carry only the knn_vector: read those vectors (derived source, slower)
 * so their similarity is still right.
 */
export async function withVectors(
  client: SearchClient,
  alias: string,
  hits: Hit[],
  request: ReturnedShape,
): Promise<Hit[]> {
  if (request.rankingOnly) return hits;
  const missing = hits.filter((hit) => hit._source.embedding_b64 === undefined).map((hit) => hit._id);
  if (missing.length === 0) return hits;
  const response = await client.request<{ docs: Array<{ _id: string; _source?: { embedding: number[] } }> }>(
    'POST',
    `/${alias}/_mget`,
    {
      body: { ids: missing },
      querystring: { _source_includes: 'embedding' },
    },
  );
  const vectors = new Map(response.docs.map((doc) => [doc._id, doc._source?.embedding]));
  return hits.map((hit) =>
    hit._source.embedding_b64 === undefined
      ? { ...hit, _source: { ...hit._source, embedding: vectors.get(hit._id) } }
      : hit,
  );
}
