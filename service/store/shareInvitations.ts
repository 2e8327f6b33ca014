// Invitations to KBs, the places they hold against the pending bounds, and the refusals (declines, blocks) that
// stop them. FerretDB v1 applies no compare-and-set atomically, so every "at most" and "only once" here is a unique
// `_id` insert: one invitation per KB and address, one place per bound and number, one refusal per kind and pair.
import type { Collections } from './mongo.ts';
import { isDuplicateKeyError, storeCall } from './mongo.ts';
import type { ShareInvitationRecord, ShareRefusalRecord } from './records.ts';

/** A place whose invitation is gone this long after it was taken was left by a process that died: it is freed. */
const ORPHAN_AFTER_MS = 60_000;

export interface InvitationBounds {
  maxPendingPerSender: number;
  maxPendingPerRecipient: number;
}

/** What inserting an invitation did: made it, found it made already, or met a bound (nothing is left behind). */
export type InvitationOutcome = 'invited' | 'already' | 'sender-full' | 'recipient-full';

const invitationKey = (knowledgeBaseId: string, email: string) => `${knowledgeBaseId}|${email}`;
const declinedKey = (knowledgeBaseId: string, recipientId: string) => `declined|${knowledgeBaseId}|${recipientId}`;
const blockedKey = (recipientId: string, senderId: string) => `blocked|${recipientId}|${senderId}`;

