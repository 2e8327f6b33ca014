// The one place failures become the envelope { "error": { "code", "message" } }.
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import {
  ApiError,
  PayloadTooLargeError,
  RateLimitedError,
  UpstreamUnavailableError,
  WrongPasswordError,
  errorSummary,
} from '../../errors.ts';
import type { Metrics } from '../../metrics.ts';

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
    return new ApiError(
      405,
      'bad_request',
      `method not allowed; allowed: ${httpError.headers?.Allow ?? httpError.headers?.allow ?? 'see the API reference'}`,
    );
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

export interface FailedRequest {
  requestId: string | undefined;
  method: string;
  path: string;
  /** Which credential the request came with: messages addressed to a key read otherwise to a person. */
  realm?: 'api' | 'web';
}

/**
 * A failure as the client sees it (status, envelope, Retry-After) and as the log records it: the middleware's answer,
 * and the `error` event of a response already streaming (http/routes/query.ts).
 */
export function errorResponse(
  error: unknown,
  request: FailedRequest,
  options: { logger: Logger; maxBodyBytes: number; metrics?: Pick<Metrics, 'countUpstreamError'> },
): {
  status: number;
  body: { error: { code: string; message: string; tries_left?: number } };
  retryAfterSeconds?: number;
} {
  const { logger, metrics } = options;
  const { requestId } = request;
  const known = toApiError(error, options.maxBodyBytes);
  if (known) {
    if (known instanceof UpstreamUnavailableError) {
      metrics?.countUpstreamError(known.upstream);
      logger.warn({ requestId, upstream: known.upstream, error: loggableError(known, false) }, 'upstream unavailable');
    }
    const retryAfterSeconds =
      known instanceof RateLimitedError || known instanceof WrongPasswordError ? known.retryAfterSeconds : undefined;
    return {
      status: known.status,
      body: {
        error: {
          code: known.code,
          message: known.messageFor(request.realm),
          ...(known instanceof WrongPasswordError ? { tries_left: known.triesLeft } : {}),
        },
      },
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    };
  }
  // Unexpected: log what identifies it (never its bodies), reveal nothing but the id that finds the log line.
  logger.error(
    { requestId, error: loggableError(error, true), method: request.method, path: request.path },
    'unhandled error',
  );
  return {
    status: 500,
    body: { error: { code: 'server_error', message: `internal error (request id ${requestId ?? 'unknown'})` } },
  };
}

export function errorEnvelope(
  logger: Logger,
  maxBodyBytes: number,
  metrics?: Pick<Metrics, 'countUpstreamError'>,
): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const request = {
        requestId: ctx.state.requestId as string | undefined,
        method: ctx.method,
        path: ctx.path,
        realm: ctx.state.realm as FailedRequest['realm'],
      };
      const response = errorResponse(error, request, { logger, maxBodyBytes, metrics });
      if (response.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(response.retryAfterSeconds));
      ctx.status = response.status;
      ctx.body = response.body;
    }
  };
}
