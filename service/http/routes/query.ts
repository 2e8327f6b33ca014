// POST /api/v1/query: a cited answer from the KBs the key can reach, as one JSON body, or streamed as Server-Sent
// Events (`"stream": true`, or `Accept: text/event-stream`): retrieval, delta…, done (or error). Either way the
// question first has its user's turn (commands/queryAdmission.ts): a 429 comes before any event.
// Its OpenAPI operation: http/openapi/operations/query.ts.
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import type Router from '@koa/router';
import {
  answerQuestion,
  relevanceFloorFor,
  streamQuestionAnswer,
  type QueryDeps,
} from '../../commands/answerQuestion.ts';
import type { QueryAdmission } from '../../commands/queryAdmission.ts';
import { presentQueryResult } from '../../presenters/query.ts';
import { observeAnswer, serverTiming, streamAnswerSteps } from '../answerStream.ts';
import { acceptsEventStream } from '../eventStream.ts';
import { parseInput } from '../validation.ts';
import { queryBody } from './query.schema.ts';

/** What answering a question needs, for /query and a conversation's turns alike. */
export function queryDepsOf(deps: AppDeps): QueryDeps {
  return {
    store: deps.store,
    search: deps.search,
    rag: deps.rag,
    relevanceFloor: (embedder) => relevanceFloorFor(deps.config.retrieval, embedder),
    maxSearchedKnowledgeBases: deps.config.knowledgeBases.maxSearchedPerQuery,
  };
}

export function queryRoutes(deps: AppDeps, queries: QueryAdmission): Router<AppState> {
  const router = newRouter();
  const bodySchema = queryBody(deps.rag.answerModels.names);
  const queryDeps = queryDepsOf(deps);

  router.post(
    '/query',
    authenticated(async (ctx, caller) => {
      const input = parseInput(bodySchema, ctx.request.body, 'body');
      const release = await queries.admit(caller.user._id, input.query);
      try {
        if (input.stream || acceptsEventStream(ctx)) {
          // A failure after the first step is an `error` event carrying the same envelope, and the stream ends.
          await streamAnswerSteps(
            ctx,
            deps,
            (signal) => streamQuestionAnswer(queryDeps, caller.user, input, signal),
            (step, citationPages) => ({
              result: step.result,
              body: presentQueryResult(step.result, { citationPages }),
            }),
          );
          return;
        }
        const result = await answerQuestion(queryDeps, caller.user, input);
        observeAnswer(deps, result);
        ctx.set('server-timing', serverTiming(result.timings));
        ctx.body = presentQueryResult(result, { citationPages: ctx.state.realm === 'web' });
      } finally {
        release();
      }
    }),
  );

  return router;
}
