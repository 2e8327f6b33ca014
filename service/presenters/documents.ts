import type { DocumentRecord } from '../store/index.ts';

export function presentIngestedDocument(record: DocumentRecord) {
  return {
    id: record._id,
    filename: record.filename,
    title: record.title,
    chunks: record.chunks,
    total_chunks: record.total_chunks,
  };
}

export function presentDocumentListItem(record: DocumentRecord) {
  return {
    id: record._id,
    filename: record.filename,
    title: record.title,
    source: record.source,
    created_at: record.created_at.toISOString(),
  };
}
