// POST /api/v1/query: a cited answer from the KBs the key can reach.
import Router from '@koa/router';
import type { AppDeps, AppState } from '../../app.ts';
import { answerQuestion } from '../../commands/answerQuestion.ts';
import { presentQueryResult } from '../../presenters/query.ts';
import { parseInput } from '../validation.ts';
import { queryBody } from './query.schema.ts';

export function queryRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>();
  const bodySchema = queryBody(deps.rag.answerModels.names);

  router.post('/query', async (ctx) => {
    const input = parseInput(bodySchema, ctx.request.body, 'body');
    const result = await answerQuestion(
      { store: deps.store, search: deps.search, rag: deps.rag, relevanceFloor: deps.config.retrieval.relevanceFloor },
      ctx.state.caller.user,
      input,
    );
    // Per-stage timings for operators and benchmarks (not part of the JSON contract).
    ctx.set(
      'server-timing',
      `embed;dur=${result.timings.embedMs.toFixed(1)}, search;dur=${result.timings.searchMs.toFixed(1)}, answer;dur=${result.timings.answerMs.toFixed(1)}`,
    );
    ctx.body = presentQueryResult(result);
  });

  return router;
}
