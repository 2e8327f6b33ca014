// Who may do what to a knowledge base. Pure functions; the store's reachability filters (store/knowledgeBases.ts)
// select exactly the KBs for which roleOf returns a role (reachableBy) and for which inDefaultScope is true
// (inDefaultScopeOf).
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { KnowledgeBaseRecord, Principal } from '../store/index.ts';

export type KnowledgeBaseRole = 'owner' | 'viewer' | 'org-member' | 'library';

/** The first role that applies, in this order; null when the KB is invisible to the user. */
export function roleOf(user: Principal, knowledgeBase: KnowledgeBaseRecord): KnowledgeBaseRole | null {
  if (knowledgeBase.deleted_at !== null) return null;
  if (knowledgeBase.owner_id === user._id) return 'owner';
  if (knowledgeBase.shared_user_ids.includes(user._id)) return 'viewer';
  if (user.organisation_id !== null && knowledgeBase.shared_organisation_ids.includes(user.organisation_id))
    return 'org-member';
  if (knowledgeBase.is_library) return 'library';
  return null;
}

/**
 * Whether a question that names no KB searches this one. Every reachable KB but a share its recipient has not
 * accepted: a share is content pushed at someone, so it is searched only once they say so (or when they name it).
 */
export function inDefaultScope(user: Principal, knowledgeBase: KnowledgeBaseRecord): boolean {
  if (knowledgeBase.deleted_at !== null) return false;
  if (knowledgeBase.owner_id === user._id) return true;
  const accepted = knowledgeBase.accepted_user_ids ?? [];
  if (knowledgeBase.shared_user_ids.includes(user._id) && accepted.includes(user._id)) return true;
  if (user.organisation_id !== null && knowledgeBase.shared_organisation_ids.includes(user.organisation_id))
    return true;
  return knowledgeBase.is_library;
}

/** A share waiting for its recipient: listed to them (`viewer`), searched only when named, until they accept. */
export function isPendingShare(user: Principal, knowledgeBase: KnowledgeBaseRecord): boolean {
  return roleOf(user, knowledgeBase) === 'viewer' && !inDefaultScope(user, knowledgeBase);
}

/**
 * Leaving (or declining) is for a KB shared with the caller directly; an owner deletes theirs, and organisation and
 * library KBs are left by whoever made them so (the owner, an administrator). Invisible: 404.
 */
export function authorizeLeave(
  user: Principal,
  knowledgeBase: KnowledgeBaseRecord | null,
  id: string,
): KnowledgeBaseRecord {
  const role = authorizeRead(user, knowledgeBase, id);
  if (role === 'owner')
    throw new ForbiddenError(`knowledge base ${id}: you own it, so you cannot leave it (delete it instead)`);
  if (role !== 'viewer') {
    throw new ForbiddenError(
      `knowledge base ${id} reaches you as ${role}, not shared with you directly: only its owner or an administrator can change that`,
    );
  }
  return knowledgeBase as KnowledgeBaseRecord;
}

/** Reads (get, list, documents list, query) need any role. Unknown and invisible look the same: 404. */
export function authorizeRead(
  user: Principal,
  knowledgeBase: KnowledgeBaseRecord | null,
  id: string,
): KnowledgeBaseRole {
  const role = knowledgeBase ? roleOf(user, knowledgeBase) : null;
  if (role === null) throw NotFoundError.knowledgeBase(id);
  return role;
}

/**
 * Managing a KB (deleting it, sharing and unsharing it) needs `owner`; a KB the caller can see but not own is 403,
 * one it cannot see is 404.
 */
export function authorizeManage(
  user: Principal,
  knowledgeBase: KnowledgeBaseRecord | null,
  id: string,
): KnowledgeBaseRecord {
  const role = authorizeRead(user, knowledgeBase, id);
  if (role !== 'owner') throw ForbiddenError.knowledgeBase(id);
  return knowledgeBase as KnowledgeBaseRecord;
}

/**
 * Restoring a soft-deleted KB: its owner, within the retention period. Anything else (someone else's, live, past
 * retention, unknown) is 404: a deleted KB is invisible to everyone but its owner.
 */
export function authorizeRestore(
  user: Principal,
  knowledgeBase: KnowledgeBaseRecord | null,
  id: string,
  retentionMs: number,
  now: number,
): KnowledgeBaseRecord {
  if (
    !knowledgeBase ||
    knowledgeBase.owner_id !== user._id ||
    knowledgeBase.deleted_at === null ||
    knowledgeBase.deleted_at.getTime() + retentionMs <= now
  ) {
    throw new NotFoundError(`no recently deleted knowledge base ${id}`);
  }
  return knowledgeBase;
}

/** Marking KBs as `library` is curating for everyone: admins only (a web-app role; API keys never carry it). */
export function authorizeCurateLibrary(caller: { isAdmin: boolean }): void {
  if (!caller.isAdmin) throw new ForbiddenError('only administrators may mark knowledge bases as library');
}

/**
 * A permanent delete also takes a KB its owner already soft-deleted: erasing what was deleted is the point, and a
 * purge that failed half-way must be retryable. A soft-deleted KB stays invisible (404) to everyone else.
 */
export function authorizePermanentDelete(
  user: Principal,
  knowledgeBase: KnowledgeBaseRecord | null,
  id: string,
): KnowledgeBaseRecord {
  if (knowledgeBase && knowledgeBase.deleted_at !== null && knowledgeBase.owner_id === user._id) return knowledgeBase;
  return authorizeManage(user, knowledgeBase, id);
}

/** Writing documents needs `owner`; any other id, visible or not, existing or not, is 403 (as the contract says). */
export function authorizeWriteDocuments(
  user: Principal,
  knowledgeBase: KnowledgeBaseRecord | null,
  id: string,
): KnowledgeBaseRecord {
  if (!knowledgeBase || roleOf(user, knowledgeBase) !== 'owner') throw ForbiddenError.knowledgeBase(id);
  return knowledgeBase;
}

/** Querying named KBs: every one must be readable, else 403 naming the first that is not. */
export function authorizeQuery(user: Principal, requestedIds: string[], found: KnowledgeBaseRecord[]): string[] {
  const byId = new Map(found.map((knowledgeBase) => [knowledgeBase._id, knowledgeBase]));
  for (const id of requestedIds) {
    const knowledgeBase = byId.get(id);
    if (!knowledgeBase || roleOf(user, knowledgeBase) === null) throw ForbiddenError.knowledgeBase(id);
  }
  return [...new Set(requestedIds)];
}
