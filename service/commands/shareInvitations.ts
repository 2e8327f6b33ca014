// Sharing a KB with a person by email (an invitation), and what the person does about invitations: list them, and
// block (or unblock) a sender. docs/security.md § Sharing gives the rules and their limits.
//
// The sharing call answers the same "invitation sent" whether or not an account has the address, and the owner's
// sharing list shows an unanswered invitation by address alone either way: neither says whether the account
// exists. Only the person's own answer does (accepting puts them in the list of people; a decline or a block
// withdraws the invitation), which they choose to give.
import { randomUUID } from 'node:crypto';
import { BadRequestError, ConflictError, NotFoundError, RateLimitedError } from '../errors.ts';
import { authorizeManage, isPendingShare } from '../policies/knowledgeBases.ts';
import type {
  KnowledgeBaseRecord,
  OrganisationRecord,
  Principal,
  ShareInvitationRecord,
  Store,
  UserRecord,
} from '../store/index.ts';
import { normalisedEmail } from './invitationAnswers.ts';
import { waitInWords } from './sessions.ts';

export interface SharingSettings {
  /** Share requests one owner may make per window (KBQA_SHARE_MAX_PER_WINDOW). */
  maxPerWindow: number;
  /** The sign-in window (KBQA_SIGN_IN_WINDOW_MINUTES): the counter lives with the sign-in counters. */
  windowMs: number;
  maxPendingPerSender: number;
  maxPendingPerRecipient: number;
}

/** Invitations one person is shown at most (their bound is KBQA_MAX_PENDING_INVITATIONS_PER_RECIPIENT). */
const MAX_LISTED_INVITATIONS = 1_000;

/** No account has this id (ids are UUIDs): the recipient of an invitation to an address without an account. */
const NO_ACCOUNT = 'no-account';
const shareCounterKey = (userId: string) => `share:${userId}`;

/**
 * Counts this share request against its sender BEFORE any address is looked up, and refuses it (429) beyond
 * `maxPerWindow` in the window: an answer that says nothing about the address, at most that often.
 */
async function countShareRequest(store: Store, settings: SharingSettings, senderId: string): Promise<void> {
  const now = new Date();
  const counted = await store.countSignInAttempt(shareCounterKey(senderId), now, settings.windowMs);
  if (counted.count <= settings.maxPerWindow) return;
  const seconds = Math.max(
    1,
    Math.ceil((counted.windowStartedAt.getTime() + settings.windowMs - now.getTime()) / 1000),
  );
  throw new RateLimitedError(
    `too many share requests: at most ${settings.maxPerWindow} per ${Math.round(settings.windowMs / 60_000)} minutes (KBQA_SHARE_MAX_PER_WINDOW); try again in ${waitInWords(seconds)}`,
    seconds,
  );
}

/**
 * The owner invites an address to read a KB (`viewer`). Answers the address it was sent to, the same whether an
 * account has it, has it already (a member, or invited), declined this KB, or blocked the owner: the last three
 * change nothing. An account that exists gets the invitation at once (listed apart from its KBs until accepted).
 */
export async function inviteToKnowledgeBase(
  store: Store,
  settings: SharingSettings,
  user: Principal,
  id: string,
  email: string,
): Promise<{ email: string }> {
  const record = authorizeManage(user, await store.findLiveKnowledgeBase(id), id);
  await countShareRequest(store, settings, user._id);
  const address = normalisedEmail(email);
  if (address === normalisedEmail(user.email))
    throw new BadRequestError('email: that is you; you own this knowledge base already');
  const target = await store.findUserByEmail(address);
  if (target && record.shared_user_ids.includes(target._id)) return { email: address };
  // An address without an account costs the same store calls as one with (on an id no account has), as sign-in's
  // decoy hash does: a known address cost one lookup and one update more (medians 11-20 ms apart on a loaded machine).
  const recipientId = target?._id ?? NO_ACCOUNT;
  if (await store.isShareRefused(id, user._id, recipientId)) return { email: address };
  const invitation = { id: randomUUID(), knowledge_base_id: id, sender_id: user._id, email: address };
  const outcome = await store.insertShareInvitation({ ...invitation, created_at: new Date() }, settings);
  if (outcome === 'sender-full') {
    throw new ConflictError(
      `invitations: you have ${settings.maxPendingPerSender} pending, the most one person may have (KBQA_MAX_PENDING_INVITATIONS_PER_SENDER); withdraw some, or wait until they are answered`,
    );
  }
  if (outcome === 'recipient-full') {
    throw new ConflictError(
      `invitations: ${address} has ${settings.maxPendingPerRecipient} pending, the most one address may have (KBQA_MAX_PENDING_INVITATIONS_PER_RECIPIENT); try again once some are answered`,
    );
  }
  // 'already' too: an invitation sent before the address had an account reaches it when the owner shares again.
  await store.deliverInvitation(id, target ? target._id : null);
  return { email: address };
}

export interface KnowledgeBaseSharing {
  record: KnowledgeBaseRecord;
  /** People the KB is shared with: accepted (and shares from before invitations were recorded: `pending`). */
  users: { user: UserRecord; pending: boolean }[];
  /** Invitations not answered yet, by address only. */
  invitations: ShareInvitationRecord[];
  /** The owner's organisation, if they have one (a KB can be shared only with its owner's organisation). */
  organisation: OrganisationRecord | null;
}

