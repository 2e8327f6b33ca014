import type { Filter } from 'mongodb';
import type { Collections } from './mongo.ts';
import { storeCall } from './mongo.ts';
import { NEWEST_FIRST, afterCursor, toPage, type Page } from './pagination.ts';
import type { KnowledgeBaseRecord } from './records.ts';

export interface Reader {
  _id: string;
  organisation_id: string | null;
}

/**
 * Live KBs that reach a user in any role. policies/knowledgeBases.ts decides WHICH role; this filter must select
 * exactly the KBs for which that function returns a role.
 */
function reachableBy(reader: Reader): Filter<KnowledgeBaseRecord> {
  const routes: Filter<KnowledgeBaseRecord>[] = [
    { owner_id: reader._id },
    { shared_user_ids: reader._id },
    { is_library: true },
  ];
  if (reader.organisation_id) routes.push({ shared_organisation_ids: reader.organisation_id });
  return { deleted_at: null, $or: routes };
}

/**
 * Live KBs a question without `knowledge_base_ids` searches: reachableBy less the shares not accepted. This filter
 * must select exactly the KBs for which policies/knowledgeBases.ts' inDefaultScope is true.
 */
function inDefaultScopeOf(reader: Reader): Filter<KnowledgeBaseRecord> {
  const routes: Filter<KnowledgeBaseRecord>[] = [
    { owner_id: reader._id },
    { shared_user_ids: reader._id, accepted_user_ids: reader._id },
    { is_library: true },
  ];
  if (reader.organisation_id) routes.push({ shared_organisation_ids: reader.organisation_id });
  return { deleted_at: null, $or: routes };
}

export function knowledgeBasesStore(collections: Collections) {
  const knowledgeBases = collections.knowledgeBases;
  return {
    ...knowledgeBaseReads(knowledgeBases),
    ...knowledgeBaseLifecycle(knowledgeBases),
    ...knowledgeBaseSharing(knowledgeBases),
  };
}

type KnowledgeBases = Collections['knowledgeBases'];

/** Inserting a KB and finding KBs: by id, by who can reach them, by owner. */
function knowledgeBaseReads(knowledgeBases: KnowledgeBases) {
  return {
    insertKnowledgeBase: (record: KnowledgeBaseRecord) => storeCall(() => knowledgeBases.insertOne(record)),

    /**
     * A live KB by id (soft-deleted ones are invisible to the API). Deletion is checked here, not in the filter,
     * so the lookup stays a primary-key probe (FerretDB's SQLite backend pushes down nothing but bare _id).
     */
    async findLiveKnowledgeBase(id: string): Promise<KnowledgeBaseRecord | null> {
      const record = await storeCall(() => knowledgeBases.findOne({ _id: id }));
      return record && record.deleted_at === null ? record : null;
    },

    /** Any KB by id, deleted or not: for the admin CLI (restore, purge). */
    findKnowledgeBaseIncludingDeleted: (id: string) => storeCall(() => knowledgeBases.findOne({ _id: id })),

    /**
     * The live KBs among `ids` (a query names at most 100), in ONE round trip: one id (the common case) is a
     * primary-key probe; several are one `$in` on _id, which MongoDB serves from the _id index. (FerretDB's SQLite
     * backend scans for `$in`, but one scan beats a hundred parallel probes of the same pool.)
     */
    async findLiveKnowledgeBases(ids: string[]): Promise<KnowledgeBaseRecord[]> {
      if (ids.length === 0) return [];
      const found =
        ids.length === 1
          ? [await storeCall(() => knowledgeBases.findOne({ _id: ids[0] }))]
          : await storeCall(() => knowledgeBases.find({ _id: { $in: ids } }).toArray());
      return found.filter((record): record is KnowledgeBaseRecord => record !== null && record.deleted_at === null);
    },

    /**
     * The KBs a user's list shows: those in their default scope, so every reachable KB but the invitations they have
     * not accepted (listed apart: listPendingSharesOf).
     */
    async listKnowledgeBasesInScope(
      reader: Reader,
      page: { limit?: number; cursor?: string },
    ): Promise<Page<KnowledgeBaseRecord>> {
      const filter: Filter<KnowledgeBaseRecord> = page.cursor
        ? { $and: [inDefaultScopeOf(reader), afterCursor<KnowledgeBaseRecord>(page.cursor)] }
        : inDefaultScopeOf(reader);
      let cursor = knowledgeBases.find(filter).sort(NEWEST_FIRST);
      if (page.limit !== undefined) cursor = cursor.limit(page.limit + 1);
      const records = await storeCall(() => cursor.toArray());
      return toPage(records, page.limit);
    },

    /**
     * Live KBs shared with the user and not accepted, newest first, at most `max`: their invitations (a KB that
     * reaches them otherwise as well is no invitation; the caller checks with policies' isPendingShare).
     */
    listPendingSharesOf: (userId: string, max: number) =>
      storeCall(() =>
        knowledgeBases
          .find({ deleted_at: null, shared_user_ids: userId, accepted_user_ids: { $ne: userId } })
          .sort(NEWEST_FIRST)
          .limit(max)
          .toArray(),
      ),

    /** The KBs of one owner (deleted ones too) shared with the user and not accepted: what a block withdraws. */
    listPendingSharesFrom: (ownerId: string, userId: string) =>
      storeCall(() =>
        knowledgeBases
          .find({ owner_id: ownerId, shared_user_ids: userId, accepted_user_ids: { $ne: userId } })
          .toArray(),
      ),

    listReachableKnowledgeBaseIds: async (reader: Reader): Promise<string[]> => {
      const records = await storeCall(() =>
        knowledgeBases
          .find(reachableBy(reader), { projection: { _id: 1 } })
          .sort(NEWEST_FIRST)
          .toArray(),
      );
      return records.map((record) => record._id);
    },

    /**
     * The ids a question without `knowledge_base_ids` searches, newest first, at most `max + 1` of them: one more
     * than a query may search tells the caller there are too many without reading them all.
     */
    listDefaultScopeKnowledgeBaseIds: async (reader: Reader, max: number): Promise<string[]> => {
      const records = await storeCall(() =>
        knowledgeBases
          .find(inDefaultScopeOf(reader), { projection: { _id: 1 } })
          .sort(NEWEST_FIRST)
          .limit(max + 1)
          .toArray(),
      );
      return records.map((record) => record._id);
    },

    /** KBs an owner has, soft-deleted ones included (they keep their data until purged, and may be restored). */
    countKnowledgeBasesOwnedBy: (ownerId: string) =>
      storeCall(() => knowledgeBases.countDocuments({ owner_id: ownerId })),
  };
}

