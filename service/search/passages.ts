// A document's passages (its chunks) in reading order, for the web app's document page. Reads one version: the live
// one, so a replacement in flight or a failed build's leftovers never show.
import type { SearchClient } from './client.ts';
import { chunkVersionQuery } from './chunks.ts';

export interface DocumentPassage {
  chunk_index: number;
  heading_path: string[];
  /** The PDF pages the passage comes from (1-based, inclusive); null for text and markdown. */
  page_start: number | null;
  page_end: number | null;
  text: string;
}

export interface DocumentPassages {
  /** The first `limit` passages by chunk_index. */
  passages: DocumentPassage[];
  /** How many the version has in all. */
  total: number;
}

const PASSAGE_FIELDS = ['chunk_index', 'heading_path', 'page_start', 'page_end', 'text'];

export async function listDocumentPassages(
  client: SearchClient,
  alias: string,
  documentId: string,
  version: number,
  limit: number,
): Promise<DocumentPassages> {
  const response = await client.request<{
    hits: { total: { value: number }; hits: Array<{ _source: Partial<DocumentPassage> }> };
  }>('POST', `/${alias}/_search`, {
    body: {
      size: limit,
      track_total_hits: true,
      query: chunkVersionQuery(documentId, version),
      sort: [{ chunk_index: 'asc' }],
      _source: PASSAGE_FIELDS,
    },
  });
  return {
    total: response.hits.total.value,
    passages: response.hits.hits.map(({ _source: source }) => ({
      chunk_index: source.chunk_index ?? 0,
      heading_path: source.heading_path ?? [],
      page_start: source.page_start ?? null,
      page_end: source.page_end ?? null,
      text: source.text ?? '',
    })),
  };
}
