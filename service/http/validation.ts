// Validation at the edge, once. Messages name the field and the rule: "name: must be 1–200 characters".
import { z } from 'zod';
import { BadRequestError } from '../errors.ts';

export function parseInput<S extends z.ZodType>(schema: S, input: unknown, where: 'body' | 'query'): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue.path.length > 0 ? issue.path.join('.') : where;
  throw new BadRequestError(`${field}: ${issue.message}`);
}

/** A required string; wrong types (numbers, objects such as {"$gt": ""}, arrays, null) are rejected by name. */
export const requiredString = () =>
  z.string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') });

export const optionalString = () => z.string({ error: 'must be a string' }).optional();

export const jsonObject = <T extends z.ZodRawShape>(shape: T) => z.object(shape, { error: 'must be a JSON object' });

/** ?limit=&cursor= paging shared by every list endpoint. Without limit the whole list comes back. */
export const pageQuery = z.object({
  limit: z
    .string({ error: 'must be one integer from 1 to 1000' })
    .regex(/^\d+$/, 'must be an integer from 1 to 1000')
    .transform(Number)
    .pipe(z.number().int().min(1, 'must be an integer from 1 to 1000').max(1000, 'must be an integer from 1 to 1000'))
    .optional(),
  cursor: z.string({ error: 'must be one cursor string' }).min(1, 'must not be empty').max(512, 'is not a cursor this API issued').optional(),
});
