// The OpenAPI operations of routes/conversations.ts.
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { z } from 'zod';
import {
  conversationDeletedResponse,
  conversationListResponse,
  conversationResponse,
  conversationTurnBody,
  conversationWithMessagesResponse,
  createConversationBody,
  feedbackBody,
  feedbackResponse,
  renameConversationBody,
  turnResponse,
} from '../../routes/conversations.schema.ts';
import { pageQuery } from '../../validation.ts';
import { describeFields, errors, json, pathId } from '../shared.ts';
import { documentPaging } from './paging.ts';
import { CITATION, EXAMPLE_CHUNK, QUERY_FIELD_DOCS, STREAM_DESCRIPTION, eventOf } from './query.ts';

const ID = '8b1e2c3d-4f5a-4b6c-9d7e-0f1a2b3c4d5e';
const MESSAGE_ID = '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
const KB_ID = '3f0c9a52-6d1e-4b8f-9a7c-2e5d8b1f4c60';
const AT = '2026-01-15T09:30:00.000Z';
const TAG = ['Conversations'];

const CONVERSATION = {
  id: ID,
  title: 'How much is an adult return ticket on the ferry?',
  knowledge_base_ids: null,
  created_at: AT,
  updated_at: '2026-01-15T09:31:12.000Z',
};
const ANSWER = {
  message: {
    id: MESSAGE_ID,
    role: 'assistant' as const,
    answer: 'Children under twelve travel free [1].',
    citations: [{ ...CITATION, snippet: 'Children under twelve travel free.' }],
    model: 'kbqa-extractive',
    knowledge_base_ids: [KB_ID],
    standalone_query: 'And for children? adult return ticket ferry',
  },
};
const FEEDBACK = { rating: 'down' as const, comment: 'It missed the bicycle fare', created_at: AT };

const NOT_FOUND = {
  description: 'No conversation with this id is the caller’s (another user’s is not found either).',
  message: `conversation ${ID} not found`,
};
const path = pathId('Conversation id');
const messagePath = path.extend({ message_id: z.string().meta({ description: 'Message id', example: MESSAGE_ID }) });

const turnEvents = z
  .union([
    eventOf('retrieval', 'QueryStreamRetrieval', 'First, once: the passages the answer is grounded on.'),
    eventOf('delta', 'QueryStreamDelta', 'A piece of the answer, and the citations it introduces.'),
    eventOf('done', 'TurnResponse', 'Last: the turn as the JSON response would be, once stored.'),
    eventOf(
      'error',
      'Error',
      'Instead of `done` when something fails after the stream has started; nothing is stored.',
    ),
  ])
  .meta({ description: STREAM_DESCRIPTION.replace('`QueryResponse`', '`TurnResponse`') });

const TURN_STREAM_EXAMPLE = [
  `event: retrieval\ndata: ${JSON.stringify({ passages: [{ number: 1, ...EXAMPLE_CHUNK }] })}\n`,
  `event: delta\ndata: ${JSON.stringify({ text: ANSWER.message.answer, citations: ANSWER.message.citations })}\n`,
  `event: done\ndata: ${JSON.stringify(ANSWER)}\n`,
].join('\n');

const TITLE_DOC = { description: 'The title, 1–200 characters', example: 'Ferry fares' };

