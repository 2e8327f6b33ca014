// An invitation or password-reset link: <origin>/set-password#token=<token>. The token travels in the fragment so
// it never reaches a server log; the page reads it, shows whose password this sets, and signs them in.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { api, isApiError } from '../../api/client.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { MIN_PASSWORD_LENGTH, NewPasswordFields } from '../../components/Field.tsx';
import { RevokeApiKeysField } from '../../components/RevokeApiKeysField.tsx';
import { PublicFrame } from '../../components/Layout.tsx';
import { Loading } from '../../components/Loading.tsx';
import { HOME } from '../../components/RequireAuth.tsx';
import { useDocumentTitle } from '../../hooks/useDocumentTitle.ts';
import { useSession, useSignedIn } from '../../hooks/session.ts';

/**
 * The server refuses a link that is unknown, used or expired with one 400 (it cannot tell which); the page says so in
 * its own words, and the aside below says what to do once.
 */
function inPageWords(error: unknown): unknown {
  return isApiError(error, 400) && error.message.startsWith('this link')
    ? new Error(
        'It is not a valid link, it has been used already, or it has expired: each link works once, for a limited time.',
      )
    : error;
}

function tokenFrom(hash: string): string | null {
  const token = new URLSearchParams(hash.startsWith('#') ? hash.slice(1) : hash).get('token');
  return token && token.trim() !== '' ? token.trim() : null;
}

export function SetPasswordScene() {
  useDocumentTitle('Set your password');
  const location = useLocation();
  const token = tokenFrom(location.hash);

  return (
    <PublicFrame>
      <h1>Set your password</h1>
      {token ? (
        <SetPasswordForm token={token} />
      ) : (
        <>
          <ErrorMessage
            error={new Error('This link has no token. Open the whole link you were sent, or ask for a new one.')}
          />
          <p className="public__aside">
            <Link to="/sign-in">Go to sign in</Link>
          </p>
        </>
      )}
    </PublicFrame>
  );
}

function SetPasswordForm({ token }: { token: string }) {
  const navigate = useNavigate();
  const signedIn = useSignedIn();
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  // A reset is what someone asks for who fears another has their account: revoking every key is the default.
  const [revokeApiKeys, setRevokeApiKeys] = useState(true);
  const [problem, setProblem] = useState<string | null>(null);

  // Someone may already be signed in in this browser: then the server wants that session's CSRF token, which
  // only the session probe hands over. Ask it first.
  const session = useSession();
  const link = useQuery({
    queryKey: ['password-link', token],
    queryFn: () => api.inspectPasswordLink(token),
    enabled: !session.isPending,
    retry: false,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
  const redeem = useMutation({
    mutationFn: api.redeemPasswordLink,
    onSuccess: (session) => {
      signedIn(session);
      navigate(HOME, { replace: true });
    },
  });

  if (session.isPending || link.isPending) return <Loading label="Checking the link…" />;
  if (link.isError) {
    return (
      <>
        <ErrorMessage title="This link cannot be used." error={inPageWords(link.error)} />
        <p className="public__aside">
          Ask an administrator for a new one, or <Link to="/sign-in">sign in</Link>.
        </p>
      </>
    );
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (password.length < MIN_PASSWORD_LENGTH) {
      setProblem(`The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`);
    } else if (password !== confirmation) {
      setProblem('The two passwords are not the same.');
    } else {
      setProblem(null);
      const isReset = link.data?.purpose === 'reset';
      redeem.mutate(isReset ? { token, password, revoke_api_keys: revokeApiKeys } : { token, password });
    }
  }

  return (
    <form className="form" onSubmit={submit}>
      <p>
        Setting the password for <strong>{link.data.email}</strong>.
      </p>
      <input type="email" name="username" autoComplete="username" value={link.data.email} readOnly hidden />
      <NewPasswordFields
        password={password}
        confirmation={confirmation}
        onPassword={setPassword}
        onConfirmation={setConfirmation}
      />
      {link.data.purpose === 'reset' ? (
        <RevokeApiKeysField checked={revokeApiKeys} onChange={setRevokeApiKeys} />
      ) : null}
      {problem ? <ErrorMessage error={new Error(problem)} /> : null}
      {redeem.error && !problem ? <ErrorMessage error={inPageWords(redeem.error)} focusKey={redeem.error} /> : null}
      <Button type="submit" variant="primary" busy={redeem.isPending}>
        {redeem.isPending ? 'Setting password…' : 'Set password and sign in'}
      </Button>
    </form>
  );
}
