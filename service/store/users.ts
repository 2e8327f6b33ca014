import { randomUUID } from 'node:crypto';
import type { Collections } from './mongo.ts';
import { isDuplicateKeyError, storeCall } from './mongo.ts';
import type { UserRecord } from './records.ts';

export class DuplicateEmailError extends Error {}

export function usersStore(collections: Collections) {
  const users = collections.users;
  return {
    async insertUser(email: string, organisationId: string | null): Promise<UserRecord> {
      const record: UserRecord = { _id: randomUUID(), email: email.toLowerCase(), organisation_id: organisationId, created_at: new Date() };
      try {
        await storeCall(() => users.insertOne(record));
      } catch (error) {
        if (isDuplicateKeyError(error)) throw new DuplicateEmailError(`a user with email ${record.email} already exists`);
        throw error;
      }
      return record;
    },
    findUserById: (id: string) => storeCall(() => users.findOne({ _id: id })),
    findUserByEmail: (email: string) => storeCall(() => users.findOne({ email: email.toLowerCase() })),
    /** The user's organisation, and the copy of it every key of the user carries (records.ts: ApiKeyRecord). */
    async setUserOrganisation(userId: string, organisationId: string | null): Promise<void> {
      await storeCall(() => users.updateOne({ _id: userId }, { $set: { organisation_id: organisationId } }));
      await storeCall(() => collections.apiKeys.updateMany({ user_id: userId }, { $set: { organisation_id: organisationId } }));
    },
    deleteUser: (id: string) => storeCall(() => users.deleteOne({ _id: id })),
  };
}
