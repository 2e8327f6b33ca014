// Knowledge-base use cases: create, list, get, delete (soft or permanent), restore, purge, sharing.
import { randomUUID } from 'node:crypto';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.ts';
import {
  authorizeCurateLibrary,
  authorizeLeave,
  authorizeManage,
  authorizePermanentDelete,
  authorizeRead,
  authorizeRestore,
  isPendingShare,
  roleOf,
  type KnowledgeBaseRole,
} from '../policies/knowledgeBases.ts';
import type { Caller } from './caller.ts';
import { closeAcceptedInvitation, recordDecline } from './invitationAnswers.ts';
import type { SearchIndex } from '../search/index.ts';
import type { KnowledgeBaseRecord, Page, Store, Principal } from '../store/index.ts';

export const DEFAULT_KNOWLEDGE_BASE_NAME = 'Default';

export interface ReachableKnowledgeBase {
  record: KnowledgeBaseRecord;
  role: KnowledgeBaseRole;
  /** A share the caller has not accepted yet: searched only when named (policies' isPendingShare). */
  pending: boolean;
  documentCount: number;
}

export function newKnowledgeBaseRecord(
  ownerId: string,
  name: string,
  description: string,
  isDefault: boolean,
): KnowledgeBaseRecord {
  return {
    _id: randomUUID(),
    owner_id: ownerId,
    name,
    description,
    is_default: isDefault,
    is_library: false,
    shared_user_ids: [],
    accepted_user_ids: [],
    shared_organisation_ids: [],
    created_at: new Date(),
    deleted_at: null,
  };
}

/**
 * A KB owned by the caller, unless they have `maxPerOwner` already (409). Counted before the insert, without a
 * transaction: requests racing past the count may each add one.
 */
export async function createKnowledgeBase(
  store: Store,
  user: Principal,
  input: { name: string; description?: string },
  maxPerOwner: number,
) {
  const owned = await store.countKnowledgeBasesOwnedBy(user._id);
  if (owned >= maxPerOwner) {
    throw new ConflictError(
      `knowledge bases: you have ${owned}, the most one owner may have (${maxPerOwner}, KBQA_MAX_KNOWLEDGE_BASES_PER_OWNER); delete one permanently first (soft-deleted ones count until purged)`,
    );
  }
  const record = newKnowledgeBaseRecord(user._id, input.name, input.description ?? '', false);
  await store.insertKnowledgeBase(record);
  return record;
}

/**
 * The caller's KBs: every one that reaches them but the invitations they have not accepted, which are listed apart
 * (commands/shareInvitations.ts listReceivedInvitations) — the list is what their questions search by default.
 */
export async function listKnowledgeBases(
  store: Store,
  user: Principal,
  page: { limit?: number; cursor?: string },
): Promise<Page<ReachableKnowledgeBase>> {
  const { items, nextCursor } = await store.listKnowledgeBasesInScope(user, page);
  const counts = await store.countDocumentsByKnowledgeBase(items.map((record) => record._id));
  return {
    items: items.map((record) => ({
      record,
      role: roleOf(user, record) as KnowledgeBaseRole,
      pending: isPendingShare(user, record),
      documentCount: counts.get(record._id) ?? 0,
    })),
    nextCursor,
  };
}

export async function getKnowledgeBase(store: Store, user: Principal, id: string) {
  const record = await store.findLiveKnowledgeBase(id);
  const role = authorizeRead(user, record, id);
  return { record: record as KnowledgeBaseRecord, role, pending: isPendingShare(user, record as KnowledgeBaseRecord) };
}

/**
 * Soft by default: the KB and everything in it stay stored, invisible everywhere, until restored or purged.
 * Permanent: the owner may repeat it on a KB already soft-deleted (a purge that failed half-way is retried).
 */
export async function deleteKnowledgeBase(
  store: Store,
  search: SearchIndex,
  user: Principal,
  id: string,
  permanent: boolean,
): Promise<'soft' | 'hard'> {
  const record = permanent
    ? authorizePermanentDelete(user, await store.findKnowledgeBaseIncludingDeleted(id), id)
    : authorizeManage(user, await store.findLiveKnowledgeBase(id), id);
  if (record.is_default)
    throw new BadRequestError(`knowledge base ${id} is the default knowledge base and cannot be deleted`);
  // Invisible first, so nothing reads a half-deleted KB and every ingest still in flight sees it gone when it
  // re-checks (commands/documents.ts); then, for a permanent delete, remove the data.
  if (record.deleted_at === null) await store.softDeleteKnowledgeBase(id, new Date());
  if (!permanent) return 'soft';
  await purgeKnowledgeBase(store, search, id);
  return 'hard';
}

/**
 * Removes a KB for good: everything carrying its id, chunks first, then documents and contents, then the KB record
 * last, so a failure half-way leaves a soft-deleted KB whose purge can simply run again.
 */
