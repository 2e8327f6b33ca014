// POST /api/v1/query: a cited answer from the KBs the key can reach, as one JSON body, or streamed as Server-Sent
// Events (`"stream": true`, or `Accept: text/event-stream`): retrieval, delta…, done (or error). Either way the
// question first has its user's turn (commands/queryAdmission.ts): a 429 comes before any event.
// Its OpenAPI operation: http/openapi/operations/query.ts.
import { authenticated, newRouter, type AppContext, type AppDeps, type AppState } from '../context.ts';
import type Router from '@koa/router';
import type { Caller } from '../../commands/apiKeys.ts';
import {
  answerQuestion,
  relevanceFloorFor,
  streamQuestionAnswer,
  type QueryDeps,
  type QueryInput,
  type QueryStep,
} from '../../commands/answerQuestion.ts';
import type { QueryAdmission } from '../../commands/queryAdmission.ts';
import type { QueryTimings } from '../../queryTimings.ts';
import { presentChunk, presentCitation, presentQueryResult } from '../../presenters/query.ts';
import { acceptsEventStream, clientGone, sseComment, sseEvent, writeEventStream } from '../eventStream.ts';
import { errorResponse } from '../middleware/errors.ts';
import { parseInput } from '../validation.ts';
import type { z } from 'zod';
import { queryBody, type queryStreamDeltaEvent, type queryStreamRetrievalEvent } from './query.schema.ts';

/** Per-stage timings for operators and benchmarks (not part of the JSON contract), as a Server-Timing value. */
function serverTiming(timings: QueryTimings): string {
  const stages = [
    `embed;dur=${timings.embedMs.toFixed(1)}`,
    `search;dur=${timings.searchMs.toFixed(1)}`,
    `answer;dur=${timings.answerMs.toFixed(1)}`,
    ...(timings.firstDeltaMs !== undefined ? [`first-delta;dur=${timings.firstDeltaMs.toFixed(1)}`] : []),
  ];
  return stages.join(', ');
}

export function queryRoutes(deps: AppDeps, queries: QueryAdmission): Router<AppState> {
  const router = newRouter();
  const bodySchema = queryBody(deps.rag.answerModels.names);
  const queryDeps: QueryDeps = {
    store: deps.store,
    search: deps.search,
    rag: deps.rag,
    relevanceFloor: (embedder) => relevanceFloorFor(deps.config.retrieval, embedder),
    maxSearchedKnowledgeBases: deps.config.knowledgeBases.maxSearchedPerQuery,
  };

  router.post(
    '/query',
    authenticated(async (ctx, caller) => {
      const input = parseInput(bodySchema, ctx.request.body, 'body');
      const release = await queries.admit(caller.user._id);
      try {
        if (input.stream || acceptsEventStream(ctx)) {
          await streamQuery(ctx, caller, input);
          return;
        }
        const result = await answerQuestion(queryDeps, caller.user, input);
        deps.metrics.observeQueryStages(result.timings);
        if (result.sentences) deps.metrics.countCheckedSentences(result.sentences);
        ctx.set('server-timing', serverTiming(result.timings));
        ctx.body = presentQueryResult(result, { citationPages: ctx.state.realm === 'web' });
      } finally {
        release();
      }
    }),
  );

  /**
   * The answer as events. The first step (KBs resolved and authorized, question embedded, passages retrieved) is
   * awaited before anything is sent: its failures are ordinary JSON error responses with their status. After it,
   * a failure is an `error` event carrying the same envelope, and the stream ends.
   */
  async function streamQuery(ctx: AppContext, caller: Caller, input: QueryInput): Promise<void> {
    const signal = clientGone(ctx);
    const citationPages = ctx.state.realm === 'web';
    const steps = streamQuestionAnswer(queryDeps, caller.user, input, signal);
    const first = await steps.next();

    const present = (step: QueryStep): string[] => {
      switch (step.type) {
        case 'retrieval':
          return [
            sseEvent('retrieval', {
              passages: step.passages.map((chunk, index) => ({ number: index + 1, ...presentChunk(chunk) })),
            } satisfies z.input<typeof queryStreamRetrievalEvent>),
          ];
        case 'delta':
          return [
            sseEvent('delta', {
              text: step.text,
              citations: step.citations.map((citation) => presentCitation(citation, { citationPages })),
            } satisfies z.input<typeof queryStreamDeltaEvent>),
          ];
        case 'done':
          deps.metrics.observeQueryStages(step.result.timings);
          if (step.result.sentences) deps.metrics.countCheckedSentences(step.result.sentences);
          // The timings ride in a comment (parsers skip it); step.result.timings is the whole request's.
          return [
            sseComment(`server-timing ${serverTiming(step.result.timings)}`),
            sseEvent('done', presentQueryResult(step.result, { citationPages })),
          ];
      }
    };

    async function* events(): AsyncGenerator<string> {
      try {
        for (let step = first; !step.done; step = await steps.next()) yield* present(step.value);
      } catch (error) {
        const request = { requestId: ctx.state.requestId, method: ctx.method, path: ctx.path, realm: ctx.state.realm };
        if (signal.aborted) {
          deps.logger.info({ requestId: request.requestId }, 'query stream cancelled: the client went away');
          return;
        }
        const { body } = errorResponse(error, request, {
          logger: deps.logger,
          maxBodyBytes: deps.config.limits.maxBodyBytes,
          metrics: deps.metrics,
        });
        yield sseEvent('error', body);
      } finally {
        await steps.return();
      }
    }

    await writeEventStream(ctx, events(), signal);
  }

  return router;
}
