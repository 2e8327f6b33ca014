import { useMutation } from '@tanstack/react-query';
import { Navigate } from 'react-router';
import { api } from '../../api/client.ts';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { PublicFrame } from '../../components/Layout.tsx';
import { Loading } from '../../components/Loading.tsx';
import { useDocumentTitle } from '../../hooks/useDocumentTitle.ts';
import { useSetup, useSignedIn } from '../../hooks/session.ts';
import { CredentialsForm } from '../SignIn/CredentialsForm.tsx';

/** The very first visit: no user exists yet. The account created here is an administrator. */
export function FirstAccountScene() {
  useDocumentTitle('Create the first account');
  const setup = useSetup();
  const signedIn = useSignedIn();
  const create = useMutation({ mutationFn: api.createFirstAccount, onSuccess: signedIn });

  if (setup.isPending) {
    return (
      <PublicFrame>
        <Loading />
      </PublicFrame>
    );
  }
  if (setup.isError) {
    return (
      <PublicFrame>
        <h1>Create the first account</h1>
        <ErrorMessage error={setup.error} onRetry={() => setup.refetch()} />
      </PublicFrame>
    );
  }
  // Someone else got there first (or it was always done): sign in instead.
  if (!setup.data.first_account_needed && !create.isPending) return <Navigate to="/sign-in" replace />;

  return (
    <PublicFrame>
      <h1>Create the first account</h1>
      <p className="muted">
        kbqa has no users yet. This account will be its first administrator: it can invite everyone else.
      </p>
      <CredentialsForm
        submitLabel="Create account"
        pendingLabel="Creating account…"
        newPassword
        pending={create.isPending}
        error={create.error}
        onSubmit={(credentials) => create.mutate(credentials)}
      />
    </PublicFrame>
  );
}
