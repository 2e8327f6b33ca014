// How a migration copies document versions' chunks between two indices of a family: `_reindex` (inside OpenSearch,
// with a script converting what the target stores differently) while the source keeps everything in _source, and a
// copy through the service while it does not (template v3 on keeps the sentence vectors in a doc value only, which
// `_reindex` never sees: its copies would come out without them).
import { bulkFailure, type BulkResponse } from './chunks.ts';
import type { SearchClient } from './client.ts';
import { IndexMigrationError } from '../errors.ts';
import { metadataCopyScript, metadataLayoutOf } from './metadataLayouts.ts';
import { decodeEmbedding } from './retrieval.ts';
import {
  decodeSentenceVectors,
  encodeSentenceVectors,
  sentenceCopyScript,
  sentenceVectorFormOf,
  vectorsInSource,
} from './sentenceVectors.ts';

/** Whether `_reindex` copies source's chunks whole (else copyThroughService). */
export const reindexCopies = (source: string): boolean => vectorsInSource(sentenceVectorFormOf(source));

/**
 * The `_reindex` script from source to target: the metadata's layout (v1 ↔ v2, metadataLayouts.ts) and the sentence
 * vectors' form (float32 → int8, sentenceVectors.ts), each when they differ; null when nothing does. Painless wants
 * its functions first: the metadata part (which declares some) leads.
 */
export function reindexScript(
  source: string,
  target: string,
): { lang: 'painless'; source: string; params: Record<string, unknown> } | null {
  const metadata = metadataCopyScript(source, target);
  const sentences = sentenceCopyScript(source, target);
  if (!metadata && !sentences) return null;
  return {
    lang: 'painless',
    source: `${metadata?.source ?? ''}\n${sentences ?? ''}`,
    params: { ...(metadata?.params ?? {}) },
  };
}

/** Chunks read and written per round trip. */
const PAGE = 500;

interface StoredChunk {
  _id: string;
  _source: Record<string, unknown> & { embedding_b64?: string };
  fields?: { sentence_embeddings?: string[] };
  sort: unknown[];
}

/**
 * Copies the chunks `query` selects from source to target through this process: pages of their _source (the
 * knn_vector rebuilt from embedding_b64, which every chunk of a v3 index carries, rather than derived) and their
 * sentence vectors' doc value, re-encoded in the target's form, bulk-written to the target (through its default
 * pipeline, as `_reindex` writes). The metadata layout must be the same on both sides (v2 on): a copy from a v3
 * index into a v1 one is refused. Returns the chunks written.
 */
export async function copyThroughService(
  client: SearchClient,
  source: string,
  target: string,
  query: object,
): Promise<number> {
  if (metadataLayoutOf(source) !== metadataLayoutOf(target))
    throw new IndexMigrationError(
      `${source} → ${target}: copying between these metadata layouts needs _reindex, which cannot copy ${source}'s sentence vectors (a doc value only); migrate to the current template version instead`,
    );
  const [from, to] = [sentenceVectorFormOf(source), sentenceVectorFormOf(target)];
  let copied = 0;
  let after: unknown[] | undefined;
  for (;;) {
    const page = await client.request<{ hits: { hits: StoredChunk[] } }>('POST', `/${source}/_search`, {
      body: {
        size: PAGE,
        track_total_hits: false,
        query,
        sort: [{ chunk_id: 'asc' }],
        _source: { excludes: ['embedding', 'indexed_at'] },
        docvalue_fields: ['sentence_embeddings'],
        ...(after ? { search_after: after } : {}),
      },
    });
    const hits = page.hits.hits;
    if (hits.length === 0) return copied;
    const lines = hits.flatMap((hit) => {
      const passage = decodeEmbedding(hit._source.embedding_b64 ?? '');
      const packed = hit.fields?.sentence_embeddings?.[0];
      const sentences = packed ? decodeSentenceVectors(packed, passage.length, from) : [];
      return [
        { index: { _index: target, _id: hit._id } },
        {
          ...hit._source,
          embedding: Array.from(passage),
          ...(sentences.length > 0 ? { sentence_embeddings: encodeSentenceVectors(sentences, to) } : {}),
        },
      ];
    });
    // Idempotent: the same ids written twice hold the same chunks.
    const response = await client.request<BulkResponse>('POST', '/_bulk', { bulkBody: lines, idempotent: true });
    if (response.errors) throw bulkFailure(response);
    copied += hits.length;
    after = hits[hits.length - 1].sort;
  }
}
