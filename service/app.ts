// buildApp(deps) → a Koa app with every route, no listen(): main.ts and the tests both build it.
import type Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { NotFoundError } from './errors.ts';
import { newRouter, type AppDeps, type AppState } from './http/context.ts';
import { accessLog } from './http/middleware/accessLog.ts';
import { authenticate } from './http/middleware/authenticate.ts';
import { errorEnvelope } from './http/middleware/errors.ts';
import { requestId } from './http/middleware/requestId.ts';
import { documentRoutes } from './http/routes/documents.ts';
import { healthRoutes } from './http/routes/health.ts';
import { knowledgeBaseRoutes } from './http/routes/knowledgeBases.ts';
import { meRoutes } from './http/routes/me.ts';
import { queryRoutes } from './http/routes/query.ts';

export type { AppDeps, AppState } from './http/context.ts';

export function buildApp(deps: AppDeps): Koa<AppState> {
  const app = new Koa<AppState>();
  app.proxy = false;
  // Errors are answered by errorEnvelope and logged there; Koa's own logger would print them a second time.
  app.silent = true;

  app.use(requestId());
  app.use(accessLog(deps.logger));
  app.use(errorEnvelope(deps.logger, deps.config.limits.maxBodyBytes));
  const health = healthRoutes(deps);
  app.use(health.routes());

  const api = buildApiRouter(deps);
  app.use(api.routes());
  app.use(api.allowedMethods({ throw: true }));

  // Whatever no route answered.
  app.use((ctx) => {
    throw new NotFoundError(`no route for ${ctx.method} ${ctx.path}`);
  });
  return app;
}

/** The Developer API under /api/v1: authentication, then the JSON body parser, then the resource routes. */
export function buildApiRouter(deps: AppDeps): Router<AppState> {
  const api = newRouter({ prefix: '/api/v1' });
  // Authenticate before reading the body: an anonymous caller gets 401, not a parse of whatever it sent.
  api.use(authenticate(deps.store, deps.logger));
  api.use(
    koaBody({
      json: true,
      jsonStrict: true,
      jsonLimit: deps.config.limits.maxBodyBytes,
      text: false,
      urlencoded: false,
      multipart: false,
    }),
  );
  for (const routes of [meRoutes(), knowledgeBaseRoutes(deps), documentRoutes(deps), queryRoutes(deps)]) {
    api.use(routes.routes(), routes.allowedMethods({ throw: true }));
  }
  return api;
}
