// The OpenAPI 3.1 description of the Developer API, generated from the zod schemas the routes validate with and the
// presenters are typed against (http/routes/*.schema.ts): one source of truth for the server, the spec, the
// reference at /docs and the TypeScript client (clients/typescript/, `npm run client:generate`).
//
// Built with zod-openapi's createDocument rather than zod 4's own z.toJSONSchema: both render the same JSON Schema
// (zod-openapi calls zod's), but zod-openapi also turns request params, bodies and responses into an OpenAPI
// document, keeps input and output renderings apart (a request body accepts unknown keys, a response declares
// additionalProperties: false), and registers schemas with an `id` as components. With z.toJSONSchema the document
// around the schemas, and the $refs between them, would be ours to write.
//
// Each route file's operations are in operations/<the same name>.ts (routes/documents.ts → operations/documents.ts).
// A route added without its operation fails test/openapi.test.ts (every route of the API router is in the spec and
// the other way round); a response that differs from its schema fails every test that provokes it
// (test/helpers/openapiCheck.ts).
import { createDocument, type ZodOpenApiPathsObject } from 'zod-openapi';
import { conversationPaths } from './operations/conversations.ts';
import { documentPaths } from './operations/documents.ts';
import { knowledgeBaseMembershipPaths } from './operations/knowledgeBaseMembership.ts';
import { knowledgeBasePaths } from './operations/knowledgeBases.ts';
import { mePaths } from './operations/me.ts';
import { modelPaths } from './operations/models.ts';
import { queryPaths } from './operations/query.ts';
import { searchPaths } from './operations/search.ts';
import { queryStreamDeltaEvent, queryStreamRetrievalEvent } from '../routes/query.schema.ts';
import { errorEnvelope } from './shared.ts';

/** Every operation, in the order the reference shows them. */
const PATHS: ZodOpenApiPathsObject[] = [
  mePaths,
  knowledgeBasePaths,
  knowledgeBaseMembershipPaths,
  documentPaths,
  queryPaths,
  conversationPaths,
  searchPaths,
  modelPaths,
];

const DESCRIPTION = `
kbqa stores text and markdown documents in knowledge bases (KBs), splits and embeds them, and answers questions over
the KBs a caller can reach, with citations. Retrieval is hybrid: BM25 and dense vectors fused by reciprocal rank fusion.

Every endpoint lives under \`/api/v1\`, takes and returns JSON, and needs an API key.

## Authentication

Send \`Authorization: Bearer kbqa_live_…\`. A key is created in the web app under **Settings → API Keys** (its full
value is shown once) and acts for its user: it reads the KBs the user owns, those shared with them, their
organisation's and the library; it writes documents and deletes KBs only in KBs the user owns. Revoking a key takes
effect on the next request. A missing, malformed or revoked key is \`401 unauthorized\`.

## Errors

Every failure is \`{ "error": { "code", "message" } }\`; the message names the field, limit or id concerned.

| status | code | when |
|---|---|---|
| 400 | \`bad_request\` | malformed JSON, a missing or invalid field or parameter |
| 401 | \`unauthorized\` | missing, malformed or invalid API key |
| 403 | \`forbidden\` | valid key, but no access to the KB or action (writing to a KB the user does not own) |
| 404 | \`not_found\` | the resource does not exist or is not visible to the key; also any path that is no endpoint |
| 405 | \`bad_request\` | a method the path does not take (the message lists those it does) |
| 409 | \`conflict\` | a document still ingesting cannot be replaced or retried yet |
| 413 | \`payload_too_large\` | the body exceeds \`KBQA_MAX_BODY_BYTES\` (10 MiB by default) |
| 415 | \`bad_request\` | a body in a \`Content-Encoding\` the server does not decode |
| 500 | \`server_error\` | unexpected; the message carries the request id |
| 503 | \`server_error\` | the search engine, metadata store, embedder or answer model is briefly unavailable, or the server is stopping |

500 and 503 are retried with backoff. Every response carries \`x-request-id\` (yours, when you send a safe one).

## Lists

\`GET\` lists return everything at once by default. With \`?limit=\` (1–1000) they return pages and a
\`next_cursor\`, to pass as \`?cursor=\` until it is \`null\`.

## Ingestion

\`POST /api/v1/documents\` waits until the document is searchable and answers 201. With \`Prefer: respond-async\` it
answers 202 at once; follow \`GET /api/v1/documents/{id}\` until \`status\` is \`ready\` or \`failed\`. Queued
ingestions survive restarts and outages (retried with backoff).

## Health

\`GET /healthz\` (the process is up) and \`GET /readyz\` (every dependency answers; 503 naming those that do not) are
served outside \`/api/v1\`, without a key, for load balancers and orchestrators; they are not part of this API.
`.trim();

export function buildOpenApiDocument() {
  return createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'kbqa Developer API',
        version: '1.0.0',
        summary: 'Knowledge bases, documents and cited answers over them.',
        description: DESCRIPTION,
      },
      // Relative: the API is described wherever it is served (openapi.json and /docs come from the same origin).
      servers: [{ url: '/', description: 'This server' }],
      security: [{ apiKey: [] }],
      tags: [
        { name: 'Account', description: 'The identity behind an API key.' },
        { name: 'Knowledge bases', description: 'Containers of documents, owned by a user and shared read-only.' },
        {
          name: 'Documents',
          description: 'Text and markdown, split into chunks and embedded; ingested synchronously or queued.',
        },
        { name: 'Query', description: 'Cited answers, ranked passages, and the models that answer.' },
        { name: 'Conversations', description: 'Follow-up questions that keep their context, and feedback on answers.' },
      ],
      paths: Object.assign({}, ...PATHS) as ZodOpenApiPathsObject,
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'kbqa_live_…',
            description:
              'A personal API key from the web app (Settings → API Keys): `Authorization: Bearer kbqa_live_…`.',
          },
        },
        // The streamed answer's event data, named by the text/event-stream response of POST /api/v1/query.
        schemas: {
          Error: errorEnvelope,
          QueryStreamRetrieval: queryStreamRetrievalEvent,
          QueryStreamDelta: queryStreamDeltaEvent,
        },
      },
    },
    {
      // The formats say it: zod's own patterns for uuid and date-time only make the description harder to read.
      override: ({ jsonSchema }) => {
        if (jsonSchema.format === 'uuid' || jsonSchema.format === 'date-time') delete jsonSchema.pattern;
        // zod gives every integer the safe-integer bounds; they say nothing a reader needs.
        if (jsonSchema.type === 'integer' && jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      },
    },
  );
}

export type OpenApiDocument = ReturnType<typeof buildOpenApiDocument>;

let built: { document: OpenApiDocument; json: string } | null = null;

/** The document and its JSON (two-space indented, newline-terminated: the committed clients/typescript/openapi.json). */
export function openApiDocument(): { document: OpenApiDocument; json: string } {
  if (built === null) {
    const document = buildOpenApiDocument();
    built = { document, json: `${JSON.stringify(document, null, 2)}\n` };
  }
  return built;
}
