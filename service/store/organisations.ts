import { randomUUID } from 'node:crypto';
import { OrganisationNameTakenError } from '../errors.ts';
import type { Collections } from './mongo.ts';
import { isDuplicateKeyError, storeCall } from './mongo.ts';
import type { OrganisationRecord } from './records.ts';

export function organisationsStore(collections: Collections) {
  const organisations = collections.organisations;
  return {
    async insertOrganisation(name: string): Promise<OrganisationRecord> {
      const record: OrganisationRecord = { _id: randomUUID(), name, created_at: new Date() };
      try {
        await storeCall(() => organisations.insertOne(record));
      } catch (error) {
        if (isDuplicateKeyError(error)) throw new OrganisationNameTakenError(name);
        throw error;
      }
      return record;
    },
    findOrganisationByName: (name: string) => storeCall(() => organisations.findOne({ name })),
    findOrganisationById: (id: string) => storeCall(() => organisations.findOne({ _id: id })),
  };
}
