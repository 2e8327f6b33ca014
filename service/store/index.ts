// The store: every MongoDB query the service makes, as small named functions grouped by collection.
import { apiKeysStore } from './apiKeys.ts';
import { backupStore } from './backup.ts';
import { conversationsStore } from './conversations.ts';
import { documentsStore } from './documents.ts';
import { filesStore } from './files.ts';
import { ingestJobsStore } from './ingestJobs.ts';
import { knowledgeBasesStore } from './knowledgeBases.ts';
import { connectMongo, storeCall, type ConnectOptions, type MongoConnection } from './mongo.ts';
import { organisationsStore } from './organisations.ts';
import { sessionsStore } from './sessions.ts';
import { shareInvitationsStore } from './shareInvitations.ts';
import { usageStore, type Usage } from './usage.ts';
import { usersStore } from './users.ts';

export type Store = ReturnType<typeof buildStore>;

/** Records a permanent delete removes at once (each its own delete, so each counts whoever else deletes it). */
const DELETES_IN_FLIGHT = 16;

function buildStore(connection: MongoConnection) {
  const { collections } = connection;
  const documents = documentsStore(collections);
  const files = filesStore(connection.db);
  const knowledgeBases = knowledgeBasesStore(collections);
  const usage = usageStore(collections);

  /** Gives what removed records held back to their KB's owner (a soft-deleted KB still has one). */
  async function giveBack(knowledgeBaseId: string, held: Usage): Promise<void> {
    if (held.documents === 0 && held.bytes === 0) return;
    const knowledgeBase = await knowledgeBases.findKnowledgeBaseIncludingDeleted(knowledgeBaseId);
    if (knowledgeBase) await usage.releaseUsage(knowledgeBase.owner_id, held);
  }

  /**
   * Removes a document's record with `remove` and, only when that removed it (the store's delete count: of
   * deleters racing, one), gives its usage back: once per document, whoever deletes it (a DELETE, a failed waited-for
   * ingestion, a cancelled job, the retention sweep) and however many race. The size given back is the record's as
   * read just before.
   */
  async function removeRecord(id: string, remove: () => Promise<boolean>): Promise<boolean> {
    const record = await documents.findDocument(id);
    if (!record || !(await remove())) return false;
    await giveBack(record.knowledge_base_id, { documents: 1, bytes: record.stored_bytes ?? 0 });
    return true;
  }

  return {
    ...usersStore(collections),
    ...organisationsStore(collections),
    ...apiKeysStore(collections),
    ...knowledgeBases,
    ...documents,
    ...ingestJobsStore(collections),
    ...sessionsStore(collections),
    ...shareInvitationsStore(collections),
    ...files,
    ...usage,
    ...conversationsStore(collections),
    /** Whole-collection export and import for `kbqa backup`: never on a request path. */
    ...backupStore(connection.db),
    /**
     * The record (its usage given back), its stored texts and its stored files: every way a document goes removes
     * all of it. True when this call removed the record; false when it was already gone (another deleter's).
     */
    async deleteDocument(id: string): Promise<boolean> {
      const removed = await removeRecord(id, () => documents.deleteDocumentRecord(id));
      await documents.deleteDocumentContents(id);
      await files.deleteFilesOfDocument(id);
      return removed;
    },
    /** A failed upload, record first (only while it is still failed), then its stored texts and its original file. */
    async deleteFailedUpload(id: string): Promise<boolean> {
      if (!(await removeRecord(id, () => documents.deleteFailedUploadRecord(id)))) return false;
      await documents.deleteDocumentContents(id);
      await files.deleteFilesOfDocument(id);
      return true;
    },
    /**
     * A KB's documents, each record removed on its own so that one a DELETE or a job removes meanwhile is given back
     * once (by whichever removed it), then whatever texts and files remain. Returns the records this removed.
     */
    async deleteDocumentsOfKnowledgeBase(knowledgeBaseId: string): Promise<number> {
      const holdings = await documents.listDocumentHoldings(knowledgeBaseId);
      const held = { documents: 0, bytes: 0 };
      for (let start = 0; start < holdings.length; start += DELETES_IN_FLIGHT) {
        await Promise.all(
          holdings.slice(start, start + DELETES_IN_FLIGHT).map(async (record) => {
            if (!(await documents.deleteDocumentRecord(record._id))) return;
            held.documents += 1;
            held.bytes += record.stored_bytes ?? 0;
          }),
        );
      }
      await giveBack(knowledgeBaseId, held);
      // A record written after the listing (an ingest that passed its KB check just before the delete) goes too; what
      // it held is not given back here (`kbqa doctor` reports the difference).
      await documents.deleteDocumentsOfKnowledgeBase(knowledgeBaseId);
      await files.deleteFilesOfKnowledgeBase(knowledgeBaseId);
      return held.documents;
    },
    /** For /readyz: does the server answer? */
    async ping(): Promise<void> {
      await storeCall(() => connection.db.command({ ping: 1 }));
    },
    close: () => connection.close(),
  };
}

export async function openStore(url: string, timeoutMs: number, options: ConnectOptions = {}): Promise<Store> {
  const store = buildStore(await connectMongo(url, timeoutMs, options));
  await store.backfillDocumentVersions();
  return store;
}

export type { HiddenChunkVersion, IngestJobCounts } from './ingestJobs.ts';
export { metadataEntries, metadataObject, pendingContentId } from './documents.ts';
export type { Reader } from './knowledgeBases.ts';
export type { InvitationBounds, InvitationOutcome } from './shareInvitations.ts';
export type { Page } from './pagination.ts';
export type { FeedbackQuery } from './conversations.ts';
export { storeCallsMade, storeFailure } from './mongo.ts';
export type { StoredFile } from './files.ts';
export type { Reservation, Usage } from './usage.ts';
export { BACKUP_COLLECTIONS, TRANSIENT_COLLECTIONS, type BackupCollection, type BackupIndex } from './backup.ts';
export type * from './records.ts';
