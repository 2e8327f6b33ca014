import { z } from 'zod';
import { jsonObject, nameCharacterProblem, optionalString, reportProblem, requiredString, textCharacterProblem } from '../validation.ts';

export const createKnowledgeBaseBody = jsonObject({
  name: requiredString()
    .trim()
    .min(1, 'must be 1–200 characters')
    .max(200, 'must be 1–200 characters')
    .superRefine(reportProblem(nameCharacterProblem)),
  // Free text: newlines, tabs and format characters are fine; NUL and other control characters are not.
  description: optionalString().pipe(
    z.string().max(2000, 'must be at most 2000 characters').superRefine(reportProblem(textCharacterProblem)).optional(),
  ),
});

export const deleteKnowledgeBaseQuery = z.object({
  permanent: z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
});
