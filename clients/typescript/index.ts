// A typed client of the kbqa Developer API: openapi-fetch over the types openapi-typescript generates from the
// service's OpenAPI description (schema.d.ts, `npm run client:generate`). Paths, parameters, bodies and answers are
// checked by the compiler against the spec the server publishes at /api/v1/openapi.json.
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './schema.d.ts';

export type { components, operations, paths };

type Schemas = components['schemas'];
export type Me = Schemas['Me'];
export type KnowledgeBase = Schemas['KnowledgeBase'];
export type KnowledgeBaseListItem = Schemas['KnowledgeBaseListItem'];
export type CreatedKnowledgeBase = Schemas['CreatedKnowledgeBase'];
export type Membership = Schemas['Membership'];
export type Document = Schemas['Document'];
export type DocumentListItem = Schemas['DocumentListItem'];
export type IngestedDocument = Schemas['IngestedDocument'];
export type QueryResponse = Schemas['QueryResponse'];
export type Citation = Schemas['Citation'];
export type RetrievedChunk = Schemas['RetrievedChunk'];
export type ApiErrorBody = Schemas['Error'];
export type Conversation = Schemas['Conversation'];
export type ConversationMessage = Schemas['ConversationMessage'];
export type AnswerMessage = Schemas['AnswerMessage'];
export type TurnResponse = Schemas['TurnResponse'];
export type Feedback = Schemas['Feedback'];
export type QueryRequest = paths['/api/v1/query']['post']['requestBody']['content']['application/json'];

/** The client: `GET`, `POST`, `PUT`, `DELETE` on the spec's paths, answering `{ data }` or `{ error }` with the `response`. */
export type KbqaClient = Client<paths, 'application/json'>;

/**
 * A client for the service at `baseUrl` (e.g. `https://kbqa.example.com`, without `/api/v1`) acting with `apiKey`
 * (`kbqa_live_…`). `options` are openapi-fetch's (a custom `fetch`, headers, middleware …).
 */
export function createKbqaClient(
  baseUrl: string,
  apiKey: string,
  options: Omit<ClientOptions, 'baseUrl'> = {},
): KbqaClient {
  const headers = new Headers(options.headers as HeadersInit | undefined);
  headers.set('Authorization', `Bearer ${apiKey}`);
  return createClient<paths, 'application/json'>({ ...options, baseUrl: baseUrl.replace(/\/$/, ''), headers });
}

/** A failure answered by the API, with the envelope's code and message. */
export class KbqaApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(`${status} ${code}: ${message}`);
    this.name = 'KbqaApiError';
    this.status = status;
    this.code = code;
  }
}

/**
 * The data of a call that must succeed, or a KbqaApiError: `const me = dataOf(await client.GET('/api/v1/me'))`.
 * Non-JSON failures (a proxy's HTML page) keep the HTTP status and say what came back.
 */
export function dataOf<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error === undefined && result.data !== undefined) return result.data;
  const envelope = (result.error as Partial<ApiErrorBody> | undefined)?.error;
  throw new KbqaApiError(
    result.response.status,
    envelope?.code ?? 'unknown',
    envelope?.message ?? result.response.statusText,
  );
}
