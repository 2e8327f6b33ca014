// Route guards. Signed-in pages send a visitor without a session to /sign-in (or /first-account while no user
// exists yet), remembering where they were going; the sign-in pages send a signed-in visitor on to it.
import type { ReactNode } from 'react';
import { Navigate, useLocation, type Location } from 'react-router';
import { useSession, useSetup } from '../hooks/session.ts';
import { ErrorMessage } from './ErrorMessage.tsx';
import { Loading } from './Loading.tsx';

export const HOME = '/knowledge-bases';

export function RequireAuth({ children }: { children: ReactNode }) {
  const session = useSession();
  const setup = useSetup();
  const location = useLocation();

  if (session.isPending)
    return (
      <FullPage>
        <Loading />
      </FullPage>
    );
  if (session.isError) {
    return (
      <FullPage>
        <ErrorMessage
          title="kbqa could not check your session."
          error={session.error}
          onRetry={() => session.refetch()}
        />
      </FullPage>
    );
  }
  if (!session.data) {
    if (setup.isPending)
      return (
        <FullPage>
          <Loading />
        </FullPage>
      );
    if (setup.data?.first_account_needed) return <Navigate to="/first-account" replace />;
    return <Navigate to="/sign-in" replace state={{ from: location }} />;
  }
  return children;
}

/** For /sign-in, /sign-up, /first-account: a signed-in visitor goes where they were headed. */
export function PublicOnly({ children }: { children: ReactNode }) {
  const session = useSession();
  const location = useLocation();
  if (session.isPending)
    return (
      <FullPage>
        <Loading />
      </FullPage>
    );
  if (session.data) return <Navigate to={returnPath(location.state)} replace />;
  return children;
}

/** Where to go after signing in: the page the visitor was sent away from, or the knowledge bases. */
export function returnPath(state: unknown): string {
  const from = (state as { from?: Partial<Location> } | null)?.from;
  if (!from || typeof from.pathname !== 'string' || !from.pathname.startsWith('/')) return HOME;
  if (['/sign-in', '/sign-up', '/first-account', '/set-password'].includes(from.pathname)) return HOME;
  return `${from.pathname}${from.search ?? ''}${from.hash ?? ''}`;
}

function FullPage({ children }: { children: ReactNode }) {
  return <div className="full-page">{children}</div>;
}
