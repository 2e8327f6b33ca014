// Files uploaded through the web app (PDFs and the other file kinds: extraction/fileKinds.ts): the original is
// stored (GridFS), and every ingestion of the document extracts its text again in a reader child process
// (service/extraction/), page by page or section by section, so each chunk knows where it came from.
import { randomUUID } from 'node:crypto';
import { NotFoundError } from '../errors.ts';
import { authorizeWriteDocuments } from '../policies/knowledgeBases.ts';
import type { DocumentRecord, KnowledgeBaseRecord, Principal, Store } from '../store/index.ts';
import type { FileKind } from '../extraction/fileKinds.ts';
import { firstVersion, newDocumentRecord, type DocumentDeps } from './documents.ts';
import { newJob } from '../jobs/jobRecord.ts';
import { admitIngestion, withNewDocumentReserved } from './quotas.ts';

/** Checked before a byte of the upload is read: only the KB's owner uploads. */
export async function authorizeFileUpload(
  store: Store,
  user: Principal,
  knowledgeBaseId: string,
): Promise<KnowledgeBaseRecord> {
  return authorizeWriteDocuments(user, await store.findLiveKnowledgeBase(knowledgeBaseId), knowledgeBaseId);
}

/** Also before reading the file: the owner's queue of documents waiting for ingestion has room (else 429). */
export async function admitFileUpload(
  deps: DocumentDeps,
  user: Principal,
  knowledgeBaseId: string,
): Promise<KnowledgeBaseRecord> {
  const knowledgeBase = await authorizeFileUpload(deps.store, user, knowledgeBaseId);
  await admitIngestion(deps.store, deps.config.quotas, knowledgeBase.owner_id);
  return knowledgeBase;
}

export const newDocumentId = () => randomUUID();

/**
 * The stored upload becomes a document (`queued`) and its job; any process's runner extracts and embeds it. The KB
 * is authorized again: it may have been deleted, or unshared, while the file streamed in.
 */
export async function ingestFileUpload(
  deps: DocumentDeps,
  user: Principal,
  input: {
    knowledgeBaseId: string;
    documentId: string;
    filename: string;
    fileId: string;
    kind: FileKind;
    bytes: number;
  },
): Promise<DocumentRecord> {
  const knowledgeBase = await authorizeFileUpload(deps.store, user, input.knowledgeBaseId);
  const record = newDocumentRecord({
    id: input.documentId,
    knowledgeBaseId: knowledgeBase._id,
    filename: input.filename,
    source: 'upload',
    origin: 'file',
    file: { id: input.fileId, kind: input.kind },
    storedBytes: input.bytes,
  });
  const job = newJob(
    record,
    { ...firstVersion(record), file_id: input.fileId },
    'async',
    null,
    deps.config.ingestion.leaseMs,
  );
  // The file is stored by now (its size known only at the end): over the quota it is refused, and the route discards it.
  await withNewDocumentReserved(
    deps.store,
    deps.config.quotas,
    { ownerId: knowledgeBase.owner_id, documentId: record._id, bytes: input.bytes },
    () => deps.store.insertDocumentWithJob(record, null, job),
  );
  deps.jobs.nudge(record._id);
  return record;
}

/** The stored original of an uploaded document the caller can read (document access rules: documents.ts). */
export async function documentFile(store: Store, document: DocumentRecord) {
  const file = document.file_id ? await store.findFile(document.file_id) : null;
  if (!file) throw new NotFoundError(`document ${document._id} has no stored file`);
  return { file, stream: store.openFileDownload(file.id) };
}
