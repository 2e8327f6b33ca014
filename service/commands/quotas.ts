// Per-user quotas: documents waiting for ingestion (KBQA_MAX_QUEUED_DOCUMENTS_PER_USER, 429 with Retry-After beyond
// it, so a bulk load paces itself), documents and bytes stored (KBQA_MAX_DOCUMENTS_PER_USER and
// KBQA_MAX_STORAGE_BYTES_PER_USER, 413 naming the limit and the usage), and the originals of failed uploads, kept
// KBQA_FAILED_UPLOAD_RETENTION_DAYS. A document counts against its KB's owner: only owners write documents.
import type { Config } from '../config.ts';
import { IngestionQueueFullError, QuotaExceededError } from '../errors.ts';
import type { Store, Usage } from '../store/index.ts';

export type QuotaSettings = Config['quotas'];

/** What a client over the queue bound is told to wait: about what a few small documents take to ingest. */
const QUEUE_RETRY_AFTER_SECONDS = 5;

/**
 * 429 when the owner already has the most documents waiting for ingestion. A bound, not a reservation: requests
 * arriving together may each pass it, so the queue can exceed it by the requests in flight at that moment.
 */
export async function admitIngestion(store: Store, settings: QuotaSettings, ownerId: string): Promise<void> {
  const waiting = await store.countQueuedDocuments(ownerId);
  if (waiting >= settings.maxQueuedDocuments)
    throw new IngestionQueueFullError(settings.maxQueuedDocuments, waiting, QUEUE_RETRY_AFTER_SECONDS);
}

/** Adds `delta` to the owner's usage, or 413 naming the limit it would break and what is in use. */
export async function reserveStorage(
  store: Store,
  settings: QuotaSettings,
  ownerId: string,
  delta: Usage,
): Promise<void> {
  const limits = { documents: settings.maxDocuments, bytes: settings.maxStorageBytes };
  const outcome = await store.reserveUsage(ownerId, delta, limits);
  if (outcome.reserved) return;
  if (delta.documents > 0 && outcome.usage.documents + delta.documents > limits.documents) {
    throw QuotaExceededError.documents(limits.documents, outcome.usage.documents);
  }
  throw QuotaExceededError.storage(limits.bytes, outcome.usage.bytes, delta.bytes);
}

/**
 * Runs `write` (storing a new document) with one document of `bytes` reserved for the owner. `write` calls
 * `recorded()` once the document's record is written: from then on the record holds the reservation, and whoever
 * removes the record gives it back (store/index.ts deleteDocument), so a failure after that point gives nothing back
 * here. Before it (nothing written, or the record's write failed) the reservation is given back at once; a record
 * written by an insert that failed later (its job) stays, and keeps counting.
 */
export async function withNewDocumentReserved<T>(
  store: Store,
  settings: QuotaSettings,
  owner: { ownerId: string; documentId: string; bytes: number },
  write: (recorded: () => void) => Promise<T>,
): Promise<T> {
  const delta = { documents: 1, bytes: owner.bytes };
  await reserveStorage(store, settings, owner.ownerId, delta);
  let written = false;
  try {
    return await write(() => (written = true));
  } catch (error) {
    if (!written && !(await store.findDocument(owner.documentId).catch(() => undefined)))
      await store.releaseUsage(owner.ownerId, delta).catch(() => undefined);
    throw error;
  }
}

/**
 * Runs `write` (queueing a new version of a text) with its size difference charged to the owner (or given back: a
 * smaller one). `write` calls `started()` once the version started with the new size on the record
 * (store startDocumentVersion): from then on the record's stored_bytes holds the charge whatever the ingestion's
 * outcome, so the usage stays the records' sum. A version that never started gives the charge back, once.
 */
export async function withReplacementCharged<T>(
  store: Store,
  settings: QuotaSettings,
  charge: { ownerId: string; previousBytes: number; bytes: number },
  write: (started: () => void) => Promise<T>,
): Promise<T> {
  const delta = { documents: 0, bytes: charge.bytes - charge.previousBytes };
  await reserveStorage(store, settings, charge.ownerId, delta);
  let charged = false;
  try {
    return await write(() => (charged = true));
  } catch (error) {
    if (!charged) await store.releaseUsage(charge.ownerId, delta).catch(() => undefined);
    throw error;
  }
}

/** A document's UTF-8 size, as the storage quota counts a text. */
export const textBytes = (content: string) => Buffer.byteLength(content, 'utf8');

/**
 * Removes failed uploads older than the retention (their documents, texts and original files: a new upload whose
 * first ingestion failed has no live version and no chunks) and gives their usage back. Hourly in every API process,
 * and on `kbqa docs purge-failed`. Returns the ids removed.
 */
export async function purgeFailedUploads(store: Store, retentionMs: number, now = new Date()): Promise<string[]> {
  const removed: string[] = [];
  for (const document of await store.listFailedUploadsBefore(new Date(now.getTime() - retentionMs))) {
    // A failed document has no job; one whose retry started meanwhile is no longer failed, and stays. The store
    // gives its usage back when this removed it.
    if (!(await store.deleteFailedUpload(document._id))) continue;
    removed.push(document._id);
  }
  return removed;
}

/** The repair of a drifted usage record (see store/usage.ts): counted again from the user's documents. */
export function recountUsage(store: Store, userId: string): Promise<Usage> {
  return store.recountUsage(userId);
}
