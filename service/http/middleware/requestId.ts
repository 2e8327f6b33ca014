import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Every response carries x-request-id; a caller's own id is kept when it is safe to echo and log. */
export function requestId(): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    ctx.state.requestId = SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.set('x-request-id', ctx.state.requestId);
    await next();
  };
}
