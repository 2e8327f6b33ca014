// POST /query, one way: resolve the KBs to search, embed the question, ONE hybrid query, the relevance floor; then
// the passages go to the answer chain, which answers whole (answerQuestion) or piece by piece (streamQuestionAnswer).
import { BadRequestError } from '../errors.ts';
import { authorizeQuery } from '../policies/knowledgeBases.ts';
import type { Config } from '../config.ts';
import { NOTHING_RELEVANT_ANSWER, toPassageDocument } from '../rag/answerChain.ts';
import type { Citation } from '../rag/answerChain.ts';
import type { SentenceCounts } from '../rag/sentenceChecks.ts';
import { BGE_SMALL_EN } from '../rag/embedderIdentity.ts';
import type { AnswerRequest, Rag } from '../rag/index.ts';
import type { HistoryTurn } from '../rag/conversationHistory.ts';
import type { IndexedRetrievalRequest, RetrievalRequest, RetrievedChunk, SearchIndex } from '../search/index.ts';
import type { Store, Principal } from '../store/index.ts';
import type { QueryTimings } from '../queryTimings.ts';

export const NO_KNOWLEDGE_BASE_ANSWER =
  'You have no knowledge bases to search: create one or ask for one to be shared with you.';
export { NOTHING_RELEVANT_ANSWER };

/** Each side looks this deep before fusion, so RRF has more than the returned page to work with. */
export const HYBRID_DEPTH = 50;

export interface QueryInput {
  /** What retrieval searches (and, unless `answer_question` is given, what the answer answers). */
  query: string;
  /**
   * A conversation's follow-up as it was asked, when `query` is its standalone form (commands/conversations.ts): the
   * answer picks what answers it ("And for children?"), from passages found by the topic carried in `query`.
   */
  answer_question?: string;
  /**
   * The retrieved chunks in the result even without include_chunks (a conversation keeps each citation's KB), but
   * without include_chunks' side ranks: those cost the search an explain.
   */
  keep_chunks?: boolean;
  /** A conversation's previous turns, for an LLM's answer prompt. */
  history?: HistoryTurn[];
  knowledge_base_ids?: string[];
  model?: string;
  max_results: number;
  include_chunks: boolean;
  filters?: RetrievalRequest['filters'];
}

export interface QueryResult {
  answer: string;
  citations: Citation[];
  model: string;
  knowledgeBaseIds: string[];
  chunks: RetrievedChunk[] | null;
  timings: QueryTimings;
  /** The citation check's counts for an answer whose sentences were checked (for the metric; never presented). */
  sentences: SentenceCounts | null;
}

/** A streamed answer's steps, in this order: one retrieval, one or more deltas, one done. */
export type QueryStep =
  /** The passages the answer may cite: passage n is passages[n-1] (none when there is nothing to answer from). */
  | { type: 'retrieval'; passages: RetrievedChunk[] }
  /** A piece of the answer and the citations it introduces (see AnswerDelta). */
  | { type: 'delta'; text: string; citations: Citation[] }
  /** The whole result, as answerQuestion returns it for the same request. */
  | { type: 'done'; result: QueryResult };

export interface QueryDeps {
  store: Store;
  search: SearchIndex;
  rag: Rag;
  /** The relevance floor for question vectors of the named embedder (relevanceFloorFor). */
  relevanceFloor: (embedder: string) => number;
  /** KBs one question searches at most, named or by default (KBQA_MAX_SEARCHED_KNOWLEDGE_BASES). */
  maxSearchedKnowledgeBases: number;
}

/**
 * The relevance floor for a question embedded by `embedder`: cosines are on each model's own scale, so bge's measured
 * floor (KBQA_RELEVANCE_FLOOR) is bge's alone; any other embedder is the OpenAI-compatible one
 * (KBQA_OPENAI_RELEVANCE_FLOOR).
 */
export function relevanceFloorFor(floors: Config['retrieval'], embedder: string): number {
  return embedder === BGE_SMALL_EN.modelName ? floors.relevanceFloor : floors.openaiRelevanceFloor;
}

/**
 * The KBs a question searches: those it names, each reachable (else 403), or its caller's default scope (their own,
 * the shares they accepted, their organisation's, the library). Either way at most `max`: beyond it a 400 naming
 * the limit, never a silent cut (an answer from some of the KBs meant would look like an answer from all).
 */
