// What every operation of the OpenAPI description shares: the error envelope and the failures each kind of endpoint
// can give, JSON content with an example, path and header parameters, and field descriptions added to a request
// schema without touching the rules the route validates with.
import { z } from 'zod';
import type { ZodOpenApiResponseObject, ZodOpenApiResponsesObject } from 'zod-openapi';
import { INVALID_API_KEY_MESSAGE, type ErrorCode } from '../../errors.ts';

const ERROR_CODES = [
  'bad_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'payload_too_large',
  'rate_limited',
  'server_error',
] as const satisfies readonly ErrorCode[];

/** The one failure envelope (http/middleware/errors.ts answers it, whatever failed). */
export const errorEnvelope = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES).meta({ description: 'Machine-readable code, for programmatic handling' }),
      message: z.string().meta({ description: 'Human-readable text naming the field, limit or id concerned' }),
      tries_left: z.number().int().min(0).optional().meta({
        description:
          "Only on a wrong password (the web app's sign-in, or a signed-in person's password check): how many more failures this email may have from this address before sign-in pauses; 0: this failure started a pause of the `Retry-After` header's seconds. The same for an email with no account.",
      }),
    }),
  })
  .meta({ id: 'Error', description: 'Every failure: `{ "error": { "code", "message" } }`.' });

// Every code above appears in ErrorCode and the other way round (a new code must be published).
type Missing = Exclude<ErrorCode, (typeof ERROR_CODES)[number]>;
const everyCodePublished: [Missing] extends [never] ? true : Missing = true;
void everyCodePublished;

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 503;

/** The code each failure status carries: the one table (the web app's copy is generated from it, clients/web/). */
export const CODE_OF: Record<ErrorStatus, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'bad_request',
  429: 'rate_limited',
  500: 'server_error',
  503: 'server_error',
};

/** What a failure means when the operation does not say more, and a message the server really sends. */
const GENERIC: Record<ErrorStatus, { description: string; message: string }> = {
  400: {
    description: 'Invalid request: the message names the field and the rule.',
    message: 'name: must be 1–200 characters',
  },
  401: { description: 'The API key is missing, malformed, revoked or unknown.', message: INVALID_API_KEY_MESSAGE },
  403: {
    description: 'The key is valid but lacks access to the KB or action.',
    message: 'API key lacks access to knowledge base 3f0c9a52-6d1e-4b8f-9a7c-2e5d8b1f4c60',
  },
  404: {
    description: 'Not found, or not visible to the key.',
    message: 'knowledge base 3f0c9a52-6d1e-4b8f-9a7c-2e5d8b1f4c60 not found',
  },
  409: {
    description: 'The resource is in a state that does not allow this yet.',
    message: 'document 3f0c9a52-6d1e-4b8f-9a7c-2e5d8b1f4c60 is processing: wait until it is ready or failed',
  },
  413: {
    description: 'The request body exceeds KBQA_MAX_BODY_BYTES (10 MiB by default).',
    message: 'request body exceeds the limit of 10485760 bytes',
  },
  415: {
    description: 'The body is in a Content-Encoding the server does not decode (send identity, gzip, deflate or br).',
    message: 'body: send Content-Type: application/json',
  },
  429: {
    description: "Too many requests of this kind for now: wait the `Retry-After` header's seconds, then retry.",
    message: '200 documents of yours are waiting for ingestion (the limit is 200); retry in 5 s',
  },
  500: {
    description: 'Unexpected error; the message carries the request id to quote. Retry with backoff.',
    message: 'internal error (request id 6a1f0e9c-2b7d-4c1e-8f3a-5d9b0c7e2a41)',
  },
  503: {
    description:
      'A dependency (search engine, metadata store, embedder, answer model) is briefly unavailable, or the server is shutting down. Retry with backoff.',
    message: 'the search engine is unavailable; retry later',
  },
};

/** Every 429 names its wait (http/middleware/errors.ts sets it from the error). */
const RETRY_AFTER_HEADER = {
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    schema: { type: 'integer' as const, minimum: 1 },
    example: 1,
  },
};

function errorResponse(status: ErrorStatus, description?: string, message?: string): ZodOpenApiResponseObject {
  return {
    description: description ?? GENERIC[status].description,
    ...(status === 429 ? { headers: RETRY_AFTER_HEADER } : {}),
    content: {
      'application/json': {
        schema: errorEnvelope,
        example: { error: { code: CODE_OF[status], message: message ?? GENERIC[status].message } },
      },
    },
  };
}

/** A failure an operation documents: its own description (when it says more than the generic one) and message. */
export type ErrorDoc = true | string | { description: string; message: string };

/**
 * The failures of an authenticated operation: 401, 500 and 503 always (every /api/v1 request reads its key from the
 * store), plus those listed. With `body: true`, those of parsing a JSON body too: 400 (malformed JSON), 413, 415.
 */
export function errors(
  listed: Partial<Record<ErrorStatus, ErrorDoc>>,
  options: { body?: boolean } = {},
): ZodOpenApiResponsesObject {
  const all: Partial<Record<ErrorStatus, ErrorDoc>> = {
    ...(options.body ? { 400: true, 413: true, 415: true } : {}),
    401: true,
    ...listed,
    500: true,
    503: true,
  };
  const responses: ZodOpenApiResponsesObject = {};
  for (const status of Object.keys(all).map(Number).sort() as ErrorStatus[]) {
    const doc = all[status];
    if (doc === undefined) continue;
    responses[`${status}`] =
      doc === true
        ? errorResponse(status)
        : typeof doc === 'string'
          ? errorResponse(status, doc)
          : errorResponse(status, doc.description, doc.message);
  }
  return responses;
}

/** A JSON body (request or response) with one example. */
export function json(schema: z.ZodType, example: unknown) {
  return { 'application/json': { schema, example } };
}

/** `{id}` in a path: any string (an id that names nothing is a 404, never a 400). */
export const pathId = (description: string) =>
  z.object({ id: z.string().meta({ description, example: '3f0c9a52-6d1e-4b8f-9a7c-2e5d8b1f4c60' }) });

/** `Prefer: respond-async` (RFC 7240) on the ingestion operations. */
export const preferHeader = z.object({
  prefer: z.string().optional().meta({
    description:
      '`respond-async` answers 202 at once with the queued document (follow `GET /api/v1/documents/{id}`); without it the request waits until the document is searchable and answers 201.',
    example: 'respond-async',
  }),
});

/** What the spec says of one field: its description, an example, and (rarely) an override of the rendered schema. */
export type FieldDoc = z.GlobalMeta & { description: string };

/** Field descriptions (and examples) for the spec, added to a copy: the rules stay those the route validates with. */
export function describeFields<T extends z.ZodObject>(schema: T, docs: { [K in keyof T['shape']]?: FieldDoc }): T {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    const doc = (docs as Record<string, FieldDoc | undefined>)[name];
    shape[name] = doc ? field.meta(doc) : field;
  }
  return schema.extend(shape) as T;
}
