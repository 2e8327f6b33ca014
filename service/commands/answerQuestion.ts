// POST /query: resolve the KBs to search, embed the question, ONE hybrid query, the answer chain, citations.
import { authorizeQuery } from '../policies/knowledgeBases.ts';
import { toPassageDocument } from '../rag/answerChain.ts';
import type { Citation } from '../rag/answerChain.ts';
import type { Rag } from '../rag/index.ts';
import type { RetrievedChunk, SearchIndex } from '../search/index.ts';
import type { Store, Principal } from '../store/index.ts';

export const NO_KNOWLEDGE_BASE_ANSWER = 'You have no knowledge bases to search: create one or ask for one to be shared with you.';
export const NOTHING_RELEVANT_ANSWER = 'The knowledge bases you can access hold nothing on this question.';

/** Each side looks this deep before fusion, so RRF has more than the returned page to work with. */
export const HYBRID_DEPTH = 50;

export interface QueryInput {
  query: string;
  knowledge_base_ids?: string[];
  model?: string;
  max_results: number;
  include_chunks: boolean;
}

export interface QueryTimings {
  embedMs: number;
  searchMs: number;
  answerMs: number;
}

export interface QueryResult {
  answer: string;
  citations: Citation[];
  model: string;
  knowledgeBaseIds: string[];
  chunks: RetrievedChunk[] | null;
  timings: QueryTimings;
}

export async function resolveSearchedKnowledgeBases(store: Store, user: Principal, requested: string[] | undefined): Promise<string[]> {
  if (requested === undefined) return store.listReachableKnowledgeBaseIds(user);
  const unique = [...new Set(requested)];
  return authorizeQuery(user, requested, await store.findLiveKnowledgeBases(unique));
}

export async function answerQuestion(
  deps: { store: Store; search: SearchIndex; rag: Rag; relevanceFloor: number },
  user: Principal,
  input: QueryInput,
): Promise<QueryResult> {
  const model = input.model ?? deps.rag.answerModels.defaultModel;
  const knowledgeBaseIds = await resolveSearchedKnowledgeBases(deps.store, user, input.knowledge_base_ids);
  const timings: QueryTimings = { embedMs: 0, searchMs: 0, answerMs: 0 };
  const empty = (answer: string, chunks: RetrievedChunk[] | null): QueryResult => ({
    answer,
    citations: [],
    model,
    knowledgeBaseIds,
    chunks: input.include_chunks ? (chunks ?? []) : null,
    timings,
  });
  if (knowledgeBaseIds.length === 0) return empty(NO_KNOWLEDGE_BASE_ANSWER, []);

  let started = performance.now();
  // Chunk versions still being built (or being retired) are excluded; read while the question is embedded.
  const [questionEmbedding, hidden] = await Promise.all([
    deps.rag.embedQuestion(input.query),
    deps.store.listHiddenChunkVersions(knowledgeBaseIds),
  ]);
  timings.embedMs = performance.now() - started;

  let retrieved: RetrievedChunk[] = [];
  const result = await deps.rag.answer({
    question: input.query,
    questionEmbedding,
    model,
    retrieve: async (question) => {
      started = performance.now();
      retrieved = await deps.search.hybridSearch({
        text: question,
        vector: questionEmbedding,
        knowledgeBaseIds,
        hidden,
        size: input.max_results,
        depth: HYBRID_DEPTH,
        withSideRanks: input.include_chunks,
      });
      timings.searchMs = performance.now() - started;
      // The relevance floor is on dense similarity: below it, nothing is worth answering from.
      if (!retrieved.some((chunk) => chunk.similarity >= deps.relevanceFloor)) return [];
      return retrieved.map((chunk) =>
        toPassageDocument(chunk.text, {
          chunk_id: chunk.chunk_id,
          document_id: chunk.document_id,
          knowledge_base_id: chunk.knowledge_base_id,
          title: chunk.title,
          filename: chunk.filename,
          heading_path: chunk.heading_path,
          chunk_index: chunk.chunk_index,
          page_start: chunk.page_start,
          page_end: chunk.page_end,
          similarity: chunk.similarity,
        }),
      );
    },
  });
  timings.answerMs = result.answerMs;
  if (result.passages.length === 0 || result.citations.length === 0) {
    return empty(result.passages.length === 0 || result.answer.length === 0 ? NOTHING_RELEVANT_ANSWER : result.answer, retrieved);
  }
  return {
    answer: result.answer,
    citations: result.citations,
    model,
    knowledgeBaseIds,
    chunks: input.include_chunks ? retrieved : null,
    timings,
  };
}
