import { z } from 'zod';
import { FILE_KINDS } from '../../extraction/fileKinds.ts';
import { jsonObject, nameCharacterProblem, pageQuery, requiredString } from '../validation.ts';
import { documentMetadata, documentMetadataOutput } from './metadata.schema.ts';
import { nextCursor, resourceId, timestamp } from './common.schema.ts';

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
  if (extension === '.pdf')
    return 'PDFs are ingested through the web app (Upload), not the API; v1 takes text and markdown';
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
    else if (content.includes('\u0000'))
      context.addIssue({ code: 'custom', message: 'must be text (it contains NUL bytes)' });
    else if (Buffer.byteLength(content, 'utf8') > maxContentBytes) {
      context.addIssue({ code: 'custom', message: `must be at most ${maxContentBytes} bytes (UTF-8)` });
    }
  });

export function ingestDocumentBody(maxContentBytes: number) {
  return jsonObject({
    kb_id: requiredString().min(1, 'must not be empty'),
    filename: filenameField(),
    content: contentField(maxContentBytes),
    metadata: documentMetadata.optional(),
  });
}

/** PUT /documents/{id}: the new text, and a new filename if it changes. */
export function replaceDocumentBody(maxContentBytes: number) {
  return jsonObject({
    filename: filenameField().optional(),
    content: contentField(maxContentBytes),
    /** Absent: the document keeps its metadata; given (`{}` too): it replaces it. */
    metadata: documentMetadata.optional(),
  });
}

/**
 * Whether a Prefer header (RFC 7240) asks for `respond-async`. Preferences are comma-separated tokens, each with
 * optional `=value` and `;parameters`; tokens are case-insensitive. Parsed by splitting, no pattern matching.
 */
export function prefersRespondAsync(header: string | string[] | undefined): boolean {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  return values.some((value) =>
    value
      .split(',')
      .some((preference) => preference.split(';')[0].split('=')[0].trim().toLowerCase() === 'respond-async'),
  );
}

/**
 * ?include=status lists every document, queued, processing and failed ones too, each with its status, progress and
 * error (the web app's documents page).
 */
export const documentListQuery = pageQuery.extend({
  include: z.enum(['status'], { error: 'must be status' }).optional(),
});

// ── Responses ─────────────────────────────────────────────────────────────────────────────────────────────────────
// What presenters/documents.ts returns (typed against these) and the OpenAPI description publishes.

const documentIdentity = {
  id: resourceId('Document id'),
  filename: z.string().meta({ description: 'Name shown in listings and citations', example: 'onboarding.md' }),
  title: z.string().meta({ description: 'The filename without its extension', example: 'onboarding' }),
};

const chunkCounts = {
  chunks: z
    .number()
    .int()
    .min(0)
    .meta({ description: 'Number of segments produced (of the searchable version)', example: 12 }),
  total_chunks: z.number().int().min(0).meta({ description: 'Number of segments reported as total', example: 12 }),
};

const documentSource = z.enum(['api', 'upload']).meta({
  description: 'How the document entered the KB: `api` (this API or pasted text) or `upload` (a file in the web app)',
});

/** 201 of POST /documents and PUT /documents/{id}: the contract's fields, once the document is searchable. */
export const ingestedDocument = z
  .object({ ...documentIdentity, ...chunkCounts })
  .meta({ id: 'IngestedDocument', description: 'A document just ingested and searchable.' });

/** GET /knowledge-bases/{id}/documents: exactly the contract's fields. */
export const documentListItem = z
  .object({ ...documentIdentity, source: documentSource, created_at: timestamp('Creation timestamp') })
  .meta({ id: 'DocumentListItem', description: "A searchable document in a KB's list." });

/** GET /documents/{id}, the 202 of a queued ingestion, and list items with ?include=status. */
export const documentWithStatus = z
  .object({
    ...documentIdentity,
    knowledge_base_id: resourceId('The KB the document belongs to'),
    source: documentSource,
    kind: z.enum(['text', ...FILE_KINDS]).meta({
      description:
        'A file uploaded in the web app: `pdf`, `docx`, `odt`, `pptx`, `xlsx`, `csv`, `html` or `image` (its original is kept and its text read from it); everything else `text`',
    }),
    status: z.enum(['queued', 'processing', 'ready', 'failed']).meta({
      description:
        'Of the newest ingestion: `queued` → `processing` → `ready` (searchable) or `failed` (see `error`; retry with POST /documents/{id}/retry). A replacement keeps the previous version searchable until it is ready.',
    }),
    ...chunkCounts,
    created_at: timestamp('Creation timestamp'),
    updated_at: timestamp('Last change of the record (status, progress, a new version)'),
    progress: z
      .object({
        embedded: z.number().int().min(0).meta({ description: 'Segments embedded so far' }),
        total: z.number().int().min(0).meta({ description: 'Segments to embed (0 until the text is split)' }),
        phase: z
          .enum(['extracting', 'embedding'])
          .optional()
          .meta({ description: 'PDFs: which step the ingestion is in' }),
        pages: z
          .object({
            done: z.number().int().min(0),
            total: z.number().int().min(0),
            characters: z.number().int().min(0).optional().meta({
              description: 'Characters of text read so far on the page in progress (page `done` + 1), when it is slow',
            }),
            waiting: z.boolean().optional().meta({
              description: 'True while it waits between two steps for the PDF reader, which another PDF has',
            }),
          })
          .optional()
          .meta({
            description:
              'PDFs: pages extracted of the page count (absent while the file is opened; `done` = `total` while the text is prepared)',
          }),
      })
      .optional()
      .meta({ description: 'Only while `queued` or `processing`' }),
    error: z.string().optional().meta({ description: 'Only when `failed`: why, in words a user can act on' }),
    metadata: documentMetadataOutput,
  })
  .meta({ id: 'Document', description: 'A document with the status of its newest ingestion.' });

export const ingestedDocumentResponse = z.object({ document: ingestedDocument });
export const documentResponse = z.object({ document: documentWithStatus });
export const documentDeletedResponse = z.object({ deleted: z.literal(true) });
export const documentListResponse = z.object({
  documents: z.array(z.union([documentListItem, documentWithStatus])).meta({
    description:
      'Searchable documents (`DocumentListItem`); with `?include=status` every document with its status (`Document`).',
  }),
  next_cursor: nextCursor,
});
