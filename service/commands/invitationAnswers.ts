// What answering an invitation does to it, for the membership commands (commands/knowledgeBases.ts): apart from
// commands/shareInvitations.ts so that knowledgeBases.ts, which accounts.ts imports, does not import the sessions.
import type { KnowledgeBaseRecord, Principal, Store } from '../store/index.ts';

/** An address as invitations are keyed by it. */
export const normalisedEmail = (email: string) => email.trim().toLowerCase();

/** A decline sticks: the owner's later shares of this KB with the caller change nothing (they are told "sent"). */
export async function recordDecline(store: Store, user: Principal, record: KnowledgeBaseRecord): Promise<void> {
  await store.recordShareRefusal({
    kind: 'declined',
    recipient_id: user._id,
    sender_id: record.owner_id,
    knowledge_base_id: record._id,
    created_at: new Date(),
  });
  await store.deleteShareInvitation(record._id, normalisedEmail(user.email));
}

/** An accepted invitation is answered: it no longer holds places against the bounds. */
export async function closeAcceptedInvitation(store: Store, user: Principal, id: string): Promise<void> {
  await store.deleteShareInvitation(id, normalisedEmail(user.email));
}
