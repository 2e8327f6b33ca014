import type { QueryClient, QueryKey } from '@tanstack/react-query';

/**
 * After a mutation: the cached list as the server has it now. A plain invalidation is not enough: while a query has
 * no data yet (its first load), TanStack Query's refetch joins the fetch in flight instead of cancelling it, and
 * that fetch may predate the change (an item created during the first load never appeared). So the fetch in flight
 * is cancelled first, then the query refetched.
 */
export async function refetchAfterChange(
  queryClient: QueryClient,
  queryKey: QueryKey,
  options: { exact?: boolean } = {},
): Promise<void> {
  const filters = { queryKey, exact: options.exact ?? false };
  await queryClient.cancelQueries(filters);
  await queryClient.invalidateQueries(filters);
}