export const conversationPaths = {
  '/api/v1/conversations': {
    get: {
      operationId: 'listConversations',
      tags: TAG,
      summary: 'List conversations',
      description:
        "The caller's conversations, most recently updated first. Without `limit` the whole list; with it, pages and a `next_cursor`.",
      requestParams: { query: documentPaging(pageQuery) },
      responses: {
        200: {
          description: 'The conversations.',
          content: json(conversationListResponse, { conversations: [CONVERSATION] }),
        },
        ...errors({
          400: {
            description: 'A `limit` or `cursor` that is not valid.',
            message: 'cursor: not a cursor this API issued',
          },
        }),
      },
    },
    post: {
      operationId: 'createConversation',
      tags: TAG,
      summary: 'Start a conversation',
      description:
        'A conversation whose turns search `knowledge_base_ids` (checked as `/query` checks them, at creation and at each turn), or, omitted, every KB the key reaches at each turn. The title defaults to the first question, cut to 80 characters.',
      requestBody: {
        required: true,
        content: json(
          describeFields(createConversationBody, {
            knowledge_base_ids: QUERY_FIELD_DOCS.knowledge_base_ids,
            title: TITLE_DOC,
          }),
          {},
        ),
      },
      responses: {
        201: {
          description: 'The conversation.',
          content: json(conversationResponse, { conversation: { ...CONVERSATION, title: null } }),
        },
        ...errors(
          {
            403: {
              description: 'A KB in `knowledge_base_ids` is not reachable by the key (or does not exist).',
              message: `API key lacks access to knowledge base ${KB_ID}`,
            },
            413: {
              description:
                'The caller keeps as many conversations as one user may (KBQA_MAX_CONVERSATIONS_PER_USER, 1000 by default).',
              message:
                'conversation limit reached: you have 1000, the most one user may keep (1000, KBQA_MAX_CONVERSATIONS_PER_USER); delete one first',
            },
          },
          { body: true },
        ),
      },
    },
  },
  '/api/v1/conversations/{id}': {
    get: {
      operationId: 'getConversation',
      tags: TAG,
      summary: 'Get a conversation and its messages',
      description:
        'Its messages in order. A stored citation from a KB the key no longer reaches has a null `snippet` (source no longer available).',
      requestParams: { path },
      responses: {
        200: {
          description: 'The conversation and its messages.',
          content: json(conversationWithMessagesResponse, {
            conversation: {
              ...CONVERSATION,
              messages: [
                {
                  id: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
                  role: 'user',
                  content: 'And for children?',
                  created_at: AT,
                },
                {
                  id: MESSAGE_ID,
                  role: 'assistant',
                  content: ANSWER.message.answer,
                  citations: ANSWER.message.citations,
                  model: 'kbqa-extractive',
                  standalone_query: ANSWER.message.standalone_query,
                  feedback: null,
                  created_at: AT,
                },
              ],
            },
          }),
        },
        ...errors({ 404: NOT_FOUND }),
      },
    },
    patch: {
      operationId: 'renameConversation',
      tags: TAG,
      summary: 'Rename a conversation',
      requestParams: { path },
      requestBody: {
        required: true,
        content: json(describeFields(renameConversationBody, { title: TITLE_DOC }), { title: 'Ferry fares' }),
      },
      responses: {
        200: {
          description: 'The conversation renamed.',
          content: json(conversationResponse, { conversation: { ...CONVERSATION, title: 'Ferry fares' } }),
        },
        ...errors({ 404: NOT_FOUND }, { body: true }),
      },
    },
    delete: {
      operationId: 'deleteConversation',
      tags: TAG,
      summary: 'Delete a conversation',
      description: 'The conversation and its messages (and their feedback) go for good.',
      requestParams: { path },
      responses: {
        200: { description: 'Deleted.', content: json(conversationDeletedResponse, { deleted: true }) },
        ...errors({ 404: NOT_FOUND }),
      },
    },
  },
  '/api/v1/conversations/{id}/messages': {
    post: {
      operationId: 'askInConversation',
      tags: TAG,
      summary: 'Ask the next question',
      description:
        'Answers as `POST /api/v1/query` does, over the conversation’s KBs, for the question made standalone from the previous turn (`standalone_query`: what was searched). With `"stream": true` (or `Accept: text/event-stream`) the turn streams with the events of `/query`, its `done` carrying exactly the JSON body. A turn refused (4xx) or failed stores nothing.',
      requestParams: { path },
      requestBody: {
        required: true,
        content: json(
          describeFields(conversationTurnBody([]), {
            query: QUERY_FIELD_DOCS.query,
            model: QUERY_FIELD_DOCS.model,
            max_results: QUERY_FIELD_DOCS.max_results,
            include_chunks: QUERY_FIELD_DOCS.include_chunks,
            stream: QUERY_FIELD_DOCS.stream,
          }),
          { query: 'And for children?' },
        ),
      },
      responses: {
        200: {
          description: 'The answer, stored with its question.',
          content: {
            ...json(turnResponse, ANSWER),
            'text/event-stream': { schema: turnEvents, example: TURN_STREAM_EXAMPLE },
          },
        },
        ...errors(
          {
            400: {
              description: 'A body that is not valid: the message names the field.',
              message: 'query: must be 1–4000 characters',
            },
            403: {
              description: 'A KB the conversation is scoped to is no longer reachable by the key.',
              message: `API key lacks access to knowledge base ${KB_ID}`,
            },
            404: NOT_FOUND,
            409: {
              description: 'Another turn of the conversation was stored while this one was answered.',
              message: `conversation ${ID}: another turn was answered meanwhile; ask again to continue from it`,
            },
            413: {
              description:
                'The conversation holds as many turns as one may (KBQA_MAX_TURNS_PER_CONVERSATION, 200 by default).',
              message: `conversation ${ID} holds 200 turns, the most one conversation may (200, KBQA_MAX_TURNS_PER_CONVERSATION); start a new conversation`,
            },
          },
          { body: true },
        ),
      },
    },
  },
  '/api/v1/conversations/{id}/messages/{message_id}/feedback': {
    put: {
      operationId: 'rateAnswer',
      tags: TAG,
      summary: 'Rate an answer',
      description:
        'Sets the feedback of an answer, replacing any before (no `comment`: no comment kept). A question takes no feedback (400).',
      requestParams: { path: messagePath },
      requestBody: {
        required: true,
        content: json(
          describeFields(feedbackBody, {
            rating: { description: '`up` or `down`', example: 'down' },
            comment: { description: 'Optional, at most 2000 characters', example: 'It missed the bicycle fare' },
          }),
          { rating: 'down', comment: 'It missed the bicycle fare' },
        ),
      },
      responses: {
        200: { description: 'The feedback stored.', content: json(feedbackResponse, { feedback: FEEDBACK }) },
        ...errors(
          {
            400: {
              description: 'A rating other than up or down, or a message that is a question.',
              message: 'rating: must be up or down',
            },
            404: NOT_FOUND,
          },
          { body: true },
        ),
      },
    },
    delete: {
      operationId: 'clearAnswerRating',
      tags: TAG,
      summary: 'Clear the rating of an answer',
      requestParams: { path: messagePath },
      responses: {
        200: { description: 'Cleared.', content: json(conversationDeletedResponse, { deleted: true }) },
        ...errors({ 400: 'A message that is a question.', 404: NOT_FOUND }),
      },
    },
  },
} satisfies ZodOpenApiPathsObject;