export async function purgeKnowledgeBase(store: Store, search: SearchIndex, id: string): Promise<void> {
  // Jobs first: an ingestion still running finds its job gone, stops, and removes what it wrote after this point.
  await store.deleteJobsOfKnowledgeBase(id);
  await search.deleteChunksOfKnowledgeBase(id);
  // What its documents held goes back to its owner's usage as each is removed (store/index.ts): once per document,
  // also when a DELETE of one of them or its failing ingestion races this.
  await store.deleteDocumentsOfKnowledgeBase(id);
  await store.deleteShareInvitationsOfKnowledgeBase(id);
  await store.deleteKnowledgeBaseRecord(id);
}

export async function restoreKnowledgeBase(store: Store, id: string): Promise<KnowledgeBaseRecord> {
  const record = await store.findKnowledgeBaseIncludingDeleted(id);
  if (!record) throw new NotFoundError(`knowledge base ${id} not found`);
  if (record.deleted_at === null) throw new BadRequestError(`knowledge base ${id} is not deleted`);
  await store.restoreKnowledgeBase(id);
  return { ...record, deleted_at: null };
}

export async function purgeDeletedKnowledgeBases(
  store: Store,
  search: SearchIndex,
  olderThanMs: number,
): Promise<string[]> {
  const expired = await store.listSoftDeletedBefore(new Date(Date.now() - olderThanMs));
  for (const record of expired) await purgeKnowledgeBase(store, search, record._id);
  return expired.map((record) => record._id);
}

/** The caller's soft-deleted KBs they can still restore (deleted within the retention period). */
export async function listRecentlyDeletedKnowledgeBases(
  store: Store,
  user: Principal,
  retentionMs: number,
): Promise<KnowledgeBaseRecord[]> {
  return store.listSoftDeletedOwnedBy(user._id, new Date(Date.now() - retentionMs));
}

/** An owner undoes their soft delete within the retention period (the admin CLI's restore has no such limit). */
export async function restoreOwnKnowledgeBase(
  store: Store,
  user: Principal,
  id: string,
  retentionMs: number,
): Promise<KnowledgeBaseRecord> {
  authorizeRestore(user, await store.findKnowledgeBaseIncludingDeleted(id), id, retentionMs, Date.now());
  return restoreKnowledgeBase(store, id);
}

/** The caller's relation to a KB, and whether it waits for them to accept it. */
export interface Membership {
  id: string;
  role: KnowledgeBaseRole;
  pending: boolean;
}

export async function getMembership(store: Store, user: Principal, id: string): Promise<Membership> {
  const { role, pending } = await getKnowledgeBase(store, user, id);
  return { id, role, pending };
}

/**
 * The recipient accepts a share: from now on their questions that name no KB search it too. Repeating it, or
 * accepting a KB that reaches them otherwise (owner, organisation, library: in scope already), changes nothing.
 */
export async function acceptKnowledgeBaseShare(store: Store, user: Principal, id: string): Promise<Membership> {
  const record = await store.findLiveKnowledgeBase(id);
  const role = authorizeRead(user, record, id);
  if (isPendingShare(user, record as KnowledgeBaseRecord)) {
    // The owner unshared it between the read and the write.
    if (!(await store.acceptSharedUser(id, user._id))) throw NotFoundError.knowledgeBase(id);
    await closeAcceptedInvitation(store, user, id);
  }
  return { id, role, pending: false };
}

/**
 * The recipient leaves a KB shared with them, or declines the invitation: it no longer reaches them that way. A
 * decline sticks (the owner's later shares of it with them change nothing); someone who left after accepting can
 * be invited again, and decline then.
 */
export async function leaveKnowledgeBase(store: Store, user: Principal, id: string): Promise<void> {
  const record = authorizeLeave(user, await store.findLiveKnowledgeBase(id), id);
  if (isPendingShare(user, record)) await recordDecline(store, user, record);
  await store.removeSharedUser(id, user._id);
}

/** The owner shares with (or stops sharing with) their own organisation: its members get `org-member`. */
export async function setKnowledgeBaseOrganisationSharing(
  store: Store,
  user: Principal,
  id: string,
  shared: boolean,
): Promise<void> {
  authorizeManage(user, await store.findLiveKnowledgeBase(id), id);
  if (!user.organisation_id)
    throw new BadRequestError('you belong to no organisation; an administrator adds you to one (kbqa orgs add-member)');
  await store.shareWithOrganisation(id, user.organisation_id, shared);
}

/** An admin marks a live KB they can see as `library` (curated, read-only for everyone), or unmarks it. */
export async function curateLibraryKnowledgeBase(
  store: Store,
  caller: Caller,
  id: string,
  isLibrary: boolean,
): Promise<KnowledgeBaseRecord> {
  authorizeCurateLibrary(caller);
  const record = await store.findLiveKnowledgeBase(id);
  authorizeRead(caller.user, record, id);
  await store.setLibrary(id, isLibrary);
  return { ...(record as KnowledgeBaseRecord), is_library: isLibrary };
}
