// Conversations: a user's own threads of questions and answers. Each turn is /query's answer (answerQuestion,
// streamQuestionAnswer: the same KB resolution and authorization, retrieval and answer chain) for the question made
// standalone from the previous turn (rag/standaloneQuery.ts). A turn is stored only once answered: a refusal (4xx)
// or a failure stores nothing.
import { randomUUID } from 'node:crypto';
import { BadRequestError, NotFoundError, QuotaExceededError } from '../errors.ts';
import { roleOf } from '../policies/knowledgeBases.ts';
import { HISTORY_ANSWER_CHARACTERS, HISTORY_TURNS, type HistoryTurn } from '../rag/conversationHistory.ts';
import { standaloneQuery, type PreviousTurn } from '../rag/standaloneQuery.ts';
import type {
  ConversationMessageRecord,
  ConversationRecord,
  FeedbackQuery,
  MessageFeedback,
  Principal,
  RecentTurn,
  Store,
  StoredCitation,
} from '../store/index.ts';
import {
  answerQuestion,
  resolveSearchedKnowledgeBases,
  streamQuestionAnswer,
  type QueryDeps,
  type QueryInput,
  type QueryResult,
  type QueryStep,
} from './answerQuestion.ts';

export const TITLE_CHARACTERS = 80;

export interface ConversationLimits {
  maxPerUser: number;
  maxTurns: number;
}

export interface ConversationDeps extends QueryDeps {
  limits: ConversationLimits;
}

/** The default title: the first question, cut to 80 characters (code points: a cut never splits an emoji's pair). */
export function titleFrom(question: string): string {
  return Array.from(question).slice(0, TITLE_CHARACTERS).join('');
}

export async function createConversation(
  deps: Pick<ConversationDeps, 'store' | 'limits' | 'maxSearchedKnowledgeBases'>,
  user: Principal,
  input: { knowledge_base_ids?: string[]; title?: string },
): Promise<ConversationRecord> {
  // Checked as /query checks them: an unknown or unreachable KB is 403, now and again at each turn.
  if (input.knowledge_base_ids !== undefined)
    await resolveSearchedKnowledgeBases(deps.store, user, input.knowledge_base_ids, deps.maxSearchedKnowledgeBases);
  const held = await deps.store.countConversationsOfUser(user._id);
  if (held >= deps.limits.maxPerUser) throw QuotaExceededError.conversations(deps.limits.maxPerUser);
  const now = new Date();
  const record: ConversationRecord = {
    _id: randomUUID(),
    user_id: user._id,
    title: input.title ?? null,
    knowledge_base_ids: input.knowledge_base_ids ? [...new Set(input.knowledge_base_ids)] : null,
    turns: 0,
    created_at: now,
    updated_at: now,
  };
  await deps.store.insertConversation(record);
  return record;
}

/** The user's conversation, or 404: another user's conversation does not exist for them (never 403). */
export async function conversationOf(store: Store, user: Principal, id: string): Promise<ConversationRecord> {
  const record = await store.findConversationOfUser(id, user._id);
  if (!record) throw new NotFoundError(`conversation ${id} not found`);
  return record;
}

export const listConversations = (store: Store, user: Principal, page: { limit?: number; cursor?: string }) =>
  store.listConversationsOfUser(user._id, page);

/**
 * A conversation and its messages, as its user reads it now: a stored citation from a KB the user no longer
 * reaches keeps its document and title but not its snippet (the passage is not theirs to read any more).
 */
export async function readConversation(
  store: Store,
  user: Principal,
  id: string,
): Promise<{ conversation: ConversationRecord; messages: ConversationMessageRecord[] }> {
  const conversation = await conversationOf(store, user, id);
  const messages = await store.listMessages(id);
  const cited = new Set<string>();
  for (const message of messages)
    for (const citation of message.citations ?? [])
      if (citation.knowledge_base_id) cited.add(citation.knowledge_base_id);
  const reachable = new Set(
    (await (cited.size > 0 ? store.findLiveKnowledgeBases([...cited]) : Promise.resolve([])))
      .filter((knowledgeBase) => roleOf(user, knowledgeBase) !== null)
      .map((knowledgeBase) => knowledgeBase._id),
  );
  const visible = (citation: StoredCitation): StoredCitation =>
    citation.knowledge_base_id !== null && reachable.has(citation.knowledge_base_id)
      ? citation
      : { ...citation, snippet: null };
  return {
    conversation,
    messages: messages.map((message) =>
      message.citations ? { ...message, citations: message.citations.map(visible) } : message,
    ),
  };
}

export async function renameConversation(store: Store, user: Principal, id: string, title: string) {
  const conversation = await conversationOf(store, user, id);
  const at = new Date();
  await store.renameConversation(id, title, at);
  return { ...conversation, title, updated_at: at };
}

export async function deleteConversation(store: Store, user: Principal, id: string): Promise<void> {
  await conversationOf(store, user, id);
  await store.deleteConversation(id);
}

