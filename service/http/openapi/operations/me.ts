// The OpenAPI operations of routes/me.ts.
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { meResponse } from '../../routes/me.schema.ts';
import { errors, json } from '../shared.ts';

export const mePaths = {
  '/api/v1/me': {
    get: {
      operationId: 'getMe',
      tags: ['Account'],
      summary: 'Check the API key',
      description: 'Verifies the key and returns the identity of the user it acts for.',
      responses: {
        200: {
          description: "The key's user.",
          content: json(meResponse, { id: '9b2e7c1a-4f3d-4e8b-a6c5-0d1f2e3a4b5c', email: 'ada@example.com' }),
        },
        ...errors({}),
      },
    },
  },
} satisfies ZodOpenApiPathsObject;