/** Soft deletion, restore and purge, and the listings the admin CLI and `kbqa doctor` read them by. */
function knowledgeBaseLifecycle(knowledgeBases: KnowledgeBases) {
  return {
    async softDeleteKnowledgeBase(id: string, at: Date): Promise<boolean> {
      const result = await storeCall(() =>
        knowledgeBases.updateOne({ _id: id, deleted_at: null }, { $set: { deleted_at: at } }),
      );
      return result.modifiedCount === 1;
    },
    async restoreKnowledgeBase(id: string): Promise<boolean> {
      const result = await storeCall(() =>
        knowledgeBases.updateOne({ _id: id, deleted_at: { $ne: null } }, { $set: { deleted_at: null } }),
      );
      return result.modifiedCount === 1;
    },
    async deleteKnowledgeBaseRecord(id: string): Promise<void> {
      await storeCall(() => knowledgeBases.deleteOne({ _id: id }));
    },
    listSoftDeletedBefore: (cutoff: Date) =>
      storeCall(() => knowledgeBases.find({ deleted_at: { $ne: null, $lt: cutoff } }).toArray()),
    async setLibrary(id: string, isLibrary: boolean): Promise<void> {
      await storeCall(() => knowledgeBases.updateOne({ _id: id }, { $set: { is_library: isLibrary } }));
    },
    /** Every KB id, deleted or not, for `kbqa doctor`: a record that exists at all still owns its data. */
    async listAllKnowledgeBaseIds(): Promise<string[]> {
      const records = await storeCall(() => knowledgeBases.find({}, { projection: { _id: 1 } }).toArray());
      return records.map((record) => record._id);
    },
    /** The owner's soft-deleted KBs deleted at or after `since` (the restorable ones), newest deletion first. */
    listSoftDeletedOwnedBy: (ownerId: string, since: Date) =>
      storeCall(() =>
        knowledgeBases
          .find({ owner_id: ownerId, deleted_at: { $ne: null, $gte: since } })
          .sort({ deleted_at: -1, _id: -1 })
          .toArray(),
      ),
    listKnowledgeBasesOwnedBy: (ownerId: string) =>
      storeCall(() => knowledgeBases.find({ owner_id: ownerId }).toArray()),
  };
}

/** Shares with users (invitation, acceptance, removal) and with an organisation. */
function knowledgeBaseSharing(knowledgeBases: KnowledgeBases) {
  return {
    /** Shares with a user: an invitation until they accept, or (`accepted`, an operator's share) in force at once. */
    async addSharedUser(id: string, userId: string, accepted: boolean): Promise<void> {
      const update = accepted
        ? { $addToSet: { shared_user_ids: userId, accepted_user_ids: userId } }
        : { $addToSet: { shared_user_ids: userId } };
      await storeCall(() => knowledgeBases.updateOne({ _id: id }, update));
    },
    /**
     * An invitation reaches its recipient: pending in `shared_user_ids`. Null (an address without an account): the
     * same update on the same record, matching nothing, so both cost one primary-key round trip.
     */
    async deliverInvitation(id: string, userId: string | null): Promise<void> {
      const filter = userId === null ? { _id: id, owner_id: { $exists: false } } : { _id: id };
      await storeCall(() => knowledgeBases.updateOne(filter, { $addToSet: { shared_user_ids: userId ?? '' } }));
    },
    /** The recipient accepts: only while the KB is still shared with them (an unshare may have come first). */
    async acceptSharedUser(id: string, userId: string): Promise<boolean> {
      const result = await storeCall(() =>
        knowledgeBases.updateOne({ _id: id, shared_user_ids: userId }, { $addToSet: { accepted_user_ids: userId } }),
      );
      return result.matchedCount === 1;
    },
    /** The owner unshares, an operator unshares, or the recipient leaves: the share and its acceptance both go. */
    async removeSharedUser(id: string, userId: string): Promise<void> {
      await storeCall(() =>
        knowledgeBases.updateOne({ _id: id }, { $pull: { shared_user_ids: userId, accepted_user_ids: userId } }),
      );
    },
    /** A deleted account: every share with it, pending or accepted, goes. */
    async removeSharedUserEverywhere(userId: string): Promise<void> {
      await storeCall(() =>
        knowledgeBases.updateMany(
          { shared_user_ids: userId },
          { $pull: { shared_user_ids: userId, accepted_user_ids: userId } },
        ),
      );
    },
    async shareWithOrganisation(id: string, organisationId: string, shared: boolean): Promise<void> {
      const update = shared
        ? { $addToSet: { shared_organisation_ids: organisationId } }
        : { $pull: { shared_organisation_ids: organisationId } };
      await storeCall(() => knowledgeBases.updateOne({ _id: id }, update));
    },
  };
}
