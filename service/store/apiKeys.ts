import type { Collections } from './mongo.ts';
import { storeCall } from './mongo.ts';
import type { ApiKeyRecord } from './records.ts';

// last_used_at is advisory; writing it on every request would double the auth path's cost, so each process
// writes it at most once a minute per key (this map throttles writes; it never answers an authentication).
const LAST_USED_RESOLUTION_MS = 60_000;

export function apiKeysStore(collections: Collections) {
  const { apiKeys, apiKeyUsage } = collections;
  const lastWritten = new Map<string, number>();
  return {
    insertApiKey: (record: ApiKeyRecord) => storeCall(() => apiKeys.insertOne(record)),
    /**
     * The live (not revoked) key with this digest: one _id lookup, no secret ever compared in JS. Revocation is
     * checked here, not in the filter, so the lookup stays a primary-key probe.
     */
    async findLiveApiKeyByDigest(digest: string): Promise<ApiKeyRecord | null> {
      const record = await storeCall(() => apiKeys.findOne({ _id: digest }));
      return record && record.revoked_at === null ? record : null;
    },
    listApiKeysOfUser: (userId: string) =>
      storeCall(() => apiKeys.find({ user_id: userId }).sort({ created_at: -1, _id: -1 }).toArray()),
    findApiKeyById: (id: string) => storeCall(() => apiKeys.findOne({ id })),
    async revokeApiKey(id: string): Promise<boolean> {
      const result = await storeCall(() =>
        apiKeys.updateOne({ id, revoked_at: null }, { $set: { revoked_at: new Date() } }),
      );
      return result.modifiedCount === 1;
    },
    /** Every live key of the user at once (a reset, "sign out everywhere"): how many were revoked. */
    async revokeApiKeysOfUser(userId: string, at: Date): Promise<number> {
      const result = await storeCall(() =>
        apiKeys.updateMany({ user_id: userId, revoked_at: null }, { $set: { revoked_at: at } }),
      );
      return result.modifiedCount;
    },
    async touchApiKey(keyId: string, now: Date): Promise<void> {
      const previous = lastWritten.get(keyId);
      if (previous !== undefined && now.getTime() - previous < LAST_USED_RESOLUTION_MS) return;
      lastWritten.set(keyId, now.getTime());
      await storeCall(() => apiKeyUsage.updateOne({ _id: keyId }, { $set: { last_used_at: now } }, { upsert: true }));
    },
    async findApiKeyLastUsed(keyId: string): Promise<Date | null> {
      return (await storeCall(() => apiKeyUsage.findOne({ _id: keyId })))?.last_used_at ?? null;
    },
  };
}