export async function resolveSearchedKnowledgeBases(
  store: Store,
  user: Principal,
  requested: string[] | undefined,
  max: number,
): Promise<string[]> {
  const limit = `${max}, KBQA_MAX_SEARCHED_KNOWLEDGE_BASES`;
  if (requested === undefined) {
    const inScope = await store.listDefaultScopeKnowledgeBaseIds(user, max);
    if (inScope.length > max) {
      throw new BadRequestError(
        `knowledge_base_ids: required, since more knowledge bases are in your default scope than one question searches (${limit}); name at most ${max}`,
      );
    }
    return inScope;
  }
  const unique = [...new Set(requested)];
  if (unique.length > max)
    throw new BadRequestError(`knowledge_base_ids: one question searches at most ${max} knowledge bases (${limit})`);
  return authorizeQuery(user, requested, await store.findLiveKnowledgeBases(unique));
}

/** What retrieval leaves the answer: either passages to answer from, or the fixed answer saying why there are none. */
interface Retrieval {
  model: string;
  knowledgeBaseIds: string[];
  /** What the search returned (the include_chunks records), whether or not it passed the relevance floor. */
  retrieved: RetrievedChunk[];
  /** The model, the question and the passages, when there is something to answer from. */
  request: AnswerRequest | null;
  /** The answer when there is nothing to answer from. */
  fixedAnswer: string | null;
  timings: QueryTimings;
}

/**
 * The search request for a question over resolved KBs, shared by /query and /search: the question's vector (unless
 * only BM25 runs: `embed` false leaves it empty) and the chunk versions to hide (still being built, or being
 * retired), read at the same time; each side looks HYBRID_DEPTH deep. Bound to the index the alias points to now,
 * and embedded by that index's embedder: during a migration's swap a query never mixes two indices or two embedders.
 */
export async function retrievalRequest(
  deps: { store: Store; search: Pick<SearchIndex, 'servingIndex'>; rag: Pick<Rag, 'embedQuestion'> },
  knowledgeBaseIds: string[],
  options: RetrievalOptions,
): Promise<IndexedRetrievalRequest> {
  return (await embeddedRetrievalRequest(deps, knowledgeBaseIds, options)).request;
}

interface RetrievalOptions {
  question: string;
  embed: boolean;
  filters: RetrievalRequest['filters'];
  size: number;
  withSideRanks: boolean;
  /** The chunks' stored sentence vectors too (what the extractive answerer reads). */
  withSentenceVectors?: boolean;
  /** Who asks (a user id): the model pool embeds questions round-robin by asker. */
  asker?: string;
}

/** retrievalRequest, and the embedder that made its vector (the relevance floor is that embedder's). */
async function embeddedRetrievalRequest(
  deps: { store: Store; search: Pick<SearchIndex, 'servingIndex'>; rag: Pick<Rag, 'embedQuestion'> },
  knowledgeBaseIds: string[],
  options: RetrievalOptions,
): Promise<{ request: IndexedRetrievalRequest; embedder: string }> {
  const serving = await deps.search.servingIndex();
  const [vector, hidden] = await Promise.all([
    options.embed
      ? deps.rag.embedQuestion(options.question, serving.embedder.modelName, options.asker)
      : Promise.resolve([]),
    deps.store.listHiddenChunkVersions(knowledgeBaseIds),
  ]);
  const request: IndexedRetrievalRequest = {
    index: serving.index,
    text: options.question,
    vector,
    knowledgeBaseIds,
    hidden,
    filters: options.filters,
    size: options.size,
    depth: HYBRID_DEPTH,
    withSideRanks: options.withSideRanks,
    withSentenceVectors: options.withSentenceVectors,
  };
  return { request, embedder: serving.embedder.modelName };
}

