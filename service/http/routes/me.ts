// /api/v1/me: who the key acts as.
import Router from '@koa/router';
import type { AppState } from '../../app.ts';
import { presentMe } from '../../presenters/users.ts';

export function meRoutes(): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/me', (ctx) => {
    ctx.body = presentMe(ctx.state.caller.user);
  });
  return router;
}