/** Who a KB is shared with, and whom it waits for: its owner only. */
export async function getKnowledgeBaseSharing(
  store: Store,
  user: Principal,
  id: string,
): Promise<KnowledgeBaseSharing> {
  const record = authorizeManage(user, await store.findLiveKnowledgeBase(id), id);
  const [users, invitations, organisation] = await Promise.all([
    store.findUsersByIds(record.shared_user_ids),
    store.listShareInvitationsOfKnowledgeBase(id),
    user.organisation_id ? store.findOrganisationById(user.organisation_id) : Promise.resolve(null),
  ]);
  const accepted = new Set(record.accepted_user_ids ?? []);
  const invited = new Set(invitations.map((invitation) => invitation.email));
  return {
    record,
    // A pending recipient with an invitation shows as that invitation only: its address, never its account.
    users: users
      .filter((shared) => accepted.has(shared._id) || !invited.has(normalisedEmail(shared.email)))
      .map((shared) => ({ user: shared, pending: !accepted.has(shared._id) })),
    invitations,
    organisation,
  };
}

/** The owner stops sharing with a person (accepted or not): the share and any invitation of their address go. */
export async function unshareKnowledgeBaseWithUser(
  store: Store,
  user: Principal,
  id: string,
  userId: string,
): Promise<void> {
  const record = authorizeManage(user, await store.findLiveKnowledgeBase(id), id);
  if (!record.shared_user_ids.includes(userId))
    throw new NotFoundError(`knowledge base ${id} is not shared with user ${userId}`);
  await store.removeSharedUser(id, userId);
  const shared = await store.findUserById(userId);
  if (shared) await store.deleteShareInvitation(id, normalisedEmail(shared.email));
}

/** The owner withdraws an invitation not answered yet; whoever it reached no longer sees it. */
export async function withdrawShareInvitation(
  store: Store,
  user: Principal,
  id: string,
  invitationId: string,
): Promise<void> {
  const record = authorizeManage(user, await store.findLiveKnowledgeBase(id), id);
  const invitation = await store.findShareInvitation(id, invitationId);
  if (!invitation) throw new NotFoundError(`knowledge base ${id} has no pending invitation ${invitationId}`);
  await store.deleteShareInvitation(id, invitation.email);
  const target = await store.findUserByEmail(invitation.email);
  if (target && isPendingShare(target, record)) await store.removeSharedUser(id, target._id);
}

/** An invitation as its recipient sees it: the KB, who shared it, and when (null: shared before this was kept). */
export interface ReceivedInvitation {
  record: KnowledgeBaseRecord;
  sender: UserRecord | null;
  invitedAt: Date | null;
}

/** The caller's invitations not answered yet, newest KB first: not in their list of KBs until they accept. */
export async function listReceivedInvitations(store: Store, user: Principal): Promise<ReceivedInvitation[]> {
  const records = (await store.listPendingSharesOf(user._id, MAX_LISTED_INVITATIONS)).filter((record) =>
    isPendingShare(user, record),
  );
  const [senders, invitations] = await Promise.all([
    store.findUsersByIds([...new Set(records.map((record) => record.owner_id))]),
    store.findShareInvitationsTo(
      records.map((record) => record._id),
      normalisedEmail(user.email),
    ),
  ]);
  const senderById = new Map(senders.map((sender) => [sender._id, sender]));
  const sentAt = new Map(invitations.map((invitation) => [invitation.knowledge_base_id, invitation.created_at]));
  return records.map((record) => ({
    record,
    sender: senderById.get(record.owner_id) ?? null,
    invitedAt: sentAt.get(record._id) ?? null,
  }));
}

/**
 * The caller blocks a sender: every invitation from them pending for the caller goes (as if declined), and none
 * reaches them again until they unblock. KBs they accepted from that sender stay. Blocking twice changes nothing.
 */
export async function blockSender(store: Store, user: Principal, senderId: string): Promise<UserRecord> {
  if (senderId === user._id) throw new BadRequestError('user_id: that is you');
  const sender = await store.findUserById(senderId);
  if (!sender) throw new NotFoundError(`no user ${senderId}`);
  // The block first: a share racing this finds it and changes nothing.
  await store.recordShareRefusal({
    kind: 'blocked',
    recipient_id: user._id,
    sender_id: senderId,
    knowledge_base_id: null,
    created_at: new Date(),
  });
  for (const record of await store.listPendingSharesFrom(senderId, user._id))
    await store.removeSharedUser(record._id, user._id);
  await store.deleteShareInvitationsFrom(senderId, normalisedEmail(user.email));
  return sender;
}

/** The caller lets a sender's invitations reach them again (what was withdrawn by the block stays withdrawn). */
export async function unblockSender(store: Store, user: Principal, senderId: string): Promise<void> {
  if (!(await store.deleteSenderBlock(user._id, senderId)))
    throw new NotFoundError(`you have not blocked user ${senderId}`);
}

/** The senders the caller blocked, with when. */
export async function listBlockedSenders(
  store: Store,
  user: Principal,
): Promise<{ sender: UserRecord; blockedAt: Date }[]> {
  const blocks = await store.listBlockedSenders(user._id);
  const senders = new Map(
    (await store.findUsersByIds(blocks.map((block) => block.sender_id))).map((sender) => [sender._id, sender]),
  );
  return blocks.flatMap((block) => {
    const sender = senders.get(block.sender_id);
    return sender ? [{ sender, blockedAt: block.created_at }] : [];
  });
}
