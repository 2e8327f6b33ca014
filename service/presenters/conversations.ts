import type { z } from 'zod';
import type { AnsweredTurn } from '../commands/conversations.ts';
import type { conversation, conversationMessage, feedback, turnResponse } from '../http/routes/conversations.schema.ts';
import type { ConversationMessageRecord, ConversationRecord, MessageFeedback } from '../store/index.ts';
import { presentChunk, presentCitation } from './query.ts';

export function presentConversation(record: ConversationRecord): z.input<typeof conversation> {
  return {
    id: record._id,
    title: record.title,
    knowledge_base_ids: record.knowledge_base_ids,
    created_at: record.created_at.toISOString(),
    updated_at: record.updated_at.toISOString(),
  };
}

export function presentFeedback(record: MessageFeedback): z.input<typeof feedback> {
  return { rating: record.rating, comment: record.comment, created_at: record.created_at.toISOString() };
}

/** A stored message as read back; an answer's citations as the caller may see them now (see readConversation). */
export function presentMessage(
  record: ConversationMessageRecord,
  options: { citationPages?: boolean } = {},
): z.input<typeof conversationMessage> {
  const base = {
    id: record._id,
    role: record.role,
    content: record.content,
    created_at: record.created_at.toISOString(),
  };
  if (record.role === 'user') return base;
  return {
    ...base,
    citations: (record.citations ?? []).map((citation) => ({
      document_id: citation.document_id,
      title: citation.title,
      snippet: citation.snippet,
      similarity: citation.similarity,
      ...(options.citationPages
        ? {
            page_start: citation.page_start,
            page_end: citation.page_end,
            location: citation.location ?? null,
            scanned: citation.scanned ?? false,
          }
        : {}),
    })),
    model: record.model ?? '',
    standalone_query: record.standalone_query ?? '',
    feedback: record.feedback ? presentFeedback(record.feedback) : null,
  };
}

/** A turn's answer: /query's body (presenters/query.ts) as a message, with its id and standalone query. */
export function presentTurn(
  turn: AnsweredTurn,
  options: { citationPages?: boolean } = {},
): z.input<typeof turnResponse> {
  const { result, message } = turn;
  return {
    message: {
      id: message._id,
      role: 'assistant',
      answer: result.answer,
      citations: result.citations.map((citation) => presentCitation(citation, options)),
      model: result.model,
      knowledge_base_ids: result.knowledgeBaseIds,
      standalone_query: message.standalone_query ?? '',
      ...(result.chunks !== null ? { chunks: result.chunks.map(presentChunk) } : {}),
    },
  };
}
