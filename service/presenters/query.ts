import type { QueryResult } from '../commands/answerQuestion.ts';
import type { Citation } from '../rag/answerChain.ts';
import type { RetrievedChunk } from '../search/index.ts';
import type { z } from 'zod';
import type { queryResponse, retrievedChunk } from '../http/routes/query.schema.ts';
import type { searchResponse } from '../http/routes/search.schema.ts';
import type { SearchResult } from '../commands/searchChunks.ts';

const round = (value: number) => Math.round(value * 10_000) / 10_000;

export function presentChunk(chunk: RetrievedChunk): z.input<typeof retrievedChunk> {
  return {
    id: chunk.chunk_id,
    document_id: chunk.document_id,
    knowledge_base_id: chunk.knowledge_base_id,
    filename: chunk.filename,
    title: chunk.title,
    heading_path: chunk.heading_path,
    chunk_index: chunk.chunk_index,
    page_start: chunk.page_start,
    page_end: chunk.page_end,
    text: chunk.text,
    score: chunk.score,
    similarity: round(chunk.similarity),
    bm25_rank: chunk.bm25_rank,
    vector_rank: chunk.vector_rank,
  };
}

/** One citation, as a query response and a streamed answer's deltas show it (see presentQueryResult). */
export function presentCitation(citation: Citation, options: { citationPages?: boolean } = {}) {
  return {
    document_id: citation.document_id,
    title: citation.title,
    snippet: citation.snippet,
    similarity: citation.similarity,
    ...(options.citationPages
      ? {
          page_start: citation.page_start,
          page_end: citation.page_end,
          location: citation.location,
          scanned: citation.scanned ?? false,
        }
      : {}),
  };
}

/**
 * `citationPages`: the web app's citations also carry the PDF pages they cite. The Developer API's citations keep
 * exactly the contract's four fields (clients may validate them strictly); its `chunks` records carry the pages.
 */
export function presentQueryResult(
  result: QueryResult,
  options: { citationPages?: boolean } = {},
): z.input<typeof queryResponse> {
  return {
    answer: result.answer,
    citations: result.citations.map((citation) => presentCitation(citation, options)),
    model: result.model,
    knowledge_base_ids: result.knowledgeBaseIds,
    ...(result.chunks !== null ? { chunks: result.chunks.map(presentChunk) } : {}),
  };
}

/** POST /search: the chunks as include_chunks shows them, best first. */
export function presentSearchResult(result: SearchResult): z.input<typeof searchResponse> {
  return { results: result.chunks.map(presentChunk), knowledge_base_ids: result.knowledgeBaseIds };
}