async function retrieve(deps: QueryDeps, user: Principal, input: QueryInput): Promise<Retrieval> {
  const model = input.model ?? deps.rag.answerModels.defaultModel;
  const knowledgeBaseIds = await resolveSearchedKnowledgeBases(
    deps.store,
    user,
    input.knowledge_base_ids,
    deps.maxSearchedKnowledgeBases,
  );
  const timings: QueryTimings = { embedMs: 0, searchMs: 0, answerMs: 0 };
  const nothing = (fixedAnswer: string, retrieved: RetrievedChunk[]): Retrieval => ({
    model,
    knowledgeBaseIds,
    retrieved,
    request: null,
    fixedAnswer,
    timings,
  });
  if (knowledgeBaseIds.length === 0) return nothing(NO_KNOWLEDGE_BASE_ANSWER, []);

  let started = performance.now();
  const { request, embedder } = await embeddedRetrievalRequest(deps, knowledgeBaseIds, {
    question: input.query,
    embed: true,
    filters: input.filters,
    size: input.max_results,
    withSideRanks: input.include_chunks,
    withSentenceVectors: true,
    asker: user._id,
  });
  timings.embedMs = performance.now() - started;

  started = performance.now();
  const retrieved = await deps.search.hybridSearch(request);
  timings.searchMs = performance.now() - started;
  // The relevance floor is on dense similarity, on the scale of the embedder that made the question's vector: below
  // it, nothing is worth answering from.
  const floor = deps.relevanceFloor(embedder);
  if (!retrieved.some((chunk) => chunk.similarity >= floor)) return nothing(NOTHING_RELEVANT_ANSWER, retrieved);

  const passages = retrieved.map((chunk) =>
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
      vectors: chunk.vectors,
    }),
  );
  return {
    model,
    knowledgeBaseIds,
    retrieved,
    request: {
      question: input.answer_question ?? input.query,
      questionEmbedding: request.vector,
      model,
      passages,
      ...(input.history ? { history: input.history } : {}),
    },
    fixedAnswer: null,
    timings,
  };
}

/** The chunks passed to the answer model: passage n is the n-th. */
const passagesOf = (retrieval: Retrieval) => (retrieval.request ? retrieval.retrieved : []);

/** An answer that says nothing (a reply citing nothing and holding no text) is the nothing-relevant answer. */
const answerText = (text: string) => (text.length > 0 ? text : NOTHING_RELEVANT_ANSWER);

function result(
  retrieval: Retrieval,
  input: QueryInput,
  answer: string,
  citations: Citation[],
  sentences: SentenceCounts | null = null,
): QueryResult {
  return {
    answer,
    citations,
    model: retrieval.model,
    knowledgeBaseIds: retrieval.knowledgeBaseIds,
    chunks: input.include_chunks || input.keep_chunks ? retrieval.retrieved : null,
    timings: retrieval.timings,
    sentences,
  };
}

export async function answerQuestion(deps: QueryDeps, user: Principal, input: QueryInput): Promise<QueryResult> {
  const retrieval = await retrieve(deps, user, input);
  if (retrieval.request === null) return result(retrieval, input, retrieval.fixedAnswer ?? NOTHING_RELEVANT_ANSWER, []);
  const started = performance.now();
  const answered = await deps.rag.answer(retrieval.request);
  retrieval.timings.answerMs = performance.now() - started;
  return result(retrieval, input, answerText(answered.answer), answered.citations, answered.sentences ?? null);
}

/**
 * The same answer as its steps: retrieval, the answer's deltas as the model writes them, then the whole result.
 * Everything up to the retrieval step (authorization included) happens before the first step is yielded, so its
 * failures can still be ordinary responses; a failure after it is thrown from the generator. Aborting `signal` (the
 * client went away) cancels the model call.
 */
export async function* streamQuestionAnswer(
  deps: QueryDeps,
  user: Principal,
  input: QueryInput,
  signal: AbortSignal,
): AsyncGenerator<QueryStep, void, undefined> {
  const retrieval = await retrieve(deps, user, input);
  yield { type: 'retrieval', passages: passagesOf(retrieval) };
  if (retrieval.request === null) {
    const answer = retrieval.fixedAnswer ?? NOTHING_RELEVANT_ANSWER;
    yield { type: 'delta', text: answer, citations: [] };
    yield { type: 'done', result: result(retrieval, input, answer, []) };
    return;
  }

  const started = performance.now();
  let text = '';
  const citations: Citation[] = [];
  let sentences: SentenceCounts | null = null;
  for await (const delta of deps.rag.streamAnswer(retrieval.request, signal)) {
    sentences = delta.sentences ?? sentences;
    // The last piece of a checked answer may carry only its counts: no event for that.
    if (delta.text.length === 0 && delta.citations.length === 0) continue;
    retrieval.timings.firstDeltaMs ??= performance.now() - started;
    text += delta.text;
    citations.push(...delta.citations);
    yield { type: 'delta', text: delta.text, citations: delta.citations };
  }
  // A chat model may end its stream quietly when aborted rather than throw: that is no answer.
  signal.throwIfAborted();
  retrieval.timings.answerMs = performance.now() - started;
  if (text.length === 0) {
    retrieval.timings.firstDeltaMs ??= retrieval.timings.answerMs;
    text = answerText(text);
    yield { type: 'delta', text, citations: [] };
  }
  yield { type: 'done', result: result(retrieval, input, text, citations, sentences) };
}
