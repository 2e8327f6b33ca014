import { useMutation } from '@tanstack/react-query';
import { Link, Navigate, useLocation } from 'react-router';
import { api } from '../../api/client.ts';
import { PublicFrame } from '../../components/Layout.tsx';
import { Loading } from '../../components/Loading.tsx';
import { useDocumentTitle } from '../../hooks/useDocumentTitle.ts';
import { useSetup, useSignedIn } from '../../hooks/session.ts';
import { CredentialsForm } from './CredentialsForm.tsx';

export function SignInScene() {
  useDocumentTitle('Sign in');
  const location = useLocation();
  const setup = useSetup();
  const signedIn = useSignedIn();
  // PublicOnly sends the new session on to where the visitor was headed.
  const signIn = useMutation({ mutationFn: api.signIn, onSuccess: signedIn });
  const notice = (location.state as { notice?: unknown } | null)?.notice;

  if (setup.isPending) {
    return (
      <PublicFrame>
        <Loading />
      </PublicFrame>
    );
  }
  if (setup.data?.first_account_needed) return <Navigate to="/first-account" replace />;

  return (
    <PublicFrame>
      <h1>Sign in</h1>
      {typeof notice === 'string' ? (
        <p role="status" className="alert alert--info">
          {notice}
        </p>
      ) : null}
      <CredentialsForm
        submitLabel="Sign in"
        pendingLabel="Signing in…"
        newPassword={false}
        pending={signIn.isPending}
        error={signIn.error}
        onSubmit={(credentials) => signIn.mutate(credentials)}
      />
      {setup.data?.sign_up_open ? (
        <p className="public__aside">
          No account yet?{' '}
          <Link to="/sign-up" state={location.state}>
            Create an account
          </Link>
        </p>
      ) : (
        <p className="public__aside muted">Accounts are created by invitation: ask an administrator.</p>
      )}
    </PublicFrame>
  );
}
