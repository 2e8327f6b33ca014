// Each user's stored documents and bytes, one record by user id (`user_usage`), so a quota check is one primary-key
// probe and never a scan of the documents. Kept by counting: a reservation before a document is written, a release
// when one is removed, by the one deleter whose delete removed the record (store/index.ts). Without transactions the
// record can drift from the documents (a process dying between the two writes, or, on FerretDB only, two API
// processes updating it at once); `kbqa doctor` reports a drift and `--fix` (or `kbqa users recount-usage`) sets the
// record from the documents again, and a missing record is counted from them on first use.
import type { Collections } from './mongo.ts';
import { isDuplicateKeyError, storeCall } from './mongo.ts';
import type { UsageRecord } from './records.ts';
import { serialisedPerKey } from './serialisedPerKey.ts';

export interface Usage {
  documents: number;
  bytes: number;
}

export type Reservation = { reserved: true } | { reserved: false; usage: Usage };

export function usageStore(collections: Collections) {
  const { usage, knowledgeBases, documents, ingestJobs } = collections;
  // FerretDB v1 reads then writes a filtered update: two at once could both pass the limit. One at a time per user
  // in this process; on MongoDB the conditional $inc is atomic across processes as well.
  const serialised = serialisedPerKey();

  async function ownedKnowledgeBaseIds(ownerId: string): Promise<string[]> {
    // Soft-deleted KBs too: their documents stay stored until the purge.
    const records = await storeCall(() =>
      knowledgeBases.find({ owner_id: ownerId }, { projection: { _id: 1 } }).toArray(),
    );
    return records.map((record) => record._id);
  }

  /** The document records of these KBs and their stored_bytes: a scan of those KBs' documents. */
  async function sumDocuments(ids: string[]): Promise<Usage> {
    if (ids.length === 0) return { documents: 0, bytes: 0 };
    // Summed here, not by $group: FerretDB v1's $sum of a field path answered 0 (measured).
    const records = await storeCall(() =>
      documents.find({ knowledge_base_id: { $in: ids } }, { projection: { _id: 0, stored_bytes: 1 } }).toArray(),
    );
    return {
      documents: records.length,
      bytes: records.reduce((total, record) => total + (record.stored_bytes ?? 0), 0),
    };
  }

  /** What the documents say of the owner's usage (an admin repair, or a first use). */
  const countStoredDocuments = async (ownerId: string) => sumDocuments(await ownedKnowledgeBaseIds(ownerId));

  return {
    findUsage: (userId: string) => storeCall(() => usage.findOne({ _id: userId })),
    /** A deleted account's record (its KBs' purge then releases into nothing: updates without upsert). */
    deleteUsage: (userId: string) => storeCall(() => usage.deleteOne({ _id: userId })),
    /** Every usage record (an admin scan: `kbqa doctor` compares each with the documents). */
    listUsage: () => storeCall(() => usage.find({}).toArray()),
    /** What the user's documents hold, counted from them: what the record should say. */
    countStoredUsage: countStoredDocuments,
    /**
     * The owner's documents waiting for ingestion (queued or processing): their jobs, counted in the jobs collection,
     * which only ever holds work in flight (so the count needs no record of its own and cannot drift).
     */
    async countQueuedDocuments(ownerId: string): Promise<number> {
      const ids = await ownedKnowledgeBaseIds(ownerId);
      return ids.length === 0 ? 0 : storeCall(() => ingestJobs.countDocuments({ knowledge_base_id: { $in: ids } }));
    },
    /**
     * Adds `delta` to the user's usage if the result stays within `limits`: one conditional $inc, so a reservation
     * either fits whole or changes nothing. A negative part (a smaller replacement) always fits.
     */
    reserveUsage(userId: string, delta: Usage, limits: Usage): Promise<Reservation> {
      return serialised(userId, async () => {
        const filter = {
          _id: userId,
          ...(delta.documents > 0 ? { documents: { $lte: limits.documents - delta.documents } } : {}),
          ...(delta.bytes > 0 ? { bytes: { $lte: limits.bytes - delta.bytes } } : {}),
        };
        const reserve = () =>
          storeCall(() => usage.updateOne(filter, { $inc: { documents: delta.documents, bytes: delta.bytes } }));
        if (delta.documents === 0 && delta.bytes === 0) return { reserved: true };
        // The $inc first: in the common case (a record that has room) one round trip. Only when it changed nothing
        // is the record read: missing (the user's first reservation), it is counted from the documents and written,
        // and the $inc tried again; present, the reservation did not fit.
        if ((await reserve()).modifiedCount === 1) return { reserved: true };
        let current = await storeCall(() => usage.findOne({ _id: userId }));
        if (!current) {
          const counted = await countStoredDocuments(userId);
          try {
            await storeCall(() => usage.insertOne({ _id: userId, ...counted }));
          } catch (error) {
            // Another process counted first: its record stands.
            if (!isDuplicateKeyError(error)) throw error;
          }
          if ((await reserve()).modifiedCount === 1) return { reserved: true };
          current = await storeCall(() => usage.findOne({ _id: userId }));
        }
        return { reserved: false, usage: { documents: current?.documents ?? 0, bytes: current?.bytes ?? 0 } };
      });
    },
    /** Gives back what a deleted document (or a reservation whose write failed) held. */
    releaseUsage(userId: string, delta: Usage): Promise<void> {
      return serialised(userId, async () => {
        await storeCall(() =>
          usage.updateOne({ _id: userId }, { $inc: { documents: -delta.documents, bytes: -delta.bytes } }),
        );
      });
    },
    /** The repair: the record set from the documents. */
    recountUsage(userId: string): Promise<Usage> {
      return serialised(userId, async () => {
        const counted = await countStoredDocuments(userId);
        await storeCall(() => usage.updateOne({ _id: userId }, { $set: counted }, { upsert: true }));
        return counted;
      });
    },
  };
}
