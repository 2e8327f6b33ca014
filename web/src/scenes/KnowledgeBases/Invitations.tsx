// Knowledge bases shared with the user that they have not answered: each says who shared it and when, and offers
// Accept (it joins their list and their questions), Decline (for good: its owner cannot share it with them again)
// and Block sender (every invitation from that person goes, and no new one reaches them). Blocked senders are listed
// below, each with Unblock. The section shows only when there is something in it.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { BlockedSender, ReceivedInvitation } from '../../api/generated.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmDialog } from '../../components/Dialog.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { refetchAfterChange } from '../../hooks/refetchAfterChange.ts';
import { formatDateTime } from '../../lib/format.ts';

type Answer = { kind: 'decline' | 'block'; invitation: ReceivedInvitation };

export function Invitations() {
  const queryClient = useQueryClient();
  const invitations = useQuery({ queryKey: queryKeys.invitations, queryFn: api.listInvitations });
  const blocked = useQuery({ queryKey: queryKeys.blockedSenders, queryFn: api.listBlockedSenders });
  const [answering, setAnswering] = useState<Answer | null>(null);

  const refresh = () => {
    void refetchAfterChange(queryClient, queryKeys.invitations);
    void refetchAfterChange(queryClient, queryKeys.knowledgeBases, { exact: true });
  };
  const accept = useMutation({ mutationFn: (kbId: string) => api.acceptKnowledgeBase(kbId), onSuccess: refresh });
  const answer = useMutation({
    mutationFn: async ({ kind, invitation }: Answer): Promise<void> => {
      if (kind === 'decline') await api.leaveKnowledgeBase(invitation.knowledge_base.id);
      else await api.blockSender(invitation.shared_by.id);
    },
    onSuccess: (_answer, { kind }) => {
      setAnswering(null);
      refresh();
      if (kind === 'block') void refetchAfterChange(queryClient, queryKeys.blockedSenders);
    },
  });
  const unblock = useMutation({
    mutationFn: (userId: string) => api.unblockSender(userId),
    onSuccess: () => void refetchAfterChange(queryClient, queryKeys.blockedSenders),
  });

  const received = invitations.data?.invitations ?? [];
  const senders = blocked.data?.blocked_senders ?? [];
  if (!invitations.isError && !blocked.isError && received.length === 0 && senders.length === 0) return null;
  const sender = answering ? senderName(answering.invitation) : '';

  return (
    <section className="card" aria-labelledby="invitations-heading">
      <h2 id="invitations-heading">Invitations</h2>
      {invitations.isError ? (
        <ErrorMessage
          title="Your invitations could not be loaded."
          error={invitations.error}
          onRetry={() => invitations.refetch()}
        />
      ) : received.length === 0 ? (
        <p className="muted">No invitations waiting.</p>
      ) : (
        <ul className="list">
          {received.map((invitation) => (
            <InvitationItem
              key={invitation.knowledge_base.id}
              invitation={invitation}
              accepting={accept.isPending && accept.variables === invitation.knowledge_base.id}
              onAccept={() => accept.mutate(invitation.knowledge_base.id)}
              onAnswer={(kind) => {
                answer.reset();
                setAnswering({ kind, invitation });
              }}
            />
          ))}
        </ul>
      )}
      {accept.error ? <ErrorMessage error={accept.error} /> : null}
      {blocked.isError ? (
        <ErrorMessage error={blocked.error} onRetry={() => blocked.refetch()} />
      ) : senders.length > 0 ? (
        <BlockedSenders
          senders={senders}
          unblocking={unblock.isPending ? unblock.variables : null}
          onUnblock={(userId) => unblock.mutate(userId)}
        />
      ) : null}
      {unblock.error ? <ErrorMessage error={unblock.error} /> : null}

      <ConfirmDialog
        open={answering !== null}
        title={
          answering?.kind === 'block'
            ? `Block ${sender}?`
            : `Decline “${answering?.invitation.knowledge_base.name ?? ''}”?`
        }
        confirmLabel={answering?.kind === 'block' ? 'Block sender' : 'Decline'}
        onConfirm={() => answering && answer.mutate(answering)}
        onCancel={() => setAnswering(null)}
        busy={answer.isPending}
        error={answer.error}
      >
        {answering?.kind === 'block' ? (
          <p>
            Every invitation from {sender} is declined, and no new one reaches you. Knowledge bases of theirs you
            accepted stay. You can unblock them later on this page.
          </p>
        ) : (
          <p>Its owner cannot share it with you again. Other invitations from them still reach you.</p>
        )}
      </ConfirmDialog>
    </section>
  );
}

function InvitationItem({
  invitation,
  accepting,
  onAccept,
  onAnswer,
}: {
  invitation: ReceivedInvitation;
  accepting: boolean;
  onAccept: () => void;
  onAnswer: (kind: Answer['kind']) => void;
}) {
  const { knowledge_base: kb, invited_at } = invitation;
  return (
    <li className="list__item" data-testid="invitation" data-kb-id={kb.id} data-kb-name={kb.name}>
      <div className="list__main">
        <p className="list__title">{kb.name}</p>
        {kb.description ? <p className="muted small">{kb.description}</p> : null}
        <p className="muted small" data-testid="invitation-sender">
          Shared by <strong>{senderName(invitation)}</strong>
          {invited_at ? (
            <>
              {' '}
              on <time dateTime={invited_at}>{formatDateTime(invited_at)}</time>
            </>
          ) : null}
        </p>
      </div>
      <div className="actions">
        <Button small variant="primary" onClick={onAccept} busy={accepting}>
          Accept
        </Button>
        <Button small onClick={() => onAnswer('decline')}>
          Decline
        </Button>
        <Button small variant="danger" onClick={() => onAnswer('block')}>
          Block sender
        </Button>
      </div>
    </li>
  );
}

function BlockedSenders({
  senders,
  unblocking,
  onUnblock,
}: {
  senders: BlockedSender[];
  unblocking: string | null | undefined;
  onUnblock: (userId: string) => void;
}) {
  return (
    <section aria-labelledby="blocked-senders-heading">
      <h3 id="blocked-senders-heading">Blocked senders</h3>
      <ul className="list list--compact">
        {senders.map(({ user, blocked_at }) => (
          <li key={user.id} className="list__item" data-testid="blocked-sender" data-email={user.email}>
            <span className="list__main truncate">
              {user.email}{' '}
              <span className="muted small">
                since <time dateTime={blocked_at}>{formatDateTime(blocked_at)}</time>
              </span>
            </span>
            <Button small onClick={() => onUnblock(user.id)} busy={unblocking === user.id}>
              Unblock
            </Button>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The sharer as people know them: their email (accounts carry no display name). */
function senderName(invitation: ReceivedInvitation): string {
  return invitation.shared_by.email || 'a user who no longer has an account';
}
