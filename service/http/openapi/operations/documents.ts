// The OpenAPI operations of routes/documents.ts: ingest, get, replace, retry, delete, and a KB's list.
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { loadConfig } from '../../../config.ts';
import {
  documentDeletedResponse,
  documentListQuery,
  documentListResponse,
  documentResponse,
  ingestDocumentBody,
  ingestedDocumentResponse,
  replaceDocumentBody,
} from '../../routes/documents.schema.ts';
import { describeFields, errors, json, pathId, preferHeader } from '../shared.ts';
import { documentPaging } from './paging.ts';

const DOCUMENT_ID = '5a7b9c1d-2e3f-4a5b-8c6d-7e8f9a0b1c2d';
const KB_ID = '3f0c9a52-6d1e-4b8f-9a7c-2e5d8b1f4c60';

// The rules the routes validate with; the byte limit itself (KBQA_MAX_CONTENT_BYTES) is not part of the JSON
// Schema (a refinement), so the default stands in for it here and the description names the variable.
const { maxContentBytes } = loadConfig({}).limits;

// The length rules of the filename and content refinements, stated where JSON Schema can (the rest is in words).
const FILENAME = {
  override: { minLength: 1, maxLength: 255 },
  description:
    'Name shown in listings and citations: 1–255 characters, no path separators or control characters; `.txt`, `.text`, `.md`, `.markdown` or no extension (v1 ingests text and markdown; PDFs go through the web app)',
  example: 'onboarding.md',
};
const CONTENT = {
  override: { minLength: 1 },
  description: `Raw text or markdown: not blank, no NUL, at most KBQA_MAX_CONTENT_BYTES UTF-8 bytes (${maxContentBytes} by default)`,
  example: '# Onboarding\n\nNew starters get their laptop on their first day.',
};
const METADATA_DOC = {
  description: 'Flat metadata to filter queries and searches by (`filters`); see `DocumentMetadata`.',
  example: { team: 'people', year: 2026, tags: ['onboarding'] },
};

const ingested = { id: DOCUMENT_ID, filename: 'onboarding.md', title: 'onboarding', chunks: 3, total_chunks: 3 };
const queued = {
  id: DOCUMENT_ID,
  knowledge_base_id: KB_ID,
  filename: 'onboarding.md',
  title: 'onboarding',
  source: 'api',
  kind: 'text',
  status: 'queued',
  chunks: 0,
  total_chunks: 0,
  created_at: '2026-01-15T09:30:00.000Z',
  updated_at: '2026-01-15T09:30:00.000Z',
  progress: { embedded: 0, total: 0 },
  metadata: { team: 'people' },
};
const { progress: _queuedProgress, ...queuedWithoutProgress } = queued;
const ready = {
  ...queuedWithoutProgress,
  status: 'ready',
  chunks: 3,
  total_chunks: 3,
  updated_at: '2026-01-15T09:30:02.000Z',
};

/** 201 (waited until searchable) or 202 (Prefer: respond-async), as every ingestion answers. */
const ingestionResponses = (waited: string) => ({
  201: { description: waited, content: json(ingestedDocumentResponse, { document: ingested }) },
  202: {
    description:
      'With `Prefer: respond-async`: queued; follow `GET /api/v1/documents/{id}` (the `Location`) until `ready` or `failed`.',
    headers: {
      Location: {
        description: 'The document to follow',
        schema: { type: 'string' as const },
        example: `/api/v1/documents/${DOCUMENT_ID}`,
      },
      'Preference-Applied': { description: '`respond-async`', schema: { type: 'string' as const } },
    },
    content: json(documentResponse, { document: queued }),
  },
});

/** The per-user quotas an ingestion meets (commands/quotas.ts): stored documents and bytes, and the ingestion queue. */
const OVER_QUOTA = {
  description:
    "The request body exceeds KBQA_MAX_BODY_BYTES, or storing the document would exceed the owner's quota of documents (KBQA_MAX_DOCUMENTS_PER_USER) or bytes (KBQA_MAX_STORAGE_BYTES_PER_USER); the message names the limit and the usage.",
  message:
    'storage quota exceeded: this needs 52000 more bytes, 1073700000 of 1073741824 bytes are in use; delete some documents first',
};
const QUEUE_FULL = {
  description:
    "The owner already has KBQA_MAX_QUEUED_DOCUMENTS_PER_USER documents waiting for ingestion: retry after the `Retry-After` header's seconds (a bulk load paces itself by it).",
  message: '200 documents of yours are waiting for ingestion (the limit is 200); retry in 5 s',
};

const INGEST_FAILED = {
  description:
    'The content has no text to index, or (waiting) the ingestion failed for a reason the message gives; also a body that is not valid.',
  message: 'content: has no text to index (no letters or digits)',
};