export interface TurnInput {
  query: string;
  model?: string;
  max_results: number;
  include_chunks: boolean;
}

/** A turn answered and stored: the /query result (for its chunks) and the assistant message as stored. */
export interface AnsweredTurn {
  result: QueryResult;
  message: ConversationMessageRecord;
}

export type TurnStep = Exclude<QueryStep, { type: 'done' }> | { type: 'done'; turn: AnsweredTurn };

/**
 * The turns before this one, oldest first, at most HISTORY_TURNS: kept on the conversation record (one _id read, the
 * conversation's own); a conversation stored before it kept them is read from its messages once (its next turn
 * writes them onto the record).
 */
async function recentTurnsOf(store: Store, conversation: ConversationRecord): Promise<RecentTurn[]> {
  if (conversation.recent_turns) return conversation.recent_turns;
  if (conversation.turns === 0) return [];
  const messages = await store.listMessages(conversation._id, HISTORY_TURNS * 2);
  const turns: RecentTurn[] = [];
  for (let index = 1; index < messages.length; index += 1) {
    const [question, answer] = [messages[index - 1], messages[index]];
    if (answer.role === 'assistant' && question.role === 'user') turns.push(recentTurn(question.content, answer));
  }
  return turns;
}

/** A turn as the next ones read it: its answer cut to the history's bound, the titles it cited once each. */
function recentTurn(question: string, answer: ConversationMessageRecord): RecentTurn {
  return {
    question,
    answer: Array.from(answer.content).slice(0, HISTORY_ANSWER_CHARACTERS).join(''),
    standalone_query: answer.standalone_query ?? '',
    cited_titles: [...new Set((answer.citations ?? []).map((citation) => citation.title))],
  };
}

/** What a turn needs before it answers: the conversation (its user's, with room left) and its standalone query. */
async function prepareTurn(deps: ConversationDeps, user: Principal, id: string, input: TurnInput) {
  // History is bounded: the last HISTORY_TURNS turns (an LLM reads them; the extractive rewrite uses the last
  // answer, whose standalone query carries the topic before it).
  const conversation = await conversationOf(deps.store, user, id);
  if (conversation.turns >= deps.limits.maxTurns) throw QuotaExceededError.turns(id, deps.limits.maxTurns);
  const recentTurns = await recentTurnsOf(deps.store, conversation);
  const last = recentTurns.at(-1);
  const previous: PreviousTurn | null = last
    ? { standaloneQuery: last.standalone_query, citedTitles: last.cited_titles }
    : null;
  const history: HistoryTurn[] = recentTurns.map((turn) => ({ question: turn.question, answer: turn.answer }));
  const model = input.model ?? deps.rag.answerModels.defaultModel;
  // An OpenAI-compatible model condenses the follow-up itself (LangChain's history-aware step); the extractive one
  // (or a model that replies nothing) gets the rewrite without a model.
  const standalone =
    (await deps.rag.condenseQuestion(model, history, input.query)) ?? standaloneQuery(input.query, previous);
  // The chunks always (keep_chunks): they say which KB each citation came from (kept with it); shown only if asked.
  const queryInput: QueryInput = {
    query: standalone,
    ...(standalone !== input.query ? { answer_question: input.query } : {}),
    ...(history.length > 0 ? { history } : {}),
    ...(conversation.knowledge_base_ids ? { knowledge_base_ids: conversation.knowledge_base_ids } : {}),
    ...(input.model ? { model: input.model } : {}),
    max_results: input.max_results,
    include_chunks: input.include_chunks,
    keep_chunks: true,
  };
  return { conversation, standalone, queryInput, recentTurns };
}

async function storeTurn(
  store: Store,
  prepared: Awaited<ReturnType<typeof prepareTurn>>,
  input: TurnInput,
  result: QueryResult,
): Promise<AnsweredTurn> {
  const { conversation, standalone, recentTurns } = prepared;
  const knowledgeBaseOf = new Map((result.chunks ?? []).map((chunk) => [chunk.document_id, chunk.knowledge_base_id]));
  const now = new Date();
  const position = conversation.turns * 2;
  const common = { conversation_id: conversation._id, user_id: conversation.user_id, feedback: null };
  const question: ConversationMessageRecord = {
    ...common,
    _id: randomUUID(),
    position,
    role: 'user',
    content: input.query,
    citations: null,
    model: null,
    standalone_query: null,
    knowledge_base_ids: null,
    created_at: now,
  };
  const answer: ConversationMessageRecord = {
    ...common,
    _id: randomUUID(),
    position: position + 1,
    role: 'assistant',
    content: result.answer,
    question: input.query,
    citations: result.citations.map((citation) => ({
      document_id: citation.document_id,
      knowledge_base_id: knowledgeBaseOf.get(citation.document_id) ?? null,
      title: citation.title,
      snippet: citation.snippet,
      similarity: citation.similarity,
      page_start: citation.page_start,
      page_end: citation.page_end,
      location: citation.location,
      scanned: citation.scanned,
    })),
    model: result.model,
    standalone_query: standalone,
    knowledge_base_ids: result.knowledgeBaseIds,
    created_at: now,
  };
  await store.appendTurn(conversation, [question, answer], {
    title: conversation.title ?? titleFrom(input.query),
    at: now,
    recentTurns: [...recentTurns, recentTurn(input.query, answer)].slice(-HISTORY_TURNS),
  });
  return { result: { ...result, chunks: input.include_chunks ? result.chunks : null }, message: answer };
}

