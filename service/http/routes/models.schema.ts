import { z } from 'zod';

// ── Responses ─────────────────────────────────────────────────────────────────────────────────────────────────────

export const modelsResponse = z
  .object({
    models: z
      .array(z.string())
      .meta({ description: 'Answer models a query may name in `model`', example: ['kbqa-extractive'] }),
    default_model: z
      .string()
      .meta({ description: 'The model used when a query names none', example: 'kbqa-extractive' }),
  })
  .meta({ id: 'Models', description: 'The answer models offered by this server.' });
