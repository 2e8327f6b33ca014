// buildApp(deps) → a Koa app with every route, no listen(): main.ts and the tests both build it.
import type Router from '@koa/router';
import Koa from 'koa';
import { NotFoundError } from './errors.ts';
import { newRouter, type AppDeps, type AppState } from './http/context.ts';
import { accessLog } from './http/middleware/accessLog.ts';
import { authenticate } from './http/middleware/authenticate.ts';
import { errorEnvelope } from './http/middleware/errors.ts';
import { requestId } from './http/middleware/requestId.ts';
import { requestMetrics } from './http/middleware/requestMetrics.ts';
import { documentContentRoutes } from './http/routes/documentContent.ts';
import { conversationRoutes } from './http/routes/conversations.ts';
import { knowledgeBaseRatingRoutes } from './http/routes/knowledgeBaseRatings.ts';
import { documentRoutes } from './http/routes/documents.ts';
import { healthRoutes } from './http/routes/health.ts';
import { knowledgeBaseRoutes } from './http/routes/knowledgeBases.ts';
import { knowledgeBaseMembershipRoutes } from './http/routes/knowledgeBaseMembership.ts';
import { meRoutes } from './http/routes/me.ts';
import { queryRoutes } from './http/routes/query.ts';
import { searchRoutes } from './http/routes/search.ts';
import { adminRoutes } from './http/routes/admin.ts';
import { apiKeyRoutes } from './http/routes/apiKeys.ts';
import { knowledgeBaseSharingRoutes } from './http/routes/knowledgeBaseSharing.ts';
import { shareInvitationRoutes } from './http/routes/shareInvitations.ts';
import { modelRoutes } from './http/routes/models.ts';
import { uploadRoutes } from './http/routes/uploads.ts';
import { anonymousWebRoutes, webSessionRoutes } from './http/routes/webSession.ts';
import { apiReferenceRoutes } from './http/openapi/routes.ts';
import { requireCsrfDefence } from './http/middleware/csrf.ts';
import { jsonBody } from './http/middleware/jsonBody.ts';
import { authenticateSession, requireSession } from './http/middleware/session.ts';
import { securityHeaders, webApp } from './http/webApp.ts';
import { QueryAdmission } from './commands/queryAdmission.ts';

export type { AppDeps, AppState } from './http/context.ts';

export function buildApp(deps: AppDeps): Koa<AppState> {
  const app = new Koa<AppState>();
  app.proxy = false;
  // Errors are answered by errorEnvelope and logged there; Koa's own logger would print them a second time.
  app.silent = true;

  app.use(requestMetrics(deps.metrics));
  app.use(requestId());
  app.use(securityHeaders());
  app.use(accessLog(deps.logger));
  app.use(errorEnvelope(deps.logger, deps.config.limits.maxBodyBytes, deps.metrics));
  const health = healthRoutes(deps);
  app.use(health.routes());
  // GET /api/v1/openapi.json and the reference at /docs: no key, and before the web app's fallback takes /docs.
  app.use(apiReferenceRoutes().routes());
  // The built web app: GET/HEAD outside /api/, /docs, /healthz and /readyz (service/http/webApp.ts).
  app.use(webApp(deps));

  // One bound on each user's questions, whichever realm they come through.
  const queries = new QueryAdmission(deps.config.queries);
  const api = buildApiRouter(deps, queries);
  app.use(api.routes());
  app.use(api.allowedMethods({ throw: true }));
  const web = buildWebApiRouter(deps, queries);
  app.use(web.routes());
  app.use(web.allowedMethods({ throw: true }));

  // Whatever no route answered.
  app.use((ctx) => {
    throw new NotFoundError(`no route for ${ctx.method} ${ctx.path}`);
  });
  return app;
}

/** A known caller's JSON body: up to KBQA_MAX_BODY_BYTES once inflated, nested at most KBQA_MAX_JSON_DEPTH deep. */
function callerJsonBody(deps: AppDeps) {
  return jsonBody({
    maxBytes: deps.config.limits.maxBodyBytes,
    maxDepth: deps.config.limits.maxJsonDepth,
    encodings: 'inflate',
  });
}

/**
 * The resources both the Developer API and the web app serve: the same handlers, so the same commands, policies and
 * presenters. Only the credential differs (an API key or a session cookie), set by the router mounting them.
 */
function resourceRoutes(deps: AppDeps, queries: QueryAdmission): Router<AppState>[] {
  return [
    meRoutes(),
    modelRoutes(deps),
    knowledgeBaseRoutes(deps),
    knowledgeBaseMembershipRoutes(deps),
    documentRoutes(deps),
    queryRoutes(deps, queries),
    conversationRoutes(deps, queries),
    searchRoutes(deps, queries),
  ];
}

/** The Developer API under /api/v1: authentication, then the JSON body parser, then the resource routes. */
export function buildApiRouter(deps: AppDeps, queries = new QueryAdmission(deps.config.queries)): Router<AppState> {
  const api = newRouter({ prefix: '/api/v1' });
  // Authenticate before reading the body: an anonymous caller gets 401, not a parse of whatever it sent.
  api.use(authenticate(deps.store, deps.logger));
  api.use(callerJsonBody(deps));
  for (const routes of resourceRoutes(deps, queries)) {
    api.use(routes.routes(), routes.allowedMethods({ throw: true }));
  }
  return api;
}

/**
 * The web app's endpoints under /api/web: the session cookie (never an API key), the CSRF defence, the anonymous
 * routes (sign-in and the like, small bodies), then the session gate, and only behind it the JSON body parser, the
 * web app's own routes and the shared resource routes: an anonymous body is never read past the gate.
 */
export function buildWebApiRouter(deps: AppDeps, queries = new QueryAdmission(deps.config.queries)): Router<AppState> {
  const web = newRouter({ prefix: '/api/web' });
  web.use(async (ctx, next) => {
    ctx.state.realm = 'web';
    // Answers here are one user's: never kept by a shared cache.
    ctx.set('Cache-Control', 'no-store');
    await next();
  });
  web.use(authenticateSession(deps.store, deps.config.web));
  web.use(requireCsrfDefence(deps.config.web.publicUrl));
  const anonymous = anonymousWebRoutes(deps);
  web.use(anonymous.routes(), anonymous.allowedMethods({ throw: true }));
  web.use(requireSession());
  web.use(callerJsonBody(deps));
  const webOnly = [
    webSessionRoutes(deps),
    apiKeyRoutes(deps),
    adminRoutes(deps),
    knowledgeBaseSharingRoutes(deps),
    knowledgeBaseRatingRoutes(deps),
    shareInvitationRoutes(deps),
    uploadRoutes(deps),
    documentContentRoutes(deps),
  ];
  for (const routes of [...webOnly, ...resourceRoutes(deps, queries)]) {
    web.use(routes.routes(), routes.allowedMethods({ throw: true }));
  }
  return web;
}
