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
import { usageStore } from './usage.ts';
import { usersStore } from './users.ts';

export type Store = ReturnType<typeof buildStore>;

function buildStore(connection: MongoConnection) {
  const { collections } = connection;
  const documents = documentsStore(collections);
  const files = filesStore(connection.db);
  return {
    ...usersStore(collections),
    ...organisationsStore(collections),
    ...apiKeysStore(collections),
    ...knowledgeBasesStore(collections),
    ...documents,
    ...ingestJobsStore(collections),
    ...sessionsStore(collections),
    ...files,
    ...usageStore(collections),
    ...conversationsStore(collections),
    /** Whole-collection export and import for `kbqa backup`: never on a request path. */
    ...backupStore(connection.db),
    /** The record, its stored texts, and its stored files: every way a document goes removes all of it. */
    async deleteDocument(id: string): Promise<void> {
      await documents.deleteDocument(id);
      await files.deleteFilesOfDocument(id);
    },
    /** A failed upload, record first (only while it is still failed), then its stored texts and its original file. */
    async deleteFailedUpload(id: string): Promise<boolean> {
      if (!(await documents.deleteFailedUploadRecord(id))) return false;
      await documents.deleteDocument(id);
      await files.deleteFilesOfDocument(id);
      return true;
    },
    async deleteDocumentsOfKnowledgeBase(knowledgeBaseId: string): Promise<number> {
      const deleted = await documents.deleteDocumentsOfKnowledgeBase(knowledgeBaseId);
      await files.deleteFilesOfKnowledgeBase(knowledgeBaseId);
      return deleted;
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
export type { Page } from './pagination.ts';
export type { FeedbackQuery } from './conversations.ts';
export { storeCallsMade, storeFailure } from './mongo.ts';
export type { StoredFile } from './files.ts';
export type { Reservation, Usage } from './usage.ts';
export { BACKUP_COLLECTIONS, TRANSIENT_COLLECTIONS, type BackupCollection, type BackupIndex } from './backup.ts';
export type * from './records.ts';
