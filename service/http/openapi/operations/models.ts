// The OpenAPI operations of routes/models.ts.
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { modelsResponse } from '../../routes/models.schema.ts';
import { errors, json } from '../shared.ts';

export const modelPaths = {
  '/api/v1/models': {
    get: {
      operationId: 'listModels',
      tags: ['Query'],
      summary: 'List answer models',
      description:
        'The answer models a query may name in `model`, and the default used when it names none. `kbqa-extractive` (always offered) answers with sentences quoted from the retrieved passages; others are those of the OpenAI-compatible endpoint the server is configured with.',
      responses: {
        200: {
          description: 'The models offered.',
          content: json(modelsResponse, { models: ['gpt-4o-mini', 'kbqa-extractive'], default_model: 'gpt-4o-mini' }),
        },
        ...errors({}),
      },
    },
  },
} satisfies ZodOpenApiPathsObject;
