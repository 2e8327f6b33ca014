// Sharing, invitations and blocks → the web app's JSON. An invitation the owner sees carries its address only, never
// the account behind it (commands/shareInvitations.ts says why).
import type { z } from 'zod';
import type { KnowledgeBaseSharing, ReceivedInvitation } from '../commands/shareInvitations.ts';
import type { blockedSender, receivedInvitation, sharing } from '../http/routes/webApp.schema.ts';
import type { UserRecord } from '../store/index.ts';
import { presentUserReference } from './users.ts';

/** Who an owner's KB is shared with, and the invitations it waits on. */
export function presentSharing(shared: KnowledgeBaseSharing): z.input<typeof sharing> {
  const { record, users, invitations, organisation } = shared;
  return {
    users: users.map(({ user, pending }) => ({ id: user._id, email: user.email, pending })),
    invitations: invitations.map((invitation) => ({
      id: invitation.id,
      email: invitation.email,
      invited_at: invitation.created_at.toISOString(),
    })),
    organisation: organisation
      ? {
          id: organisation._id,
          name: organisation.name,
          shared: record.shared_organisation_ids.includes(organisation._id),
        }
      : null,
    is_library: record.is_library,
  };
}

/** An invitation as its recipient sees it: the KB, who shared it and when. */
export function presentReceivedInvitation(invitation: ReceivedInvitation): z.input<typeof receivedInvitation> {
  const { record, sender, invitedAt } = invitation;
  return {
    knowledge_base: { id: record._id, name: record.name, description: record.description },
    // The owner's account was deleted meanwhile: the id is still the owner's, the address unknown.
    shared_by: sender ? presentUserReference(sender) : { id: record.owner_id, email: '' },
    invited_at: invitedAt ? invitedAt.toISOString() : null,
  };
}

export function presentBlockedSender(sender: UserRecord, blockedAt: Date): z.input<typeof blockedSender> {
  return { user: presentUserReference(sender), blocked_at: blockedAt.toISOString() };
}
