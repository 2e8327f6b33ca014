import { randomUUID } from 'node:crypto';
import { EmailTakenError } from '../errors.ts';
import type { Collections } from './mongo.ts';
import { isDuplicateKeyError, storeCall } from './mongo.ts';
import type { UserRecord } from './records.ts';

export function usersStore(collections: Collections) {
  const users = collections.users;
  return {
    async insertUser(
      email: string,
      organisationId: string | null,
      options: { passwordHash?: string | null; isAdmin?: boolean } = {},
    ): Promise<UserRecord> {
      const record: UserRecord = {
        _id: randomUUID(),
        email: email.toLowerCase(),
        organisation_id: organisationId,
        created_at: new Date(),
        password_hash: options.passwordHash ?? null,
        is_admin: options.isAdmin ?? false,
      };
      try {
        await storeCall(() => users.insertOne(record));
      } catch (error) {
        if (isDuplicateKeyError(error)) throw new EmailTakenError(email);
        throw error;
      }
      return record;
    },
    findUserById: (id: string) => storeCall(() => users.findOne({ _id: id })),
    /** Users by id, for showing who a KB is shared with (few ids; one round trip). */
    findUsersByIds: (ids: string[]) =>
      ids.length === 0
        ? Promise.resolve([])
        : storeCall(() => users.find({ _id: { $in: ids } }, { projection: { password_hash: 0 } }).toArray()),
    findUserByEmail: (email: string) => storeCall(() => users.findOne({ email: email.toLowerCase() })),
    /** Is there any user at all? (The web app's first run offers "Create the first account" until there is.) */
    async hasAnyUser(): Promise<boolean> {
      return (await storeCall(() => users.findOne({}, { projection: { _id: 1 } }))) !== null;
    },
    listUsers: () =>
      storeCall(() =>
        users
          .find({}, { projection: { password_hash: 0 } })
          .sort({ created_at: 1, _id: 1 })
          .toArray(),
      ),
    /**
     * The user's organisation, and the copies of it every key and session of the user carries (records.ts:
     * ApiKeyRecord, SessionRecord).
     */
    async setUserOrganisation(userId: string, organisationId: string | null): Promise<void> {
      await storeCall(() => users.updateOne({ _id: userId }, { $set: { organisation_id: organisationId } }));
      await storeCall(() =>
        collections.apiKeys.updateMany({ user_id: userId }, { $set: { organisation_id: organisationId } }),
      );
      await storeCall(() =>
        collections.sessions.updateMany({ user_id: userId }, { $set: { organisation_id: organisationId } }),
      );
    },
    async setUserPasswordHash(userId: string, passwordHash: string): Promise<void> {
      await storeCall(() => users.updateOne({ _id: userId }, { $set: { password_hash: passwordHash } }));
    },
    deleteUser: (id: string) => storeCall(() => users.deleteOne({ _id: id })),
  };
}
