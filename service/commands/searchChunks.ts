// POST /search: the chunks retrieval ranks for a query, without an answer. The same KBs, hidden versions and
// filters as /query; no relevance floor (it is retrieval, ranked, and the caller judges).
import type { Rag } from '../rag/index.ts';
import type { RetrievedChunk, SearchIndex } from '../search/index.ts';
import type { MetadataFilter } from '../search/metadataFilter.ts';
import type { Principal, Store } from '../store/index.ts';
import { resolveSearchedKnowledgeBases, retrievalRequest } from './answerQuestion.ts';

export type SearchMode = 'hybrid' | 'bm25' | 'dense';

export interface SearchInput {
  query: string;
  knowledge_base_ids?: string[];
  max_results: number;
  filters?: MetadataFilter;
  mode: SearchMode;
}

export interface SearchResult {
  chunks: RetrievedChunk[];
  knowledgeBaseIds: string[];
}

export async function searchChunks(
  deps: { store: Store; search: SearchIndex; rag: Pick<Rag, 'embedQuestion'>; maxSearchedKnowledgeBases: number },
  user: Principal,
  input: SearchInput,
): Promise<SearchResult> {
  const knowledgeBaseIds = await resolveSearchedKnowledgeBases(
    deps.store,
    user,
    input.knowledge_base_ids,
    deps.maxSearchedKnowledgeBases,
  );
  if (knowledgeBaseIds.length === 0) return { chunks: [], knowledgeBaseIds };
  // BM25 alone needs no vector (its similarity is then 0).
  const request = await retrievalRequest(deps, knowledgeBaseIds, {
    question: input.query,
    embed: input.mode !== 'bm25',
    filters: input.filters,
    size: input.max_results,
    withSideRanks: true,
    asker: user._id,
  });
  const chunks =
    input.mode === 'hybrid'
      ? await deps.search.hybridSearch(request)
      : input.mode === 'bm25'
        ? await deps.search.lexicalSearch(request)
        : await deps.search.vectorSearch(request);
  return { chunks, knowledgeBaseIds };
}
