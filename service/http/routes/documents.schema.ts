import { z } from 'zod';
import { jsonObject, nameCharacterProblem, pageQuery, requiredString } from '../validation.ts';

export const ACCEPTED_EXTENSIONS = ['.txt', '.text', '.md', '.markdown'];

/** The rules every document's filename follows, whatever its kind: a name that shows safely wherever it is listed. */
export function filenameNameProblem(filename: string): string | null {
  if (filename.length < 1 || filename.length > 255) return 'must be 1–255 characters';
  if (/[\\/]/.test(filename)) return 'must not contain path separators';
  const characterProblem = nameCharacterProblem(filename);
  if (characterProblem) return characterProblem;
  if (filename.trim().length === 0) return 'must not be blank';
  // "." and ".." name a directory, not a file, wherever a filename ends up (a download, an export).
  if (filename === '.' || filename === '..') return 'must not be . or ..';
  return null;
}

/** A text or markdown document's filename (the Developer API and the web app's JSON ingest). */
export function filenameProblem(filename: string): string | null {
  const nameProblem = filenameNameProblem(filename);
  if (nameProblem) return nameProblem;
  const dot = filename.lastIndexOf('.');
  if (dot <= 0) return null;
  const extension = filename.slice(dot).toLowerCase();
  if (extension === '.pdf') return 'PDFs are ingested through the web app (Upload), not the API; v1 takes text and markdown';
  if (!ACCEPTED_EXTENSIONS.includes(extension)) {
    return `${extension} is not accepted; v1 takes text and markdown: ${ACCEPTED_EXTENSIONS.join(', ')} or no extension`;
  }
  return null;
}

const filenameField = () =>
  requiredString().superRefine((filename, context) => {
    const problem = filenameProblem(filename);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  });

const contentField = (maxContentBytes: number) =>
  requiredString().superRefine((content, context) => {
    if (content.trim().length === 0) context.addIssue({ code: 'custom', message: 'must not be empty' });
    else if (content.includes('\u0000')) context.addIssue({ code: 'custom', message: 'must be text (it contains NUL bytes)' });
    else if (Buffer.byteLength(content, 'utf8') > maxContentBytes) {
      context.addIssue({ code: 'custom', message: `must be at most ${maxContentBytes} bytes (UTF-8)` });
    }
  });

export function ingestDocumentBody(maxContentBytes: number) {
  return jsonObject({
    kb_id: requiredString().min(1, 'must not be empty'),
    filename: filenameField(),
    content: contentField(maxContentBytes),
  });
}

/** PUT /documents/{id}: the new text, and a new filename if it changes. */
export function replaceDocumentBody(maxContentBytes: number) {
  return jsonObject({
    filename: filenameField().optional(),
    content: contentField(maxContentBytes),
  });
}

/**
 * Whether a Prefer header (RFC 7240) asks for `respond-async`. Preferences are comma-separated tokens, each with
 * optional `=value` and `;parameters`; tokens are case-insensitive. Parsed by splitting, no pattern matching.
 */
export function prefersRespondAsync(header: string | string[] | undefined): boolean {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  return values.some((value) =>
    value.split(',').some((preference) => preference.split(';')[0].split('=')[0].trim().toLowerCase() === 'respond-async'),
  );
}

/**
 * ?include=status lists every document, queued, processing and failed ones too, each with its status, progress and
 * error (the web app's documents page).
 */
export const documentListQuery = pageQuery.extend({
  include: z.enum(['status'], { error: 'must be status' }).optional(),
});
