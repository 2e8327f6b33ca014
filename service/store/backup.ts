// The MongoDB half of `kbqa backup` (operations/backup/): every collection as canonical Extended JSON, one record a
// line, streamed both ways (never a whole collection in memory), with its index definitions. Canonical EJSON keeps
// every BSON type exactly (dates, GridFS's binary chunks and ObjectIds, 64-bit integers), so a restored record is
// the record that was exported.
import { BSON, type Db, type Document, type IndexDirection } from 'mongodb';
import { storeCall } from './mongo.ts';

/**
 * Left out of a backup: what is transient and harmless to lose. Web sessions (people sign in again; and a backup
 * then holds no live session), sign-in failure windows (rate-limit counters of the last minutes) and each user's
 * usage record (derived from the documents: counted again on first use, store/usage.ts). Everything
 * else is kept (conversations and their messages, with the feedback on answers, included), notably `installation` (without it a restored service would offer "create the first account"
 * again), `password_links` (outstanding invitations keep working) and `ingest_jobs` (the work in flight).
 */
export const TRANSIENT_COLLECTIONS = ['sessions', 'sign_in_failures', 'user_usage'];

/**
 * The collections a backup holds and a restore writes, in export order: the reverse of the order an ingest writes
 * (KB → original content → document record → job → chunks; the chunk snapshot is taken before all of these), so
 * that a record exported is never newer than what it points at: a job's document, a document's content and KB are
 * written before it and exported after it. A document deleted meanwhile can still leave a record whose content is
 * gone; restore's reconcile reports it. Only these: a restore never writes into a collection a manifest merely names
 * (sessions, or one that is not kbqa's), and a backup leaves out what is not kbqa's.
 */
export const BACKUP_COLLECTIONS = [
  // A conversation is written before its messages (a turn's two after its answer), and both point at users, KBs and
  // documents: messages first, then conversations, both before what they cite.
  'conversation_messages',
  'conversations',
  'ingest_jobs',
  'ingest_job_claims',
  'documents',
  'document_contents',
  // GridFS writes a file's chunks, then its file record: the record first.
  'document_files.files',
  'document_files.chunks',
  'share_invitation_slots',
  'share_invitations',
  'share_refusals',
  'knowledge_bases',
  'api_key_usage',
  'api_keys',
  'password_links',
  'users',
  'organisations',
  'installation',
] as const;
export type BackupCollection = (typeof BACKUP_COLLECTIONS)[number];

/**
 * The not_before of an ingestion job a restore imported: never claimable, until the restore has the chunk index back
 * and releases it (releaseRestoredJobs). An API running against the target meanwhile must not take it: its bulks to
 * an alias with no index behind it would create an index under the alias's name.
 */
export const RESTORE_HOLD = Number.MAX_SAFE_INTEGER;

/** An index as it is re-created on restore (the `_id` index exists with every collection). */
export interface BackupIndex {
  name: string;
  key: Record<string, number | string>;
  unique?: boolean;
  sparse?: boolean;
}

/** Records per insertMany, and at most this many bytes of EJSON (GridFS chunks are ~340 KB of it each). */
const IMPORT_BATCH_RECORDS = 500;
const IMPORT_BATCH_BYTES = 8 * 1024 * 1024;

/** What `kbqa backup` and `kbqa restore` ask of the records' database: the export side, then the restore side. */
export function backupStore(db: Db) {
  return { ...backupExports(db), ...restoreImports(db) };
}

function backupExports(db: Db) {
  return {
    /** The database's name, for the manifest (informational: a restore writes wherever KBQA_MONGODB_URL points). */
    databaseName: () => db.databaseName,

    /**
     * The collections a backup holds, in export order (BACKUP_COLLECTIONS that exist), and the others that are not
     * kbqa's (system collections and TRANSIENT_COLLECTIONS are neither).
     */
    async listBackupCollections(): Promise<{ collections: BackupCollection[]; others: string[] }> {
      const names = (await storeCall(() => db.listCollections({}, { nameOnly: true }).toArray())).map(
        (entry) => entry.name,
      );
      return {
        collections: BACKUP_COLLECTIONS.filter((name) => names.includes(name)),
        others: names
          .filter(
            (name) =>
              !name.startsWith('system.') &&
              !TRANSIENT_COLLECTIONS.includes(name) &&
              !(BACKUP_COLLECTIONS as readonly string[]).includes(name),
          )
          .sort(),
      };
    },

    async listCollectionIndexes(collection: string): Promise<BackupIndex[]> {
      const indexes = await storeCall(() => db.collection(collection).listIndexes().toArray());
      return indexes
        .filter((index) => index.name !== '_id_')
        .map((index) => ({
          name: index.name as string,
          key: index.key as BackupIndex['key'],
          ...(index.unique ? { unique: true } : {}),
          ...(index.sparse ? { sparse: true } : {}),
        }));
    },

    /**
     * Each record of the collection as one line of canonical EJSON (no newline), in natural order (a sort would make
     * FerretDB read the whole collection into memory), a few at a time.
     */
    async *exportCollection(collection: string): AsyncGenerator<string> {
      // GridFS chunks are 255 KiB each: small batches keep the driver's buffer small.
      const cursor = db.collection(collection).find({}, { batchSize: collection.endsWith('.chunks') ? 16 : 200 });
      try {
        for (;;) {
          const record = await storeCall(() => cursor.next());
          if (record === null) return;
          yield BSON.EJSON.stringify(record, { relaxed: false });
        }
      } finally {
        await cursor.close();
      }
    },
  };
}

