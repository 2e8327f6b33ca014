// The one place failures become the envelope { "error": { "code", "message" } }.
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { ApiError, BadRequestError, PayloadTooLargeError, RateLimitedError, UpstreamUnavailableError, errorSummary } from '../../errors.ts';
import { InvalidCursorError } from '../../store/pagination.ts';

interface HttpishError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
  message?: string;
  headers?: Record<string, string>;
}

function toApiError(error: unknown, maxBodyBytes: number): ApiError | null {
  if (error instanceof ApiError) return error;
  // A ?cursor= that does not decode is the caller's mistake, not ours.
  if (error instanceof InvalidCursorError) return new BadRequestError(error.message);
  const httpError = error as HttpishError;
  const status = httpError?.status ?? httpError?.statusCode;
  if (status === 413 || httpError?.type === 'entity.too.large') return new PayloadTooLargeError(maxBodyBytes);
  if (httpError?.type === 'entity.parse.failed' || (status === 400 && /json/i.test(httpError?.message ?? ''))) {
    return new ApiError(400, 'bad_request', 'body: malformed JSON');
  }
  // co-body's parser (@hapi/bourne) rejects "__proto__" keys with a status-400 SyntaxError not mentioning JSON.
  if (status === 400 && error instanceof SyntaxError) return new ApiError(400, 'bad_request', `body: ${error.message}`);
  // A body that does not decode per its Content-Encoding: zlib (Z_DATA_ERROR, Z_BUF_ERROR, …) and brotli (ERR__…) errors.
  if (typeof (error as { code?: unknown })?.code === 'string' && /^(Z_|ERR__)/.test((error as { code: string }).code)) {
    return new ApiError(400, 'bad_request', 'body: does not decode per its Content-Encoding');
  }
  if (status === 405) {
    return new ApiError(405, 'bad_request', `method not allowed; allowed: ${httpError.headers?.Allow ?? httpError.headers?.allow ?? 'see the API reference'}`);
  }
  if (status === 415) return new ApiError(415, 'bad_request', 'body: send Content-Type: application/json');
  if (typeof status === 'number' && status >= 400 && status < 500 && httpError.expose) {
    return new ApiError(status, 'bad_request', httpError.message ?? 'bad request');
  }
  return null;
}

/** Fields a cause built by the layer that caught a failure may carry (OpenSearchFailure, mongoFailure). */
const CAUSE_FIELDS = ['name', 'status', 'type', 'reason', 'code', 'codeName', 'message'];

function pick(source: object, fields: string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const field of fields) {
    const value = (source as Record<string, unknown>)[field];
    if (typeof value === 'string' || typeof value === 'number') picked[field] = value;
  }
  return picked;
}

/**
 * An error as a log line may show it: its summary (name, message, code, status), the OpenSearch type and reason or
 * the Mongo codeName it names, its cause reduced to the same fields, and for the unexpected its stack. Never the
 * error object itself: client libraries hang request and response bodies on theirs (question text, vectors,
 * document text, the records being written). Logged under `error`, not `err`: pino's err serializer would fold the
 * cause into the message and drop its fields.
 */
function loggableError(error: unknown, withStack: boolean): Record<string, unknown> {
  const logged: Record<string, unknown> = { ...errorSummary(error) };
  if (!(error instanceof Error)) return logged;
  Object.assign(logged, pick(error, ['type', 'reason', 'codeName']));
  const cause = error.cause;
  if (cause instanceof Error) logged.cause = { ...errorSummary(cause), ...pick(cause, ['type', 'reason', 'codeName']) };
  else if (typeof cause === 'object' && cause !== null) logged.cause = pick(cause, CAUSE_FIELDS);
  if (withStack && error.stack) logged.stack = error.stack;
  return logged;
}

export function errorEnvelope(logger: Logger, maxBodyBytes: number): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const known = toApiError(error, maxBodyBytes);
      const requestId = ctx.state.requestId as string | undefined;
      if (known) {
        if (known instanceof UpstreamUnavailableError) {
          logger.warn({ requestId, upstream: known.upstream, error: loggableError(known, false) }, 'upstream unavailable');
        }
        if (known instanceof RateLimitedError) ctx.set('Retry-After', String(known.retryAfterSeconds));
        ctx.status = known.status;
        ctx.body = { error: { code: known.code, message: known.message } };
        return;
      }
      // Unexpected: log what identifies it (never its bodies), reveal nothing but the id that finds the log line.
      logger.error({ requestId, error: loggableError(error, true), method: ctx.method, path: ctx.path }, 'unhandled error');
      ctx.status = 500;
      ctx.body = { error: { code: 'server_error', message: `internal error (request id ${requestId ?? 'unknown'})` } };
    }
  };
}
