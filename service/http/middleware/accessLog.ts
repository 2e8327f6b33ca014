import type { Middleware } from 'koa';
import type { Logger } from 'pino';

/** One line per request. Headers are never logged: Authorization carries the API key. */
export function accessLog(logger: Logger): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      logger.info(
        {
          requestId: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
          userId: ctx.state.caller?.user?._id,
        },
        'request',
      );
    }
  };
}
