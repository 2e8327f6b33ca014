// buildApp(deps) → a Koa app with every route, no listen(): main.ts and the tests both build it.
import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Caller } from './commands/apiKeys.ts';
import { NotFoundError } from './errors.ts';
import { accessLog } from './http/middleware/accessLog.ts';
import { authenticate } from './http/middleware/authenticate.ts';
import { errorEnvelope } from './http/middleware/errors.ts';
import { requestId } from './http/middleware/requestId.ts';
import { documentRoutes } from './http/routes/documents.ts';
import { healthRoutes } from './http/routes/health.ts';
import { knowledgeBaseRoutes } from './http/routes/knowledgeBases.ts';
import { meRoutes } from './http/routes/me.ts';
import { queryRoutes } from './http/routes/query.ts';
import type { Rag } from './rag/index.ts';
import type { SearchIndex } from './search/index.ts';
import type { Store } from './store/index.ts';

export interface AppDeps {
  config: Config;
  logger: Logger;
  store: Store;
  search: SearchIndex;
  rag: Rag;
}

export interface AppState {
  requestId: string;
  caller: Caller;
}

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

  const api = new Router<AppState>({ prefix: '/api/v1' });
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
  app.use(api.routes());
  app.use(api.allowedMethods({ throw: true }));

  // Whatever no route answered.
  app.use((ctx) => {
    throw new NotFoundError(`no route for ${ctx.method} ${ctx.path}`);
  });
  return app;
}
