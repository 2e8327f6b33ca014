// Administrators: every user, invitations and reset links. There is no mail server: an invitation or a reset is a
// link the admin passes on themselves, shown here once.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { api } from '../../api/client.ts';
import type { AdminUser, Invitation, PasswordReset } from '../../api/generated.ts';
import { Button } from '../../components/Button.tsx';
import { SecretPanel } from '../../components/SecretPanel.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { CheckboxField, TextField } from '../../components/Field.tsx';
import { Loading } from '../../components/Loading.tsx';
import { Badge } from '../../components/StatusBadge.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { refetchAfterChange } from '../../hooks/refetchAfterChange.ts';
import { useCurrentUser } from '../../hooks/session.ts';
import { useDocumentTitle } from '../../hooks/useDocumentTitle.ts';
import { formatDate, formatDateTime } from '../../lib/format.ts';

export function AdminUsersScene() {
  useDocumentTitle('Users');
  const user = useCurrentUser();
  if (!user.is_admin) {
    return (
      <div className="stack">
        <h1>Users</h1>
        <EmptyState title="Only administrators can see this page." />
      </div>
    );
  }
  return (
    <div className="stack">
      <div className="page-header">
        <h1>Users</h1>
        <p className="muted">Everyone with an account, and invitations for new ones.</p>
      </div>
      <InviteUser />
      <UserList />
    </div>
  );
}

function UserList() {
  const users = useQuery({ queryKey: queryKeys.users, queryFn: api.listUsers });
  // Someone who forgot their password, or paused their sign-in with wrong ones: a one-time link to set a new one.
  const reset = useMutation({ mutationFn: (user: AdminUser) => api.createPasswordReset(user.id) });
  return (
    <section className="card" aria-labelledby="users-heading">
      <h2 id="users-heading">All users</h2>
      {reset.error ? <ErrorMessage error={reset.error} focusKey={reset.error} /> : null}
      {reset.data ? <ResetPanel reset={reset.data} onDone={() => reset.reset()} /> : null}
      {users.isPending ? (
        <Loading label="Loading users…" />
      ) : users.isError ? (
        <ErrorMessage error={users.error} onRetry={() => users.refetch()} />
      ) : users.data.users.length === 0 ? (
        <EmptyState title="No users." />
      ) : (
        <div className="table-wrap">
          <table className="table table--stack">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Admin</th>
                <th scope="col">Password</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {users.data.users.map((row) => (
                <tr key={row.id} data-testid="user-row" data-email={row.email}>
                  <td data-label="Email" className="break-words">
                    {row.email}
                  </td>
                  <td data-label="Admin">{row.is_admin ? <Badge tone="accent">admin</Badge> : 'no'}</td>
                  <td data-label="Password">{row.has_password ? 'yes' : <Badge>invited</Badge>}</td>
                  <td data-label="Created" className="nowrap">
                    <time dateTime={row.created_at}>{formatDate(row.created_at)}</time>
                  </td>
                  <td data-label="Actions" className="actions-cell">
                    <Button
                      small
                      onClick={() => reset.mutate(row)}
                      busy={reset.isPending && reset.variables.id === row.id}
                      aria-label={`Reset link for ${row.email}`}
                    >
                      Reset link
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function InviteUser() {
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [isAdmin, setIsAdmin] = useState(false);
  const [invitation, setInvitation] = useState<Invitation | null>(null);

  const invite = useMutation({
    mutationFn: api.inviteUser,
    onSuccess: (answer) => {
      setInvitation(answer);
      setEmail('');
      setIsAdmin(false);
      void refetchAfterChange(queryClient, queryKeys.users);
    },
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setInvitation(null);
    invite.mutate({ email: email.trim(), is_admin: isAdmin });
  }

  return (
    <section className="card" aria-labelledby="invite-heading">
      <h2 id="invite-heading">Invite user</h2>
      <form className="form form--inline" onSubmit={submit}>
        <TextField
          label="Email"
          type="email"
          required
          autoComplete="off"
          value={email}
          onChange={(event) => setEmail(event.target.value)}
        />
        <CheckboxField label="Administrator" checked={isAdmin} onChange={(event) => setIsAdmin(event.target.checked)} />
        <div className="form__submit">
          <Button type="submit" variant="primary" busy={invite.isPending}>
            {invite.isPending ? 'Inviting…' : 'Invite'}
          </Button>
        </div>
      </form>
      {invite.error ? <ErrorMessage error={invite.error} /> : null}
      {invitation ? <InvitationPanel invitation={invitation} onDone={() => setInvitation(null)} /> : null}
    </section>
  );
}

/** A one-time link for the admin to pass on: shown only now. */
function LinkPanel({
  kind,
  answer,
  onDone,
  children,
}: {
  kind: 'invitation' | 'password-reset';
  answer: Invitation | PasswordReset;
  onDone: () => void;
  children: ReactNode;
}) {
  return (
    <SecretPanel
      heading={`${kind === 'invitation' ? 'Invitation' : 'Reset link'} for ${answer.user.email}`}
      secret={answer.link}
      testId={kind}
      secretTestId={`${kind}-link`}
      onDone={onDone}
    >
      {children}
      <p className="key-panel__warning">
        It is shown only now, works once, and expires{' '}
        <time dateTime={answer.expires_at}>{formatDateTime(answer.expires_at)}</time>.
      </p>
    </SecretPanel>
  );
}

function InvitationPanel({ invitation, onDone }: { invitation: Invitation; onDone: () => void }) {
  return (
    <LinkPanel kind="invitation" answer={invitation} onDone={onDone}>
      <p>
        This link is the invitation: kbqa sends no email. Pass it to {invitation.user.email} yourself; opening it lets
        them set a password and sign in.
      </p>
    </LinkPanel>
  );
}

function ResetPanel({ reset, onDone }: { reset: PasswordReset; onDone: () => void }) {
  return (
    <LinkPanel kind="password-reset" answer={reset} onDone={onDone}>
      <p>
        Pass this link to {reset.user.email} yourself (kbqa sends no email): opening it lets them set a new password,
        which ends their sessions and lifts a sign-in pause. Any earlier link of theirs stops working.
      </p>
    </LinkPanel>
  );
}
