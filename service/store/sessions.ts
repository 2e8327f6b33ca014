// Web sessions, set-password links, failed sign-in counters and the first-account marker. Every hot path (a web
// request's session, a link, a counter) is one primary-key probe; only sign-out-everywhere and password changes
// filter by user (indexed on MongoDB; a scan of the small sessions collection on FerretDB).
import { FirstAccountTakenError } from '../errors.ts';
import type { Collections } from './mongo.ts';
import { isDuplicateKeyError, storeCall } from './mongo.ts';
import type { PasswordLinkRecord, SessionRecord, SignInFailuresRecord } from './records.ts';
import { serialisedPerKey } from './serialisedPerKey.ts';

export function sessionsStore(collections: Collections) {
  const { sessions, passwordLinks, signInFailures, installation } = collections;
  const serialised = serialisedPerKey();

  /** One attempt counted: increment a live window, restart an old one, or create a missing one. */
  async function countAttemptOnce(
    key: string,
    now: Date,
    windowMs: number,
  ): Promise<{ count: number; windowStartedAt: Date }> {
    const cutoff = new Date(now.getTime() - windowMs);
    const counted = await storeCall(() =>
      signInFailures.findOneAndUpdate(
        { _id: key, window_started_at: { $gt: cutoff } },
        { $inc: { count: 1 } },
        { returnDocument: 'after' },
      ),
    );
    if (counted) return { count: counted.count, windowStartedAt: counted.window_started_at };
    await storeCall(() =>
      signInFailures.updateOne({ _id: key }, { $set: { count: 1, window_started_at: now } }, { upsert: true }),
    );
    return { count: 1, windowStartedAt: now };
  }

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
      const result = await storeCall(() =>
        passwordLinks.updateOne({ _id: digest, used_at: null }, { $set: { used_at: at } }),
      );
      return result.modifiedCount === 1;
    },
    /** A new link replaces the user's earlier ones: only the newest invitation or reset works. */
    async deletePasswordLinksOfUser(userId: string): Promise<void> {
      await storeCall(() => passwordLinks.deleteMany({ user_id: userId }));
    },

    /**
     * Counts one sign-in attempt against `key` and returns the count in the current window. Attempts on one key are
     * serialised, so each gets its own number and a burst cannot all read "one left".
     */
    countSignInAttempt(key: string, now: Date, windowMs: number): Promise<{ count: number; windowStartedAt: Date }> {
      return serialised(key, () => countAttemptOnce(key, now, windowMs));
    },
    /**
     * The account-at-address counter, read and rewritten by `next` (the sign-in rules, commands/sessions.ts), whose
     * `outcome` is returned; a null `record` leaves it as it was. Serialised per key like countSignInAttempt.
     */
    updateSignInCounter<T>(
      key: string,
      next: (current: SignInFailuresRecord | null) => { record: SignInFailuresRecord | null; outcome: T },
    ): Promise<T> {
      return serialised(key, async () => {
        const current = await storeCall(() => signInFailures.findOne({ _id: key }));
        const { record, outcome } = next(current);
        if (record) await storeCall(() => signInFailures.replaceOne({ _id: key }, record, { upsert: true }));
        return outcome;
      });
    },
    /** A successful attempt is no failure: it gives its count back (the address) or clears the slate (the account). */
    uncountSignInAttempt(key: string): Promise<void> {
      return serialised(key, async () => {
        await storeCall(() => signInFailures.updateOne({ _id: key, count: { $gt: 0 } }, { $inc: { count: -1 } }));
      });
    },
    clearSignInFailures(key: string): Promise<void> {
      return serialised(key, async () => {
        await storeCall(() => signInFailures.deleteOne({ _id: key }));
      });
    },

    /**
     * What no request will ever use again: sessions past their absolute or idle expiry, failure windows long over,
     * used or expired links. Start-up and an hourly timer call it (FerretDB has no TTL index).
     */
    async deleteExpiredWebRecords(now: Date, idleMs: number, windowMs: number): Promise<number> {
      const results = await Promise.all([
        storeCall(() =>
          sessions.deleteMany({
            $or: [{ expires_at: { $lte: now } }, { last_seen_at: { $lte: new Date(now.getTime() - idleMs) } }],
          }),
        ),
        storeCall(() =>
          signInFailures.deleteMany({
            $or: [
              { keep_until: { $lte: now } },
              { keep_until: { $exists: false }, window_started_at: { $lte: new Date(now.getTime() - windowMs) } },
            ],
          }),
        ),
        storeCall(() => passwordLinks.deleteMany({ $or: [{ used_at: { $ne: null } }, { expires_at: { $lte: now } }] })),
      ]);
      return results.reduce((total, result) => total + result.deletedCount, 0);
    },

    /** Claims the one first account; FirstAccountTakenError when another request (or an earlier run) has it. */
    async claimFirstAccount(claimId: string, at: Date): Promise<void> {
      try {
        await storeCall(() => installation.insertOne({ _id: 'first_account', claimed_by: claimId, created_at: at }));
      } catch (error) {
        if (isDuplicateKeyError(error)) throw new FirstAccountTakenError();
        throw error;
      }
    },
    findFirstAccountClaim: () => storeCall(() => installation.findOne({ _id: 'first_account' })),
    async releaseFirstAccount(claimId: string): Promise<void> {
      await storeCall(() => installation.deleteOne({ _id: 'first_account', claimed_by: claimId }));
    },
  };
}
