import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, isApiError } from '../../api/client.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmDialog } from '../../components/Dialog.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { PasswordError } from '../../components/PasswordError.tsx';
import { CurrentPasswordField, MIN_PASSWORD_LENGTH, NewPasswordFields } from '../../components/Field.tsx';
import { RevokeApiKeysField } from '../../components/RevokeApiKeysField.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { markSignedOut, useCurrentUser } from '../../hooks/session.ts';
import { useDocumentTitle } from '../../hooks/useDocumentTitle.ts';
import { SettingsNav } from './SettingsNav.tsx';

export function AccountScene() {
  useDocumentTitle('Account');
  const user = useCurrentUser();
  return (
    <div className="stack">
      <div className="page-header">
        <h1>Settings</h1>
        <SettingsNav />
      </div>
      <p className="muted">
        Signed in as <strong>{user.email}</strong>
        {user.is_admin ? ' (administrator)' : ''}.
      </p>
      <ChangePassword email={user.email} />
      <SignOutEverywhere />
    </div>
  );
}

function ChangePassword({ email }: { email: string }) {
  const queryClient = useQueryClient();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [revokeApiKeys, setRevokeApiKeys] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);

  const change = useMutation({
    mutationFn: api.changePassword,
    onSuccess: () => {
      setCurrent('');
      setNext('');
      setConfirmation('');
    },
    // A 401 is either a wrong current password or an ended session: asking for the session again tells which
    // (an ended one sends the visitor to sign in).
    onError: (error) => {
      if (isApiError(error, 401)) void queryClient.invalidateQueries({ queryKey: queryKeys.session });
    },
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (next.length < MIN_PASSWORD_LENGTH) {
      setProblem(`The new password must be at least ${MIN_PASSWORD_LENGTH} characters long.`);
    } else if (next !== confirmation) {
      setProblem('The two new passwords are not the same.');
    } else {
      setProblem(null);
      change.mutate({ current_password: current, new_password: next, revoke_api_keys: revokeApiKeys });
    }
  }

  return (
    <section className="card" aria-labelledby="password-heading">
      <h2 id="password-heading">Change password</h2>
      <form className="form form--narrow" onSubmit={submit}>
        {/* For password managers: which account this password belongs to. */}
        <input type="email" name="username" autoComplete="username" value={email} readOnly hidden />
        <CurrentPasswordField label="Current password" value={current} onChange={setCurrent} />
        <NewPasswordFields
          password={next}
          confirmation={confirmation}
          onPassword={setNext}
          onConfirmation={setConfirmation}
        />
        <RevokeApiKeysField checked={revokeApiKeys} onChange={setRevokeApiKeys} />
        {problem ? <ErrorMessage error={new Error(problem)} /> : null}
        {change.error && !problem ? (
          <PasswordError error={change.error} wrong="The current password is not right." />
        ) : null}
        <div>
          <Button type="submit" variant="primary" busy={change.isPending}>
            {change.isPending ? 'Changing…' : 'Change password'}
          </Button>
        </div>
      </form>
      <p role="status" className="status-line">
        {change.isSuccess
          ? `Password changed. Your other sessions were signed out; this one stays signed in.${revokedNotice(change.data.api_keys_revoked)}`
          : ''}
      </p>
    </section>
  );
}

/** " N API keys were revoked." after an answer that revoked some; nothing otherwise. */
function revokedNotice(count: number): string {
  return count > 0 ? ` ${count} API key${count === 1 ? ' was' : 's were'} revoked.` : '';
}

function SignOutEverywhere() {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [confirming, setConfirming] = useState(false);
  const [revokeApiKeys, setRevokeApiKeys] = useState(false);
  const signOut = useMutation({
    mutationFn: () => api.signOutEverywhere(revokeApiKeys),
    onSuccess: (answer) => {
      markSignedOut(queryClient);
      navigate('/sign-in', {
        replace: true,
        state: { notice: `You were signed out on every device.${revokedNotice(answer.api_keys_revoked)}` },
      });
    },
  });

  return (
    <section className="card" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Sessions</h2>
      <p className="muted">
        Signs you out in every browser, this one included. API keys keep working unless you revoke them too.
      </p>
      <Button
        variant="danger"
        onClick={() => {
          signOut.reset();
          setConfirming(true);
        }}
      >
        Sign out everywhere
      </Button>
      <ConfirmDialog
        open={confirming}
        title="Sign out everywhere?"
        onConfirm={() => signOut.mutate()}
        onCancel={() => setConfirming(false)}
        confirmLabel="Sign out everywhere"
        busy={signOut.isPending}
        error={signOut.error}
      >
        <p>Every session of yours ends, including this one; you will need to sign in again.</p>
        <RevokeApiKeysField checked={revokeApiKeys} onChange={setRevokeApiKeys} />
      </ConfirmDialog>
    </section>
  );
}
