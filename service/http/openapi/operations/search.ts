// The OpenAPI operations of routes/search.ts.
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { searchBody, searchResponse } from '../../routes/search.schema.ts';
import { describeFields, errors, json } from '../shared.ts';
import { EXAMPLE_CHUNK, QUERY_FIELD_DOCS, QUESTIONS_BUSY } from './query.ts';

const KB_ID = '3f0c9a52-6d1e-4b8f-9a7c-2e5d8b1f4c60';

export const searchPaths = {
  '/api/v1/search': {
    post: {
      operationId: 'search',
      tags: ['Query'],
      summary: 'Search passages',
      description:
        'Ranked chunks from the KBs the key reaches, without an answer: hybrid (the ranking `POST /api/v1/query` grounds its answers on), BM25 only or dense only, optionally filtered by document metadata. No relevance floor: the best `max_results` chunks come back.',
      requestBody: {
        required: true,
        content: json(
          describeFields(searchBody, {
            query: { description: 'The search text, 1–4000 characters', example: 'laptop first day' },
            knowledge_base_ids: QUERY_FIELD_DOCS.knowledge_base_ids,
            max_results: { description: 'How many chunks to return, 1–100', example: 10 },
            filters: QUERY_FIELD_DOCS.filters,
          }),
          { query: 'laptop first day', max_results: 5, filters: { team: 'people' } },
        ),
      },
      responses: {
        200: {
          description: 'The chunks, best first.',
          content: json(searchResponse, {
            results: [EXAMPLE_CHUNK],
            knowledge_base_ids: [KB_ID],
          }),
        },
        ...errors(
          {
            400: {
              description: 'A body that is not valid: the message names the field and the rule.',
              message: 'mode: must be one of: hybrid, bm25, dense',
            },
            403: {
              description: 'A KB in `knowledge_base_ids` is not reachable by the key (or does not exist).',
              message: `API key lacks access to knowledge base ${KB_ID}`,
            },
            429: QUESTIONS_BUSY,
          },
          { body: true },
        ),
      },
    },
  },
} satisfies ZodOpenApiPathsObject;
