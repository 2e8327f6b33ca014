import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { authenticateApiKey } from '../../commands/apiKeys.ts';
import { UnauthorizedError } from '../../errors.ts';
import type { Store } from '../../store/index.ts';

/** Authorization headers as sent: Node keeps the first and silently drops the rest, so only rawHeaders can tell. */
function authorizationHeaderCount(rawHeaders: string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    if (rawHeaders[index].toLowerCase() === 'authorization') count += 1;
  }
  return count;
}

/** Resolves `Authorization: Bearer kbqa_live_…` to the caller, or 401s. Runs on every /api/v1 route. */
export function authenticate(store: Store, logger: Logger): Middleware {
  return async (ctx, next) => {
    // Two credentials are ambiguous (a proxy may have added one, or read the other): refuse rather than pick one.
    if (authorizationHeaderCount(ctx.req.rawHeaders) > 1) throw new UnauthorizedError();
    ctx.state.caller = await authenticateApiKey(store, ctx.get('authorization'), logger);
    await next();
  };
}
