// The server's upload limits (GET /limits). They change only when the server restarts with another config, so one
// answer serves the whole visit; a component that must know them before acting awaits `loadLimits`.
import { queryOptions, useQuery, type QueryClient } from '@tanstack/react-query';
import { api } from '../api/client.ts';
import type { Limits } from '../api/generated.ts';
import { queryKeys } from './queryKeys.ts';

const limitsQuery = queryOptions({ queryKey: queryKeys.limits, queryFn: api.getLimits, staleTime: 10 * 60_000 });

export function useLimits() {
  return useQuery(limitsQuery);
}

/** How long chosen files wait for an unanswered GET /limits before they are sent unchecked. */
const WAIT_MS = 2_000;

/** The limits, fetched if not yet known; null when they cannot be had (the server then refuses what is too big). */
export async function loadLimits(queryClient: QueryClient): Promise<Limits | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), WAIT_MS);
  });
  try {
    return await Promise.race([queryClient.fetchQuery(limitsQuery), timeout]);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}
