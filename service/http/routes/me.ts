// /api/v1/me: who the key acts as. Its OpenAPI operation: http/openapi/operations/me.ts.
import { authenticated, newRouter, type AppState } from '../context.ts';
import type Router from '@koa/router';
import { presentMe } from '../../presenters/users.ts';

export function meRoutes(): Router<AppState> {
  const router = newRouter();
  router.get(
    '/me',
    authenticated((ctx, caller) => {
      ctx.body = presentMe(caller.user);
    }),
  );
  return router;
}
