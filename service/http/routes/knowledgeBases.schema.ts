import { z } from 'zod';
import { jsonObject, optionalString, requiredString } from '../validation.ts';

export const createKnowledgeBaseBody = jsonObject({
  name: requiredString()
    .trim()
    .min(1, 'must be 1–200 characters')
    .max(200, 'must be 1–200 characters'),
  description: optionalString().pipe(z.string().max(2000, 'must be at most 2000 characters').optional()),
});

export const deleteKnowledgeBaseQuery = z.object({
  permanent: z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
});
