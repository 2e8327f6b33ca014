// Request context types and the two things every route file needs: a router that matches paths exactly as the
// contract spells them, and the guard that hands a handler its authenticated caller. Routes import from here, never
// from app.ts (the composition root), so nothing below the root points back up at it.
import Router, { type RouterContext } from '@koa/router';
import type { Logger } from 'pino';
import type { Caller } from '../commands/apiKeys.ts';
import type { IngestRunner } from '../jobs/runner.ts';
import type { Config } from '../config.ts';
import { UnauthorizedError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import type { Rag } from '../rag/index.ts';
import type { SearchIndex } from '../search/index.ts';
import type { Store } from '../store/index.ts';

export interface AppDeps {
  config: Config;
  logger: Logger;
  store: Store;
  search: SearchIndex;
  rag: Rag;
  /** This process's ingestion job engine. */
  jobs: IngestRunner;
  /** The Prometheus metrics of this process (served by http/metricsServer.ts, never on the API's port). */
  metrics: Metrics;
}

export interface AppState {
  requestId: string;
  /**
   * Set by the authenticate middleware. Optional on purpose: a handler cannot read it directly (the type checker
   * refuses `ctx.state.caller.user`); it receives the caller from `authenticated()`, which refuses to run it without one.
   */
  caller?: Caller;
  /** Which credential this part of the service takes: API keys (/api/v1) or the web app's session cookie (/api/web). */
  realm?: 'api' | 'web';
}

export type AppContext = RouterContext<AppState>;

/**
 * Every router of the service. Paths are case-sensitive (the contract spells them in lower case): `/API/V1/me` is
 * no route at all, so it is a 404 and never reaches a handler by a path the prefix middleware did not see.
 */
export function newRouter(options: { prefix?: string } = {}): Router<AppState> {
  return new Router<AppState>({ ...options, sensitive: true });
}

/**
 * Wraps a handler that acts for a caller. The one guard between a request and any use case: without an
 * authenticated caller the handler does not run, whatever middleware did or did not run before it.
 */
export function authenticated(handler: (ctx: AppContext, caller: Caller) => unknown | Promise<unknown>) {
  return async (ctx: AppContext): Promise<void> => {
    const caller = ctx.state.caller;
    if (!caller?.user?._id) throw ctx.state.realm === 'web' ? UnauthorizedError.signedOut() : new UnauthorizedError();
    await handler(ctx, caller);
  };
}