export async function askInConversation(
  deps: ConversationDeps,
  user: Principal,
  id: string,
  input: TurnInput,
): Promise<AnsweredTurn> {
  const prepared = await prepareTurn(deps, user, id, input);
  const result = await answerQuestion(deps, user, prepared.queryInput);
  return storeTurn(deps.store, prepared, input, result);
}

/** The same turn as /query's steps; the last carries the stored message. Nothing is stored if the stream fails. */
export async function* streamConversationTurn(
  deps: ConversationDeps,
  user: Principal,
  id: string,
  input: TurnInput,
  signal: AbortSignal,
): AsyncGenerator<TurnStep, void, undefined> {
  const prepared = await prepareTurn(deps, user, id, input);
  for await (const step of streamQuestionAnswer(deps, user, prepared.queryInput, signal)) {
    if (step.type !== 'done') yield step;
    else yield { type: 'done', turn: await storeTurn(deps.store, prepared, input, step.result) };
  }
}

/** The message to rate: an answer in one of the user's conversations (a question takes no feedback: 400). */
async function answerToRate(
  store: Store,
  user: Principal,
  conversationId: string,
  messageId: string,
): Promise<ConversationMessageRecord> {
  await conversationOf(store, user, conversationId);
  const message = await store.findMessage(messageId);
  if (!message || message.conversation_id !== conversationId)
    throw new NotFoundError(`message ${messageId} not found in conversation ${conversationId}`);
  if (message.role !== 'assistant')
    throw new BadRequestError(`message ${messageId}: only an answer (role assistant) takes feedback`);
  return message;
}

/** PUT replaces the whole feedback: no comment given, no comment kept. */
export async function rateAnswer(
  store: Store,
  user: Principal,
  ids: { conversationId: string; messageId: string },
  input: { rating: 'up' | 'down'; comment?: string },
): Promise<{ feedback: MessageFeedback; model: string }> {
  const answer = await answerToRate(store, user, ids.conversationId, ids.messageId);
  const feedback: MessageFeedback = { rating: input.rating, comment: input.comment ?? null, created_at: new Date() };
  await store.setMessageFeedback(ids.messageId, feedback);
  return { feedback, model: answer.model ?? '' };
}

export async function clearRating(
  store: Store,
  user: Principal,
  ids: { conversationId: string; messageId: string },
): Promise<void> {
  await answerToRate(store, user, ids.conversationId, ids.messageId);
  await store.setMessageFeedback(ids.messageId, null);
}

/** One rated answer as `kbqa feedback export` writes it: what was asked and answered, and the rating; never who. */
export interface RatedAnswer {
  question: string;
  standalone_query: string;
  answer: string;
  citations: Array<{ document_id: string; knowledge_base_id: string | null; title: string; snippet: string | null }>;
  model: string;
  knowledge_base_ids: string[];
  rating: 'up' | 'down';
  comment: string | null;
  rated_at: string;
}

/** The question an answer answered: kept on it since the field exists, else read from the message before it. */
export async function questionOf(store: Store, answer: ConversationMessageRecord): Promise<string> {
  if (answer.question !== undefined) return answer.question;
  return (await store.findMessageAt(answer.conversation_id, answer.position - 1))?.content ?? '';
}

/** The rated answers (`--kb`: of turns that searched it; `--since`: rated since; `--rating`), oldest first. */
export async function exportRatedAnswers(store: Store, query: FeedbackQuery): Promise<RatedAnswer[]> {
  const rated = await store.listRatedAnswers(query);
  const exported: RatedAnswer[] = [];
  for (const answer of rated) {
    if (!answer.feedback) continue;
    exported.push({
      question: await questionOf(store, answer),
      standalone_query: answer.standalone_query ?? '',
      answer: answer.content,
      citations: (answer.citations ?? []).map((citation) => ({
        document_id: citation.document_id,
        knowledge_base_id: citation.knowledge_base_id,
        title: citation.title,
        snippet: citation.snippet,
      })),
      model: answer.model ?? '',
      knowledge_base_ids: answer.knowledge_base_ids ?? [],
      rating: answer.feedback.rating,
      comment: answer.feedback.comment,
      rated_at: answer.feedback.created_at.toISOString(),
    });
  }
  return exported;
}
