import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { authenticateApiKey } from '../../commands/apiKeys.ts';
import type { Store } from '../../store/index.ts';

/** Resolves `Authorization: Bearer kbqa_live_…` to the caller, or 401s. Runs on every /api/v1 route. */
export function authenticate(store: Store, logger: Logger): Middleware {
  return async (ctx, next) => {
    ctx.state.caller = await authenticateApiKey(store, ctx.get('authorization'), logger);
    await next();
  };
}
