// Who is signed in. The session lives in the query cache under queryKeys.session: a SessionResponse, or null when
// nobody is. Signing in, out, and a 401 from any call all go through here.
import { useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { api, forgetCsrfToken, isApiError } from '../api/client.ts';
import type { SessionResponse, SetupStatus, User } from '../api/generated.ts';
import { queryKeys } from './queryKeys.ts';

export function useSession() {
  return useQuery({
    queryKey: queryKeys.session,
    queryFn: async (): Promise<SessionResponse | null> => {
      try {
        return await api.getSession();
      } catch (error) {
        if (isApiError(error, 401)) return null;
        throw error;
      }
    },
    staleTime: 60_000,
  });
}

export function useSetup() {
  return useQuery({ queryKey: queryKeys.setup, queryFn: api.getSetup, staleTime: 60_000 });
}

/** The signed-in user; only for components under RequireAuth. */
export function useCurrentUser(): User {
  const { data } = useSession();
  if (!data) throw new Error('useCurrentUser outside a signed-in page');
  return data.user;
}

const keepAcrossUsers = (key: readonly unknown[]) => key[0] === 'session' || key[0] === 'setup';

/** After any { user, csrf_token } answer: the previous user's cached data goes, the new session comes in. */
export function useSignedIn() {
  const queryClient = useQueryClient();
  return useCallback(
    (session: SessionResponse) => {
      queryClient.removeQueries({ predicate: (query) => !keepAcrossUsers(query.queryKey) });
      queryClient.setQueryData(queryKeys.session, session);
      queryClient.setQueryData<SetupStatus>(queryKeys.setup, (setup) =>
        setup ? { ...setup, first_account_needed: false } : setup,
      );
    },
    [queryClient],
  );
}

/** The session is over (signed out, or a 401): pages under RequireAuth send the visitor to /sign-in. */
export function markSignedOut(queryClient: QueryClient): void {
  forgetCsrfToken();
  queryClient.setQueryData(queryKeys.session, null);
}
