// Web sessions, set-password links, failed sign-in counters and the first-account marker. Every hot path (a web
// request's session, a link, a counter) is one primary-key probe; only sign-out-everywhere and password changes
// filter by user (indexed on MongoDB; a scan of the small sessions collection on FerretDB).
import type { Collections } from './mongo.ts';
import { isDuplicateKeyError, storeCall } from './mongo.ts';
import type { PasswordLinkRecord, SessionRecord } from './records.ts';

export class FirstAccountTakenError extends Error {}

export function sessionsStore(collections: Collections) {
  const { sessions, passwordLinks, signInFailures, installation } = collections;
  return {
    insertSession: (record: SessionRecord) => storeCall(() => sessions.insertOne(record)),
    findSession: (digest: string) => storeCall(() => sessions.findOne({ _id: digest })),
    async touchSession(digest: string, at: Date): Promise<void> {
      await storeCall(() => sessions.updateOne({ _id: digest }, { $set: { last_seen_at: at } }));
    },
    async deleteSession(digest: string): Promise<boolean> {
      const result = await storeCall(() => sessions.deleteOne({ _id: digest }));
      return result.deletedCount === 1;
    },
    /** Every session of the user, but `keep` (the one asking, when it stays signed in). */
    async deleteSessionsOfUser(userId: string, keep?: string): Promise<number> {
      const filter = keep === undefined ? { user_id: userId } : { user_id: userId, _id: { $ne: keep } };
      const result = await storeCall(() => sessions.deleteMany(filter));
      return result.deletedCount;
    },

    insertPasswordLink: (record: PasswordLinkRecord) => storeCall(() => passwordLinks.insertOne(record)),
    findPasswordLink: (digest: string) => storeCall(() => passwordLinks.findOne({ _id: digest })),
    /** Compare-and-set: true for exactly one of any concurrent uses of the same link. */
    async markPasswordLinkUsed(digest: string, at: Date): Promise<boolean> {
      const result = await storeCall(() => passwordLinks.updateOne({ _id: digest, used_at: null }, { $set: { used_at: at } }));
      return result.modifiedCount === 1;
    },
    /** A new link replaces the user's earlier ones: only the newest invitation or reset works. */
    async deletePasswordLinksOfUser(userId: string): Promise<void> {
      await storeCall(() => passwordLinks.deleteMany({ user_id: userId }));
    },

    findSignInFailures: (key: string) => storeCall(() => signInFailures.findOne({ _id: key })),
    /** Counts one failure in the window that began at `windowStart` (a new window restarts the count at 1). */
    async recordSignInFailure(key: string, now: Date, windowStartedBefore: Date): Promise<void> {
      const current = await storeCall(() => signInFailures.findOne({ _id: key }));
      if (current === null || current.window_started_at < windowStartedBefore) {
        await storeCall(() =>
          signInFailures.updateOne({ _id: key }, { $set: { count: 1, window_started_at: now } }, { upsert: true }),
        );
        return;
      }
      await storeCall(() => signInFailures.updateOne({ _id: key }, { $inc: { count: 1 } }));
    },
    async clearSignInFailures(key: string): Promise<void> {
      await storeCall(() => signInFailures.deleteOne({ _id: key }));
    },

    /** Claims the one first account; FirstAccountTakenError when another request (or an earlier run) has it. */
    async claimFirstAccount(claimId: string, at: Date): Promise<void> {
      try {
        await storeCall(() => installation.insertOne({ _id: 'first_account', claimed_by: claimId, created_at: at }));
      } catch (error) {
        if (isDuplicateKeyError(error)) throw new FirstAccountTakenError('the first account already exists');
        throw error;
      }
    },
    async releaseFirstAccount(claimId: string): Promise<void> {
      await storeCall(() => installation.deleteOne({ _id: 'first_account', claimed_by: claimId }));
    },
  };
}