export function shareInvitationsStore(collections: Collections) {
  const { shareInvitations: invitations, shareInvitationSlots: slots, shareRefusals: refusals } = collections;

  /** Frees the places of `key` whose invitation no longer exists; true when it freed any. */
  async function freeOrphanedPlaces(key: string, now: Date): Promise<boolean> {
    const held = await storeCall(() =>
      slots.find({ key, created_at: { $lt: new Date(now.getTime() - ORPHAN_AFTER_MS) } }).toArray(),
    );
    if (held.length === 0) return false;
    const holders = await storeCall(() =>
      invitations.find({ id: { $in: held.map((slot) => slot.invitation_id) } }, { projection: { id: 1 } }).toArray(),
    );
    const live = new Set(holders.map((invitation) => invitation.id));
    const orphans = held.filter((slot) => !live.has(slot.invitation_id)).map((slot) => slot._id);
    if (orphans.length === 0) return false;
    await storeCall(() => slots.deleteMany({ _id: { $in: orphans } }));
    return true;
  }

  /** Takes one of the `max` places of `key` for the invitation; false when all are held. */
  async function takePlace(key: string, max: number, invitationId: string, now: Date): Promise<boolean> {
    for (let round = 0; round < 2; round += 1) {
      const held = await storeCall(() => slots.countDocuments({ key }));
      // Start at the count: the free places are usually there, so a claim costs one insert, not `held` of them.
      for (let offset = 0; held < max && offset < max; offset += 1) {
        const _id = `${key}#${(held + offset) % max}`;
        try {
          await storeCall(() => slots.insertOne({ _id, key, invitation_id: invitationId, created_at: now }));
          return true;
        } catch (error) {
          if (!isDuplicateKeyError(error)) throw error;
        }
      }
      if (round === 0 && !(await freeOrphanedPlaces(key, now))) return false;
    }
    return false;
  }

  async function releasePlaces(invitationId: string): Promise<void> {
    await storeCall(() => slots.deleteMany({ invitation_id: invitationId }));
  }

  async function deleteInvitation(invitation: ShareInvitationRecord): Promise<void> {
    // Places first: a failure in between leaves an invitation holding fewer places, never a place held by nothing.
    await releasePlaces(invitation.id);
    await storeCall(() => invitations.deleteOne({ _id: invitation._id }));
  }

  return {
    /**
     * The invitation, unless one of this KB to this address exists ('already'), the sender or the address holds
     * every place of its bound already ('sender-full', 'recipient-full': nothing is kept).
     */
    async insertShareInvitation(
      invitation: Omit<ShareInvitationRecord, '_id'>,
      bounds: InvitationBounds,
    ): Promise<InvitationOutcome> {
      const record = { _id: invitationKey(invitation.knowledge_base_id, invitation.email), ...invitation };
      try {
        await storeCall(() => invitations.insertOne(record));
      } catch (error) {
        if (isDuplicateKeyError(error)) return 'already';
        throw error;
      }
      const now = record.created_at;
      if (!(await takePlace(`sender:${record.sender_id}`, bounds.maxPendingPerSender, record.id, now))) {
        await deleteInvitation(record);
        return 'sender-full';
      }
      if (!(await takePlace(`recipient:${record.email}`, bounds.maxPendingPerRecipient, record.id, now))) {
        await deleteInvitation(record);
        return 'recipient-full';
      }
      return 'invited';
    },

    /** The invitation of this KB to this address, with its places; false when there was none. */
    async deleteShareInvitation(knowledgeBaseId: string, email: string): Promise<boolean> {
      const invitation = await storeCall(() => invitations.findOne({ _id: invitationKey(knowledgeBaseId, email) }));
      if (!invitation) return false;
      await deleteInvitation(invitation);
      return true;
    },

    /** An invitation of a KB by its public id (the owner withdraws it by that). */
    findShareInvitation: (knowledgeBaseId: string, id: string) =>
      storeCall(() => invitations.findOne({ id, knowledge_base_id: knowledgeBaseId })),

    /** A KB's pending invitations, oldest first (the owner's sharing list). */
    listShareInvitationsOfKnowledgeBase: (knowledgeBaseId: string) =>
      storeCall(() =>
        invitations.find({ knowledge_base_id: knowledgeBaseId }).sort({ created_at: 1, _id: 1 }).toArray(),
      ),

    /** The invitations of these KBs to one address, by primary key. */
    async findShareInvitationsTo(knowledgeBaseIds: string[], email: string): Promise<ShareInvitationRecord[]> {
      if (knowledgeBaseIds.length === 0) return [];
      const ids = knowledgeBaseIds.map((knowledgeBaseId) => invitationKey(knowledgeBaseId, email));
      return storeCall(() => invitations.find({ _id: { $in: ids } }).toArray());
    },

    /** Every invitation of a sender to one address (a block withdraws them all). */
    async deleteShareInvitationsFrom(senderId: string, email: string): Promise<void> {
      const found = await storeCall(() => invitations.find({ sender_id: senderId, email }).toArray());
      for (const invitation of found) await deleteInvitation(invitation);
    },

    /** A purged KB's invitations go with it. */
    async deleteShareInvitationsOfKnowledgeBase(knowledgeBaseId: string): Promise<void> {
      const found = await storeCall(() => invitations.find({ knowledge_base_id: knowledgeBaseId }).toArray());
      for (const invitation of found) await deleteInvitation(invitation);
    },

    /** A deleted account: the invitations it sent and those to its address (places freed), and its refusals. */
    async deleteShareInvitationsOfUser(userId: string, email: string): Promise<void> {
      const found = await storeCall(() => invitations.find({ $or: [{ sender_id: userId }, { email }] }).toArray());
      for (const invitation of found) await deleteInvitation(invitation);
      await storeCall(() => refusals.deleteMany({ $or: [{ recipient_id: userId }, { sender_id: userId }] }));
    },

    /** A decline (of `knowledge_base_id`) or a block (of `sender_id`); recording it twice keeps the first. */
    async recordShareRefusal(refusal: Omit<ShareRefusalRecord, '_id'>): Promise<void> {
      const _id =
        refusal.kind === 'blocked'
          ? blockedKey(refusal.recipient_id, refusal.sender_id)
          : declinedKey(refusal.knowledge_base_id ?? '', refusal.recipient_id);
      const record: ShareRefusalRecord = { _id, ...refusal };
      try {
        await storeCall(() => refusals.insertOne(record));
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
    },
    /** Lifts a block; false when there was none. */
    async deleteSenderBlock(recipientId: string, senderId: string): Promise<boolean> {
      const result = await storeCall(() => refusals.deleteOne({ _id: blockedKey(recipientId, senderId) }));
      return result.deletedCount === 1;
    },
    /** Whether the recipient declined this KB or blocked its owner: two primary keys, one round trip. */
    async isShareRefused(knowledgeBaseId: string, senderId: string, recipientId: string): Promise<boolean> {
      const ids = [declinedKey(knowledgeBaseId, recipientId), blockedKey(recipientId, senderId)];
      return (await storeCall(() => refusals.findOne({ _id: { $in: ids } }, { projection: { _id: 1 } }))) !== null;
    },
    /** The senders a user blocked, newest block first. */
    listBlockedSenders: (recipientId: string) =>
      storeCall(() =>
        refusals.find({ recipient_id: recipientId, kind: 'blocked' }).sort({ created_at: -1, _id: -1 }).toArray(),
      ),
  };
}
