// /healthz (the process is alive) and /readyz (every dependency answers). Unauthenticated, outside /api/v1.
import Router from '@koa/router';
import type { AppDeps, AppState } from '../../app.ts';

export function healthRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const [opensearch, mongodb, embedder] = await Promise.all([
      deps.search.problem(),
      deps.store.ping().then(
        () => null,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      ),
      deps.rag.embedderProblem(),
    ]);
    const components = {
      opensearch: opensearch ?? 'ok',
      mongodb: mongodb ?? 'ok',
      embedder: embedder ?? 'ok',
    };
    const failing = Object.entries(components).filter(([, state]) => state !== 'ok').map(([name]) => name);
    if (failing.length === 0) {
      ctx.body = { status: 'ready', components };
      return;
    }
    ctx.status = 503;
    ctx.body = { error: { code: 'server_error', message: `not ready: ${failing.join(', ')} unavailable` }, components };
  });
  return router;
}
