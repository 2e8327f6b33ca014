// GET /models: the answer models a query may name, and the default (the web app's Ask page lists them).
// Its OpenAPI operation: http/openapi/operations/models.ts.
import type Router from '@koa/router';
import type { z } from 'zod';
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import type { modelsResponse } from './models.schema.ts';

export function modelRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();
  router.get(
    '/models',
    authenticated((ctx) => {
      ctx.body = {
        models: deps.rag.answerModels.names,
        default_model: deps.config.answerModels.defaultModel,
      } satisfies z.input<typeof modelsResponse>;
    }),
  );
  return router;
}
