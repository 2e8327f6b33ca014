import { useMutation } from '@tanstack/react-query';
import { Link, Navigate, useLocation } from 'react-router';
import { api } from '../../api/client.ts';
import { EmptyState } from '../../components/EmptyState.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { PublicFrame } from '../../components/Layout.tsx';
import { Loading } from '../../components/Loading.tsx';
import { useDocumentTitle } from '../../hooks/useDocumentTitle.ts';
import { useSetup, useSignedIn } from '../../hooks/session.ts';
import { CredentialsForm } from '../SignIn/CredentialsForm.tsx';

export function SignUpScene() {
  useDocumentTitle('Create an account');
  const location = useLocation();
  const setup = useSetup();
  const signedIn = useSignedIn();
  const signUp = useMutation({ mutationFn: api.signUp, onSuccess: signedIn });

  let body;
  if (setup.isPending) body = <Loading />;
  else if (setup.isError) body = <ErrorMessage error={setup.error} onRetry={() => setup.refetch()} />;
  else if (setup.data.first_account_needed) return <Navigate to="/first-account" replace />;
  else if (!setup.data.sign_up_open) {
    body = (
      <EmptyState title="Sign-up is closed.">
        <p>Accounts are created by invitation: ask an administrator for a link.</p>
      </EmptyState>
    );
  } else {
    body = (
      <CredentialsForm
        submitLabel="Create account"
        pendingLabel="Creating account…"
        newPassword
        pending={signUp.isPending}
        error={signUp.error}
        onSubmit={(credentials) => signUp.mutate(credentials)}
      />
    );
  }

  return (
    <PublicFrame>
      <h1>Create an account</h1>
      {body}
      <p className="public__aside">
        Already have an account?{' '}
        <Link to="/sign-in" state={location.state}>
          Sign in
        </Link>
      </p>
    </PublicFrame>
  );
}
