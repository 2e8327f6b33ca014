// The OpenAPI operations of routes/query.ts.
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { z } from 'zod';
import {
  queryBody,
  queryResponse,
  queryStreamDeltaEvent,
  queryStreamRetrievalEvent,
} from '../../routes/query.schema.ts';
import { describeFields, errors, json } from '../shared.ts';

const KB_ID = '3f0c9a52-6d1e-4b8f-9a7c-2e5d8b1f4c60';

/** The per-user bound on questions (commands/queryAdmission.ts), shared with POST /search. */
export const QUESTIONS_BUSY = {
  description:
    "The user already has KBQA_QUERY_CONCURRENCY_PER_USER questions (queries and searches, all their keys and sessions) being answered and KBQA_QUERY_QUEUE_PER_USER waiting, or this one waited KBQA_QUERY_WAIT_MS for its turn, or the user is over KBQA_QUERY_RATE_PER_MINUTE: retry after the `Retry-After` header's seconds. A streamed answer is refused so before its first event.",
  message:
    '4 questions of yours are being answered and 8 are waiting (the limits are 4 at once and 8 waiting); retry in 1 s',
};

export const QUERY_FIELD_DOCS = {
  query: {
    description: 'The natural-language question, 1–4000 characters',
    example: 'When do new starters get their laptop?',
  },
  knowledge_base_ids: {
    description:
      'Restricts retrieval to these KBs (1–100, at most KBQA_MAX_SEARCHED_KNOWLEDGE_BASES, each reachable by the key; a KB shared with the caller and not yet accepted is searched only when named here). Omitted: the default scope, every KB the key can reach except shares not yet accepted (POST /api/v1/knowledge-bases/{id}/membership/accept); more of them than KBQA_MAX_SEARCHED_KNOWLEDGE_BASES (100 by default) is a 400 asking to name them',
    example: [KB_ID],
  },
  model: {
    description: 'Answer model: one of `GET /api/v1/models` (`default_model` when omitted)',
    example: 'kbqa-extractive',
  },
  max_results: { description: 'Maximum retrieved chunks used to ground the answer, 1–50', example: 8 },
  include_chunks: {
    description: 'When true, the retrieved chunks come back in `chunks` (for debugging retrieval)',
    example: false,
  },
  stream: {
    description:
      'When true (or with `Accept: text/event-stream`) the answer is streamed as Server-Sent Events (see the 200 response)',
    example: false,
  },
  filters: {
    description: 'Only passages of documents whose metadata passes this filter; see `MetadataFilter`',
    example: { team: 'people' },
  },
};

/** A retrieved chunk as the API shows it (include_chunks, the stream's `retrieval`, POST /search). */
export const EXAMPLE_CHUNK = {
  id: '5a7b9c1d-2e3f-4a5b-8c6d-7e8f9a0b1c2d:1:0',
  document_id: '5a7b9c1d-2e3f-4a5b-8c6d-7e8f9a0b1c2d',
  knowledge_base_id: KB_ID,
  filename: 'onboarding.md',
  title: 'onboarding',
  heading_path: ['Onboarding'],
  chunk_index: 0,
  page_start: null,
  page_end: null,
  text: 'New starters get their laptop on their first day.',
  score: 0.0164,
  similarity: 0.83,
  bm25_rank: 1,
  vector_rank: 1,
};

export const CITATION = {
  document_id: '5a7b9c1d-2e3f-4a5b-8c6d-7e8f9a0b1c2d',
  title: 'onboarding',
  snippet: 'New starters get their laptop on their first day.',
  similarity: 0.83,
};
const ANSWER = {
  answer: 'New starters get their laptop on their first day [1].',
  citations: [CITATION],
  model: 'kbqa-extractive',
  knowledge_base_ids: [KB_ID],
};

export const STREAM_DESCRIPTION = [
  'With `"stream": true` or `Accept: text/event-stream`: Server-Sent Events, each `event: <name>` and one line of JSON `data:`.',
  '`retrieval` (once, first; data: `QueryStreamRetrieval`), then `delta` (one or more; data: `QueryStreamDelta`, its `text` appended in order',
  'is the answer), then `done` (data: `QueryResponse`, exactly what the JSON answer would be) — or, if something fails after the stream has',
  'started, `error` (data: the `Error` envelope) and the stream ends. A failure before the first event (validation, access, an outage)',
  'is an ordinary JSON error response with its status. Comment lines (`: …`) carry timings and keep-alives; parsers skip them.',
].join(' ');