function restoreImports(db: Db) {
  return {
    importCollection: (collection: string, lines: AsyncIterable<string>) => importCollection(db, collection, lines),

    /**
     * Re-creates a collection's indexes as the backup recorded them (those openStore made already are no-ops). One
     * createIndex each: FerretDB v1 panics on a createIndexes of several when some of them exist already.
     */
    async createCollectionIndexes(collection: string, indexes: BackupIndex[]): Promise<void> {
      for (const index of indexes) {
        await storeCall(() =>
          db.collection(collection).createIndex(index.key as Record<string, IndexDirection>, {
            name: index.name,
            ...(index.unique ? { unique: true } : {}),
            ...(index.sparse ? { sparse: true } : {}),
          }),
        );
      }
    },

    /** Which of these collections hold at least one record (a restore only writes into empty ones). */
    async nonEmptyCollections(collections: string[]): Promise<string[]> {
      const found: string[] = [];
      for (const collection of collections) {
        if ((await storeCall(() => db.collection(collection).findOne({}, { projection: { _id: 1 } }))) !== null)
          found.push(collection);
      }
      return found;
    },

    /** Undoes a failed restore's import into a collection it found empty (the indexes every connect makes come back with the next one). */
    async dropCollection(collection: string): Promise<void> {
      await storeCall(() => db.collection(collection).drop()).catch((error: unknown) => {
        // Never created (the import failed before its first insert): nothing to undo.
        const { code, codeName } = error as { code?: unknown; codeName?: unknown };
        if (code !== 26 && codeName !== 'NamespaceNotFound') throw error;
      });
    },

    /** The restored ingestion jobs become claimable now (RESTORE_HOLD): once the chunk index is back. */
    async releaseRestoredJobs(now: number): Promise<number> {
      const result = await storeCall(() =>
        db.collection('ingest_jobs').updateMany({ not_before: RESTORE_HOLD }, { $set: { not_before: now } }),
      );
      return result.modifiedCount;
    },

    /** How many ingestion jobs are left (restore waits for none), without reading them. */
    countIngestJobs: () => storeCall(() => db.collection('ingest_jobs').countDocuments({})),

    /** The ids of the ingestion jobs left: the kbqa command's runner takes only the jobs it is handed. */
    async listIngestJobIds(): Promise<string[]> {
      const jobs = await storeCall(() =>
        db
          .collection<{ _id: string }>('ingest_jobs')
          .find({}, { projection: { _id: 1 } })
          .toArray(),
      );
      return jobs.map((job) => job._id);
    },
  };
}

/**
 * Inserts the records of these EJSON lines, _ids and types as they are, in ordered batches; returns how many.
 * Ingestion jobs lose their leases (the processes that held them belong to the stack the backup came from) and
 * are held (RESTORE_HOLD) until the restore releases them.
 */
async function importCollection(db: Db, collection: string, lines: AsyncIterable<string>): Promise<number> {
  const target = db.collection(collection);
  let batch: Document[] = [];
  let bytes = 0;
  let imported = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const records = batch;
    batch = [];
    bytes = 0;
    await storeCall(() => target.insertMany(records, { ordered: true }));
    imported += records.length;
  };
  for await (const line of lines) {
    if (line.length === 0) continue;
    const record = BSON.EJSON.parse(line, { relaxed: false }) as Document;
    if (collection === 'ingest_jobs')
      Object.assign(record, { lease_owner: null, lease_until: null, not_before: RESTORE_HOLD });
    batch.push(record);
    bytes += line.length;
    if (batch.length >= IMPORT_BATCH_RECORDS || bytes >= IMPORT_BATCH_BYTES) await flush();
  }
  await flush();
  return imported;
}