export const documentPaths = {
  '/api/v1/documents': {
    post: {
      operationId: 'ingestDocument',
      tags: ['Documents'],
      summary: 'Ingest a document',
      description:
        'Ingests text or markdown into a KB the caller owns: it is split into chunks, embedded and indexed. By default the request waits until the document is searchable (201); with `Prefer: respond-async` it answers 202 at once and the document is ingested in the background (retried through outages).',
      requestParams: { header: preferHeader },
      requestBody: {
        required: true,
        content: json(
          describeFields(ingestDocumentBody(maxContentBytes), {
            kb_id: { description: 'Target KB; the caller must own it', example: KB_ID },
            filename: FILENAME,
            content: CONTENT,
            metadata: METADATA_DOC,
          }),
          {
            kb_id: KB_ID,
            filename: 'onboarding.md',
            content: '# Onboarding\n\nNew starters get their laptop on their first day.',
            metadata: { team: 'people' },
          },
        ),
      },
      responses: {
        ...ingestionResponses('Ingested and searchable.'),
        ...errors(
          {
            400: INGEST_FAILED,
            403: {
              description: 'The KB does not exist or the caller does not own it.',
              message: `API key lacks access to knowledge base ${KB_ID}`,
            },
            404: 'The KB was deleted while the document was being ingested.',
            413: OVER_QUOTA,
            429: QUEUE_FULL,
          },
          { body: true },
        ),
      },
    },
  },
  '/api/v1/documents/{id}': {
    get: {
      operationId: 'getDocument',
      tags: ['Documents'],
      summary: 'Get a document',
      description: 'A document with the status of its newest ingestion: poll it after a 202.',
      requestParams: { path: pathId('Document id') },
      responses: {
        200: { description: 'The document.', content: json(documentResponse, { document: ready }) },
        ...errors({
          404: {
            description: 'No document with this id is visible to the key.',
            message: `document ${DOCUMENT_ID} not found`,
          },
        }),
      },
    },
    put: {
      operationId: 'replaceDocument',
      tags: ['Documents'],
      summary: 'Replace a document',
      description:
        'A new version under the same id (owner only). The previous version stays searchable until the new one is ready, then one write swaps them; if the new one fails, the previous one stays. Waits like an ingestion, or 202 with `Prefer: respond-async`.',
      requestParams: { path: pathId('Document id'), header: preferHeader },
      requestBody: {
        required: true,
        content: json(
          describeFields(replaceDocumentBody(maxContentBytes), {
            filename: {
              ...FILENAME,
              description: `A new filename; absent: it keeps its name. ${FILENAME.description}`,
            },
            content: CONTENT,
            metadata: {
              ...METADATA_DOC,
              description: 'Absent: the document keeps its metadata; given (`{}` too): it replaces it.',
            },
          }),
          { content: '# Onboarding\n\nNew starters get their laptop and badge on their first day.' },
        ),
      },
      responses: {
        ...ingestionResponses('The new version is ingested and searchable.'),
        ...errors(
          {
            400: {
              description:
                'The body is not valid, the content has no text, or the document is a PDF (replace those in the web app).',
              message: INGEST_FAILED.message,
            },
            403: 'The caller can see the document but does not own its KB.',
            404: {
              description: 'No document with this id is visible to the key.',
              message: `document ${DOCUMENT_ID} not found`,
            },
            409: {
              description:
                'The document is still queued or processing, or another request is replacing it: wait until it is ready or failed.',
              message: `document ${DOCUMENT_ID} is processing: wait until it is ready or failed (GET /api/v1/documents/${DOCUMENT_ID})`,
            },
            413: {
              ...OVER_QUOTA,
              description: `${OVER_QUOTA.description} A replacement counts what it adds to the stored version.`,
            },
            429: QUEUE_FULL,
          },
          { body: true },
        ),
      },
    },
    delete: {
      operationId: 'deleteDocument',
      tags: ['Documents'],
      summary: 'Delete a document',
      description:
        'Removes the document for good (owner only): its record, its chunks and its stored text. An ingestion in flight stops.',
      requestParams: { path: pathId('Document id') },
      responses: {
        200: { description: 'Deleted.', content: json(documentDeletedResponse, { deleted: true }) },
        ...errors({
          403: 'The caller can see the document but does not own its KB.',
          404: {
            description:
              'No document with this id is visible to the key; also the answer to a delete that another one (or a delete of its KB) got to first.',
            message: `document ${DOCUMENT_ID} not found`,
          },
        }),
      },
    },
  },
  '/api/v1/documents/{id}/retry': {
    post: {
      operationId: 'retryDocument',
      tags: ['Documents'],
      summary: 'Retry a failed document',
      description:
        "Runs a failed document's ingestion again from its stored text (owner only). No body. Waits, or 202 with `Prefer: respond-async`.",
      requestParams: { path: pathId('Document id'), header: preferHeader },
      responses: {
        ...ingestionResponses('Ingested and searchable.'),
        ...errors(
          {
            400: {
              description: 'The ingestion failed again (the message says why), or a body was sent that is not JSON.',
              message: INGEST_FAILED.message,
            },
            403: 'The caller can see the document but does not own its KB.',
            404: {
              description: 'No document with this id is visible to the key.',
              message: `document ${DOCUMENT_ID} not found`,
            },
            409: {
              description: 'The document is not `failed`: only a failed document is retried.',
              message: `document ${DOCUMENT_ID} is ready; only a failed document is retried`,
            },
            429: QUEUE_FULL,
          },
          { body: true },
        ),
      },
    },
  },
  '/api/v1/knowledge-bases/{id}/documents': {
    get: {
      operationId: 'listDocuments',
      tags: ['Documents'],
      summary: "List a knowledge base's documents",
      description:
        "The KB's searchable documents, newest first. `?include=status` lists every document (queued, processing and failed ones too) with its status. Without `limit` the whole list comes back.",
      requestParams: {
        path: pathId('KB id'),
        query: describeFields(documentPaging(documentListQuery), {
          include: {
            description: '`status`: every document, each with its status, progress and error (`Document`)',
            example: 'status',
          },
        }),
      },
      responses: {
        200: {
          description: 'The documents.',
          content: json(documentListResponse, {
            documents: [
              {
                id: DOCUMENT_ID,
                filename: 'onboarding.md',
                title: 'onboarding',
                source: 'api',
                created_at: '2026-01-15T09:30:00.000Z',
              },
            ],
          }),
        },
        ...errors({
          400: {
            description: 'A `limit`, `cursor` or `include` that is not valid.',
            message: 'include: must be status',
          },
          404: 'No KB with this id is visible to the key.',
        }),
      },
    },
  },
} satisfies ZodOpenApiPathsObject;
