// POST /api/v1/query: a cited answer from the KBs the key can reach.
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import type Router from '@koa/router';
import { answerQuestion } from '../../commands/answerQuestion.ts';
import { presentQueryResult } from '../../presenters/query.ts';
import { parseInput } from '../validation.ts';
import { queryBody } from './query.schema.ts';

export function queryRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();
  const bodySchema = queryBody(deps.rag.answerModels.names);

  router.post('/query', authenticated(async (ctx, caller) => {
    const input = parseInput(bodySchema, ctx.request.body, 'body');
    const result = await answerQuestion(
      { store: deps.store, search: deps.search, rag: deps.rag, relevanceFloor: deps.config.retrieval.relevanceFloor },
      caller.user,
      input,
    );
    // Per-stage timings for operators and benchmarks (not part of the JSON contract).
    ctx.set(
      'server-timing',
      `embed;dur=${result.timings.embedMs.toFixed(1)}, search;dur=${result.timings.searchMs.toFixed(1)}, answer;dur=${result.timings.answerMs.toFixed(1)}`,
    );
    ctx.body = presentQueryResult(result, { citationPages: ctx.state.realm === 'web' });
  }));

  return router;
}
