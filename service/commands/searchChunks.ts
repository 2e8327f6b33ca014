// POST /search: the chunks retrieval ranks for a query, without an answer. The same KBs, hidden versions and
// filters as /query; no relevance floor (it is retrieval, ranked, and the caller judges).
import type { Rag } from '../rag/index.ts';
import type { RetrievalRequest, RetrievedChunk, SearchIndex } from '../search/index.ts';
import type { MetadataFilter } from '../search/metadataFilter.ts';
import type { Principal, Store } from '../store/index.ts';
import { HYBRID_DEPTH, resolveSearchedKnowledgeBases } from './answerQuestion.ts';

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
  deps: { store: Store; search: SearchIndex; rag: Pick<Rag, 'embedQuestion'> },
  user: Principal,
  input: SearchInput,
): Promise<SearchResult> {
  const knowledgeBaseIds = await resolveSearchedKnowledgeBases(deps.store, user, input.knowledge_base_ids);
  if (knowledgeBaseIds.length === 0) return { chunks: [], knowledgeBaseIds };
  // The question is embedded only when a side needs it (BM25 alone does not: its similarity is then 0).
  const [vector, hidden] = await Promise.all([
    input.mode === 'bm25' ? Promise.resolve([]) : deps.rag.embedQuestion(input.query),
    deps.store.listHiddenChunkVersions(knowledgeBaseIds),
  ]);
  const request: RetrievalRequest = {
    text: input.query,
    vector,
    knowledgeBaseIds,
    hidden,
    filters: input.filters,
    size: input.max_results,
    depth: HYBRID_DEPTH,
    withSideRanks: true,
  };
  const chunks =
    input.mode === 'hybrid'
      ? await deps.search.hybridSearch(request)
      : input.mode === 'bm25'
        ? await deps.search.lexicalSearch(request)
        : await deps.search.vectorSearch(request);
  return { chunks, knowledgeBaseIds };
}
