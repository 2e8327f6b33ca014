import { z } from 'zod';
import { jsonObject, requiredString } from '../validation.ts';

export function queryBody(models: string[]) {
  return jsonObject({
    query: requiredString().trim().min(1, 'must be 1–4000 characters').max(4000, 'must be 1–4000 characters'),
    knowledge_base_ids: z
      .array(z.string({ error: 'must be an array of knowledge base id strings' }), { error: 'must be an array of knowledge base id strings' })
      .min(1, 'must not be empty (omit it to search every knowledge base you can reach)')
      .max(100, 'must list at most 100 knowledge bases')
      .optional(),
    model: z
      .string({ error: 'must be a string' })
      .refine((model) => models.includes(model), { message: `must be one of: ${models.join(', ')}` })
      .optional(),
    max_results: z
      .number({ error: 'must be an integer from 1 to 50' })
      .int('must be an integer from 1 to 50')
      .min(1, 'must be an integer from 1 to 50')
      .max(50, 'must be an integer from 1 to 50')
      .default(8),
    include_chunks: z.boolean({ error: 'must be true or false' }).default(false),
  });
}