/**
 * One event of the stream, as an event-stream parser gives it: its name and its data, a line of JSON whose schema is
 * named (`contentSchema`). (OpenAPI 3.1 has no word for a sequence of events; this is how 3.2's `itemSchema` and
 * tools such as Schemathesis read the schema of a text/event-stream response: the schema of each event.)
 */
export const eventOf = (name: string, dataSchema: string, description: string) =>
  z
    .looseObject({
      event: z.literal(name),
      data: z.string().meta({
        description: `JSON: ${dataSchema}`,
        contentMediaType: 'application/json',
        contentSchema: { $ref: `#/components/schemas/${dataSchema}` },
      }),
    })
    .meta({ title: name, description });

const streamEvent = z
  .union([
    eventOf('retrieval', 'QueryStreamRetrieval', 'First, once: the passages the answer is grounded on.'),
    eventOf('delta', 'QueryStreamDelta', 'A piece of the answer, and the citations it introduces.'),
    eventOf('done', 'QueryResponse', 'Last: the whole answer, as the JSON response would be.'),
    eventOf('error', 'Error', 'Instead of `done` when something fails after the stream has started; the stream ends.'),
  ])
  .meta({ description: STREAM_DESCRIPTION });

const STREAM_EXAMPLE = [
  `event: retrieval\ndata: ${JSON.stringify({ passages: [{ number: 1, ...EXAMPLE_CHUNK }] })}\n`,
  `event: delta\ndata: ${JSON.stringify({ text: 'New starters get their laptop on their first day [1].', citations: [CITATION] })}\n`,
  ': server-timing embed;dur=4.2, search;dur=11.8, answer;dur=3.1\n',
  `event: done\ndata: ${JSON.stringify(ANSWER)}\n`,
].join('\n');

export const queryPaths = {
  '/api/v1/query': {
    post: {
      operationId: 'query',
      tags: ['Query'],
      summary: 'Ask a question',
      description:
        'Answers a question from the KBs the key reaches. Retrieval is hybrid (BM25 and dense vectors fused by reciprocal rank fusion); passages below the relevance floor are dropped; the answer model writes an answer whose `[n]` markers cite `citations[n-1]`. When nothing relevant is found (or the key reaches no KB) the answer says so and `citations` is empty. With `"stream": true` (or `Accept: text/event-stream`) the answer comes as Server-Sent Events while it is written.',
      requestBody: {
        required: true,
        content: json(describeFields(queryBody([]), QUERY_FIELD_DOCS), {
          query: 'When do new starters get their laptop?',
          knowledge_base_ids: [KB_ID],
        }),
      },
      responses: {
        200: {
          description: 'The answer and its citations.',
          headers: {
            'Server-Timing': {
              description:
                'Time spent embedding the question, searching and answering, in ms (for operators; not part of the JSON contract)',
              schema: { type: 'string' as const },
              example: 'embed;dur=4.2, search;dur=11.8, answer;dur=3.1',
            },
          },
          content: {
            ...json(queryResponse, ANSWER),
            'text/event-stream': { schema: streamEvent, example: STREAM_EXAMPLE },
          },
        },
        ...errors(
          {
            400: {
              description:
                'A body that is not valid: the message names the field (an unknown `model` lists those offered); also `knowledge_base_ids` omitted while more KBs are in the default scope than one question searches.',
              message: 'model: must be one of: kbqa-extractive',
            },
            403: {
              description: 'A KB in `knowledge_base_ids` is not reachable by the key (or does not exist).',
              message: `API key lacks access to knowledge base ${KB_ID}`,
            },
            429: QUESTIONS_BUSY,
            503: {
              description:
                'The search engine, the embedder or the answer model is briefly unavailable. Retry with backoff.',
              message: 'the answer model is unavailable; retry later',
            },
          },
          { body: true },
        ),
      },
    },
  },
} satisfies ZodOpenApiPathsObject;
