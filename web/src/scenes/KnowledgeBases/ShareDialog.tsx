// Owners share a knowledge base: with people by email (an invitation, shown by address until it is accepted; they
// then become viewers), with their organisation, and (admins) with everyone through the library.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import type { KnowledgeBase, Sharing } from '../../api/generated.ts';
import { Button } from '../../components/Button.tsx';
import { Badge } from '../../components/StatusBadge.tsx';
import { Dialog } from '../../components/Dialog.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { CheckboxField, TextField } from '../../components/Field.tsx';
import { Loading } from '../../components/Loading.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { refetchAfterChange } from '../../hooks/refetchAfterChange.ts';
import { useCurrentUser } from '../../hooks/session.ts';
import { formatDateTime } from '../../lib/format.ts';
import { LibraryToggle } from './LibraryToggle.tsx';

export function ShareDialog({ kb, onClose }: { kb: KnowledgeBase | null; onClose: () => void }) {
  return (
    <Dialog open={kb !== null} title={kb ? `Share “${kb.name}”` : 'Share'} onClose={onClose} testId="share-dialog">
      {kb ? <SharingPanel key={kb.id} kb={kb} /> : null}
    </Dialog>
  );
}

function SharingPanel({ kb }: { kb: KnowledgeBase }) {
  const user = useCurrentUser();
  const queryClient = useQueryClient();
  const sharing = useQuery({ queryKey: queryKeys.sharing(kb.id), queryFn: () => api.getSharing(kb.id) });
  const [email, setEmail] = useState('');
  const [notice, setNotice] = useState('');
  // The organisation box follows a click at once (a controlled checkbox needs its new value synchronously);
  // null again once the server has answered, when the cached sharing is the truth.
  const [orgChoice, setOrgChoice] = useState<boolean | null>(null);

  const refresh = () => void refetchAfterChange(queryClient, queryKeys.sharing(kb.id));
  const share = useMutation({
    mutationFn: (address: string) => api.shareWithUser(kb.id, address),
    onSuccess: ({ invitation }) => {
      setEmail('');
      setNotice(`Invitation sent to ${invitation.email}.`);
      refresh();
    },
  });
  const withdraw = useMutation({
    mutationFn: (invitationId: string) => api.withdrawInvitation(kb.id, invitationId),
    onSuccess: () => {
      setNotice('Invitation withdrawn.');
      refresh();
    },
  });
  const unshare = useMutation({
    mutationFn: (userId: string) => api.unshareUser(kb.id, userId),
    onSuccess: () => {
      setNotice('Unshared.');
      refresh();
    },
  });
  const organisation = useMutation({
    mutationFn: (shared: boolean) => api.setOrganisationSharing(kb.id, shared),
    onSuccess: ({ shared }) => {
      queryClient.setQueryData<Sharing>(queryKeys.sharing(kb.id), (current) =>
        current?.organisation ? { ...current, organisation: { ...current.organisation, shared } } : current,
      );
      setNotice(shared ? 'Shared with your organisation.' : 'No longer shared with your organisation.');
      refresh();
    },
    onSettled: () => setOrgChoice(null),
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setNotice('');
    share.mutate(email.trim());
  }

  if (sharing.isPending) return <Loading />;
  if (sharing.isError) return <ErrorMessage error={sharing.error} onRetry={() => sharing.refetch()} />;
  const { users, invitations, organisation: org, is_library } = sharing.data;

  return (
    <div className="stack stack--tight">
      <section aria-labelledby="shared-users-heading">
        <h3 id="shared-users-heading">People</h3>
        {users.length === 0 && invitations.length === 0 ? (
          <p className="muted">Not shared with anyone yet.</p>
        ) : (
          <ul className="list list--compact">
            {invitations.map((invitation) => (
              <li
                key={invitation.id}
                className="list__item"
                data-testid="sent-invitation"
                data-email={invitation.email}
              >
                <span className="list__main truncate">{invitation.email}</span>
                <span title={`Sent ${formatDateTime(invitation.invited_at)}; not answered yet`}>
                  <Badge>invited</Badge>
                </span>
                <Button
                  small
                  onClick={() => withdraw.mutate(invitation.id)}
                  busy={withdraw.isPending && withdraw.variables === invitation.id}
                >
                  Withdraw
                </Button>
              </li>
            ))}
            {users.map((shared) => (
              <li key={shared.id} className="list__item" data-testid="shared-user" data-email={shared.email}>
                <span className="list__main truncate">{shared.email}</span>
                {shared.pending ? <Badge>invited</Badge> : null}
                <Button
                  small
                  onClick={() => unshare.mutate(shared.id)}
                  busy={unshare.isPending && unshare.variables === shared.id}
                >
                  Unshare
                </Button>
              </li>
            ))}
          </ul>
        )}
        <form className="form form--inline" onSubmit={submit}>
          <TextField
            label="Email"
            type="email"
            required
            autoComplete="off"
            hint="They get an invitation; once they accept, they can read it and ask questions of it."
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
          <div className="form__submit">
            <Button type="submit" variant="primary" busy={share.isPending}>
              Share
            </Button>
          </div>
        </form>
        {share.error ? <ErrorMessage error={share.error} /> : null}
        {unshare.error ? <ErrorMessage error={unshare.error} /> : null}
        {withdraw.error ? <ErrorMessage error={withdraw.error} /> : null}
      </section>

      <section aria-labelledby="share-org-heading">
        <h3 id="share-org-heading">Organisation</h3>
        {org ? (
          <CheckboxField
            label={`Share with my organisation (${org.name})`}
            checked={orgChoice ?? org.shared}
            disabled={organisation.isPending}
            onChange={(event) => {
              setOrgChoice(event.target.checked);
              organisation.mutate(event.target.checked);
            }}
          />
        ) : (
          <CheckboxField
            label="Share with my organisation"
            checked={false}
            disabled
            hint="You are not in an organisation, so there is no one to share with this way."
          />
        )}
        {organisation.error ? <ErrorMessage error={organisation.error} /> : null}
      </section>

      {user.is_admin ? (
        <section aria-label="Library">
          <LibraryToggle kb={kb} initial={is_library} />
        </section>
      ) : null}

      <p role="status" className="status-line">
        {notice}
      </p>
    </div>
  );
}
