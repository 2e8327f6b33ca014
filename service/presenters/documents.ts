import type { z } from 'zod';
import type { documentListItem, documentWithStatus, ingestedDocument } from '../http/routes/documents.schema.ts';
import type { webDocumentFields as webDocumentFieldsSchema } from '../http/routes/webApp.schema.ts';
import type { DocumentRecord } from '../store/index.ts';
import { LOW_CONFIDENCE } from '../extraction/ocr.ts';
import { metadataObject } from '../store/index.ts';

// Typed against the response schemas (http/routes/documents.schema.ts) the OpenAPI description publishes.

/** POST / PUT answered once the document is searchable (201): the contract's fields. */
export function presentIngestedDocument(record: DocumentRecord): z.input<typeof ingestedDocument> {
  return {
    id: record._id,
    filename: record.filename,
    title: record.title,
    chunks: record.chunks,
    total_chunks: record.total_chunks,
  };
}

/** The KB's documents list: exactly the contract's fields. */
export function presentDocumentListItem(record: DocumentRecord): z.input<typeof documentListItem> {
  return {
    id: record._id,
    filename: record.filename,
    title: record.title,
    source: record.source,
    created_at: record.created_at.toISOString(),
  };
}

/**
 * What the web app's pages add to a document (never on /api/v1, whose fields are the contract's): where it was added
 * (`origin`), for a failure whether a retry can pass (`retryable`: the app offers Remove instead when not), and
 * while queued how many documents are ahead of it (`ahead`, commands/ingestQueue.ts).
 */
export type WebDocumentFields = z.input<typeof webDocumentFieldsSchema>;

export function webDocumentFields(record: DocumentRecord, ahead?: ReadonlyMap<string, number>): WebDocumentFields {
  const waitingBehind = record.status === 'queued' ? ahead?.get(record._id) : undefined;
  return {
    // Older records: a PDF was uploaded; text came through the API or the app, which did not say which.
    origin: record.origin ?? (record.source === 'upload' ? 'file' : 'api'),
    ...(record.status === 'failed' ? { retryable: record.error_retryable ?? true } : {}),
    ...(waitingBehind !== undefined ? { ahead: waitingBehind } : {}),
    ...(record.scanned_pages?.length
      ? {
          scanned_pages: record.scanned_pages.map(({ page, confidence }) => ({
            page,
            confidence,
            low_confidence: confidence < LOW_CONFIDENCE,
          })),
        }
      : {}),
  };
}

/**
 * GET /documents/{id}, and the 202 of a queued ingestion. filename, title and the chunk counts are those of the
 * searchable (live) version; status, progress and error those of the newest ingestion. `realm` 'web': with the web
 * app's fields too (with `ahead`, queued documents' places in line).
 */
export function presentDocument(
  record: DocumentRecord,
  realm: 'api' | 'web' = 'api',
  ahead?: ReadonlyMap<string, number>,
): z.input<typeof documentWithStatus> & Partial<WebDocumentFields> {
  return {
    id: record._id,
    knowledge_base_id: record.knowledge_base_id,
    filename: record.filename,
    title: record.title,
    source: record.source,
    kind: record.kind ?? 'text',
    status: record.status,
    chunks: record.chunks,
    total_chunks: record.total_chunks,
    created_at: record.created_at.toISOString(),
    updated_at: (record.updated_at ?? record.created_at).toISOString(),
    ...(record.status === 'queued' || record.status === 'processing'
      ? {
          progress: {
            embedded: record.progress?.embedded ?? 0,
            total: record.progress?.total ?? 0,
            // PDFs: which step ("extracting" page n of m, then "embedding"), and the pages.
            ...(record.progress?.phase ? { phase: record.progress.phase } : {}),
            ...(record.progress?.pages ? { pages: record.progress.pages } : {}),
          },
        }
      : {}),
    ...(record.status === 'failed' ? { error: record.error ?? 'the ingestion failed' } : {}),
    metadata: metadataObject(record.metadata),
    ...(realm === 'web' ? webDocumentFields(record, ahead) : {}),
  };
}
