import type { Middleware } from 'koa';
import { UNMATCHED_ROUTE, WEB_ROUTE, type Metrics } from '../../metrics.ts';

/** What @koa/router leaves on the context: the layers whose path matched (route layers have methods). */
interface RoutedContext {
  matched?: Array<{ path: string; methods: string[] }>;
}

/**
 * The route template that answered (`/api/v1/documents/:id`), never the raw path: the label set stays bounded. Read
 * from the matched layers rather than `ctx._matchedRoute`, which a router's own middleware (authentication)
 * overwrites with its prefix when it answers before the route runs (a 401). A path no route matched is the web app's
 * (GET or HEAD outside /api/) or unmatched.
 */
export function routeLabel(ctx: { method: string; path: string } & RoutedContext): string {
  const routes = (ctx.matched ?? []).filter((layer) => layer.methods.length > 0);
  const route = routes.findLast((layer) => layer.methods.includes(ctx.method)) ?? routes.at(-1);
  if (route) return route.path;
  const web = (ctx.method === 'GET' || ctx.method === 'HEAD') && !ctx.path.startsWith('/api/');
  return web ? WEB_ROUTE : UNMATCHED_ROUTE;
}

/**
 * Counts and times every request once its response has been sent (so a streamed body counts its whole time), by
 * method, route template and final status. Outermost, so it sees the status the error envelope set.
 */
export function requestMetrics(metrics: Metrics): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    let recorded = false;
    const record = () => {
      if (recorded) return;
      recorded = true;
      metrics.observeRequest({
        method: ctx.method,
        route: routeLabel(ctx as typeof ctx & RoutedContext),
        status: ctx.status,
        seconds: (performance.now() - started) / 1000,
      });
    };
    ctx.res.once('finish', record);
    ctx.res.once('close', record);
    await next();
  };
}
