import { z } from 'zod';
import { jsonObject, optionalString, reportProblem, requiredString, textCharacterProblem } from '../validation.ts';
import { nextCursor, resourceId, timestamp } from './common.schema.ts';
import { answerFields, citation, knowledgeBaseIdsField, questionField, retrievedChunk } from './query.schema.ts';

const titleField = () =>
  requiredString()
    .trim()
    .min(1, 'must be 1–200 characters')
    .max(200, 'must be 1–200 characters')
    .superRefine(reportProblem(textCharacterProblem));

export const createConversationBody = jsonObject({
  knowledge_base_ids: knowledgeBaseIdsField(),
  title: titleField().optional(),
});

export const renameConversationBody = jsonObject({ title: titleField() });

/** A turn: /query's fields less the scope (the conversation's) and the metadata filter. */
export function conversationTurnBody(models: string[]) {
  return jsonObject({ query: questionField(), ...answerFields(models) });
}

export const feedbackBody = jsonObject({
  rating: z.enum(['up', 'down'], { error: 'must be up or down' }),
  comment: optionalString().pipe(
    z.string().max(2000, 'must be at most 2000 characters').superRefine(reportProblem(textCharacterProblem)).optional(),
  ),
});

// ── Responses ─────────────────────────────────────────────────────────────────────────────────────────────────────

export const conversation = z
  .object({
    id: resourceId('Conversation id'),
    title: z.string().nullable().meta({
      description: 'The title: the first question cut to 80 characters unless one was given; null before the first',
      example: 'How much is an adult return ticket on the ferry?',
    }),
    knowledge_base_ids: z.array(resourceId('KB id')).nullable().meta({
      description: 'The KBs each turn searches; null: every KB the key reaches at that turn (as /query does)',
    }),
    created_at: timestamp('Creation timestamp'),
    updated_at: timestamp('Last change: a turn answered, or a rename'),
  })
  .meta({ id: 'Conversation', description: 'A conversation: its user’s alone.' });

export const feedback = z
  .object({
    rating: z.enum(['up', 'down']),
    comment: z.string().nullable().meta({ description: 'The comment given with the rating, or null' }),
    created_at: timestamp('When the rating was given'),
  })
  .meta({ id: 'Feedback', description: 'A rating of an answer.' });

export const storedCitation = citation
  .extend({
    snippet: z.string().nullable().meta({
      description: 'The passage; null when its KB is no longer reachable by the key (source no longer available)',
    }),
  })
  .meta({ id: 'StoredCitation', description: 'A citation of a stored answer, as read back now.' });

export const conversationMessage = z
  .object({
    id: resourceId('Message id'),
    role: z.enum(['user', 'assistant']),
    content: z.string().meta({ description: 'The question (user) or the answer (assistant)' }),
    citations: z.array(storedCitation).optional().meta({ description: 'Answers only' }),
    model: z.string().optional().meta({ description: 'Answers only: the model used' }),
    standalone_query: z.string().optional().meta({ description: 'Answers only: what retrieval searched' }),
    feedback: feedback.nullable().optional().meta({ description: 'Answers only: the rating, or null' }),
    created_at: timestamp('When the message was stored'),
  })
  .meta({ id: 'ConversationMessage', description: 'A question or an answer of a conversation.' });

export const conversationResponse = z.object({ conversation });
export const conversationListResponse = z.object({ conversations: z.array(conversation), next_cursor: nextCursor });
export const conversationWithMessagesResponse = z.object({
  conversation: conversation.extend({ messages: z.array(conversationMessage) }),
});
export const conversationDeletedResponse = z.object({ deleted: z.literal(true) });

export const answerMessage = z
  .object({
    id: resourceId('Message id (to rate it)'),
    role: z.literal('assistant'),
    answer: z.string().meta({ description: 'The answer; `[n]` markers cite `citations[n-1]`' }),
    citations: z.array(citation),
    model: z.string().meta({ description: 'The model actually used', example: 'kbqa-extractive' }),
    knowledge_base_ids: z.array(resourceId('KB id')).meta({ description: 'The KBs actually searched' }),
    standalone_query: z.string().meta({
      description:
        'What retrieval searched: the question made standalone from the conversation (the question itself on the first turn)',
      example: 'And for children? adult return ticket ferry',
    }),
    chunks: z
      .array(retrievedChunk)
      .optional()
      .meta({ description: 'Only with `include_chunks: true`: the retrieved chunks' }),
  })
  .meta({ id: 'AnswerMessage', description: 'A turn’s answer.' });

export const turnResponse = z
  .object({ message: answerMessage })
  .meta({ id: 'TurnResponse', description: 'A turn answered.' });
export const feedbackResponse = z.object({ feedback });
