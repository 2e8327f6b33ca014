// /api/v1/conversations: a user's conversations, their turns (JSON or streamed as /query streams) and the feedback
// on their answers. Another user's conversation is 404 on every route. Their OpenAPI operations:
// http/openapi/operations/conversations.ts.
import type Router from '@koa/router';
import type { z } from 'zod';
import {
  askInConversation,
  clearRating,
  createConversation,
  deleteConversation,
  listConversations,
  rateAnswer,
  readConversation,
  renameConversation,
  streamConversationTurn,
  type ConversationDeps,
} from '../../commands/conversations.ts';
import { presentConversation, presentFeedback, presentMessage, presentTurn } from '../../presenters/conversations.ts';
import type { QueryAdmission } from '../../commands/queryAdmission.ts';
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import { observeAnswer, serverTiming, streamAnswerSteps } from '../answerStream.ts';
import { acceptsEventStream } from '../eventStream.ts';
import { pageQuery, parseInput } from '../validation.ts';
import {
  conversationTurnBody,
  createConversationBody,
  feedbackBody,
  renameConversationBody,
  type conversationDeletedResponse,
  type conversationListResponse,
  type conversationResponse,
  type conversationWithMessagesResponse,
  type feedbackResponse,
} from './conversations.schema.ts';
import { queryDepsOf } from './query.ts';

export function conversationRoutes(deps: AppDeps, queries: QueryAdmission): Router<AppState> {
  const router = newRouter();
  const turnBody = conversationTurnBody(deps.rag.answerModels.names);
  const conversationDeps: ConversationDeps = { ...queryDepsOf(deps), limits: deps.config.conversations };

  router.post(
    '/conversations',
    authenticated(async (ctx, caller) => {
      const input = parseInput(createConversationBody, ctx.request.body, 'body');
      const record = await createConversation(conversationDeps, caller.user, input);
      ctx.status = 201;
      ctx.body = { conversation: presentConversation(record) } satisfies z.input<typeof conversationResponse>;
    }),
  );

  router.get(
    '/conversations',
    authenticated(async (ctx, caller) => {
      const page = parseInput(pageQuery, ctx.query, 'query');
      const { items, nextCursor } = await listConversations(deps.store, caller.user, page);
      ctx.body = {
        conversations: items.map(presentConversation),
        ...(page.limit !== undefined ? { next_cursor: nextCursor } : {}),
      } satisfies z.input<typeof conversationListResponse>;
    }),
  );

  router.get(
    '/conversations/:id',
    authenticated(async (ctx, caller) => {
      const { conversation, messages } = await readConversation(deps.store, caller.user, ctx.params.id);
      const citationPages = ctx.state.realm === 'web';
      ctx.body = {
        conversation: {
          ...presentConversation(conversation),
          messages: messages.map((message) => presentMessage(message, { citationPages })),
        },
      } satisfies z.input<typeof conversationWithMessagesResponse>;
    }),
  );

  router.patch(
    '/conversations/:id',
    authenticated(async (ctx, caller) => {
      const { title } = parseInput(renameConversationBody, ctx.request.body, 'body');
      const record = await renameConversation(deps.store, caller.user, ctx.params.id, title);
      ctx.body = { conversation: presentConversation(record) } satisfies z.input<typeof conversationResponse>;
    }),
  );

  router.delete(
    '/conversations/:id',
    authenticated(async (ctx, caller) => {
      await deleteConversation(deps.store, caller.user, ctx.params.id);
      ctx.body = { deleted: true } satisfies z.input<typeof conversationDeletedResponse>;
    }),
  );

  router.post(
    '/conversations/:id/messages',
    authenticated(async (ctx, caller) => {
      const input = parseInput(turnBody, ctx.request.body, 'body');
      const id = ctx.params.id;
      // A turn is a question: it takes its user's turn as /query does (commands/queryAdmission.ts).
      const release = await queries.admit(caller.user._id, input.query);
      try {
        if (input.stream || acceptsEventStream(ctx)) {
          await streamAnswerSteps(
            ctx,
            deps,
            (signal) => streamConversationTurn(conversationDeps, caller.user, id, input, signal),
            (step, citationPages) => ({ result: step.turn.result, body: presentTurn(step.turn, { citationPages }) }),
          );
          return;
        }
        const turn = await askInConversation(conversationDeps, caller.user, id, input);
        observeAnswer(deps, turn.result);
        ctx.set('server-timing', serverTiming(turn.result.timings));
        ctx.body = presentTurn(turn, { citationPages: ctx.state.realm === 'web' });
      } finally {
        release();
      }
    }),
  );

  const messageIds = (params: Record<string, string>) => ({
    conversationId: params.id,
    messageId: params.message_id,
  });

  router.put(
    '/conversations/:id/messages/:message_id/feedback',
    authenticated(async (ctx, caller) => {
      const input = parseInput(feedbackBody, ctx.request.body, 'body');
      const { feedback, model } = await rateAnswer(deps.store, caller.user, messageIds(ctx.params), input);
      deps.metrics.countAnswerRating(model, feedback.rating);
      ctx.body = { feedback: presentFeedback(feedback) } satisfies z.input<typeof feedbackResponse>;
    }),
  );

  router.delete(
    '/conversations/:id/messages/:message_id/feedback',
    authenticated(async (ctx, caller) => {
      await clearRating(deps.store, caller.user, messageIds(ctx.params));
      ctx.body = { deleted: true } satisfies z.input<typeof conversationDeletedResponse>;
    }),
  );

  return router;
}
