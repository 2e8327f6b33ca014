// GET /models: the answer models a query may name, and the default (the web app's Ask page lists them).
import type Router from '@koa/router';
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';

export function modelRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();
  router.get('/models', authenticated((ctx) => {
    ctx.body = { models: deps.rag.answerModels.names, default_model: deps.config.answerModels.defaultModel };
  }));
  return router;
}
