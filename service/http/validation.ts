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
  cursor: z
    .string({ error: 'must be one cursor string' })
    .min(1, 'must not be empty')
    .max(512, 'is not a cursor this API issued')
    .optional(),
});

/**
 * Names (KB names, filenames) are shown in listings and citations, so they must not hide or reorder what they say:
 * no control characters (Cc), no format characters (Cf: U+202E RIGHT-TO-LEFT OVERRIDE flips how a name reads,
 * U+200B ZERO WIDTH SPACE makes two different names look alike), no line or paragraph separators (U+2028, U+2029).
 * ZWNJ (U+200C) and ZWJ (U+200D) are allowed: Persian and Indic scripts and emoji sequences need them.
 * One character class behind a one-character lookahead: linear in the name's length.
 */
const NAME_FORBIDDEN_CHARACTER = /(?![\u200C\u200D])[\p{Cc}\p{Cf}\u2028\u2029]/u;

/** Free text (a description) keeps newlines and tabs, and format characters; no other control character (NUL…). */
const TEXT_FORBIDDEN_CHARACTER = /(?![\t\n\r])\p{Cc}/u;

function codePointLabel(character: string): string {
  return `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Null when every character may appear in a name; else the rule broken, naming the first offending character. */
export function nameCharacterProblem(name: string): string | null {
  const found = NAME_FORBIDDEN_CHARACTER.exec(name);
  return found
    ? `must not contain control characters, format characters or line separators (found ${codePointLabel(found[0])})`
    : null;
}

/** Null when every character may appear in free text; else the rule broken, naming the first offending character. */
export function textCharacterProblem(text: string): string | null {
  const found = TEXT_FORBIDDEN_CHARACTER.exec(text);
  return found
    ? `must not contain control characters other than newline, carriage return and tab (found ${codePointLabel(found[0])})`
    : null;
}

/** A superRefine from a problem function (null = fine, else the rule broken): `.superRefine(reportProblem(nameCharacterProblem))`. */
export const reportProblem =
  (problem: (value: string) => string | null) => (value: string, context: z.RefinementCtx<string>) => {
    const found = problem(value);
    if (found) context.addIssue({ code: 'custom', message: found });
  };
