import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { Button } from '../../components/Button.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Loading } from '../../components/Loading.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { refetchAfterChange } from '../../hooks/refetchAfterChange.ts';
import { formatDate, formatDateTime } from '../../lib/format.ts';

/** The user's own soft-deleted knowledge bases, while they can still be restored. */
export function DeletedKnowledgeBases() {
  const queryClient = useQueryClient();
  const deleted = useQuery({ queryKey: queryKeys.deletedKnowledgeBases, queryFn: api.listDeletedKnowledgeBases });
  const restore = useMutation({
    mutationFn: api.restoreKnowledgeBase,
    onSuccess: () => {
      void refetchAfterChange(queryClient, queryKeys.deletedKnowledgeBases);
      void refetchAfterChange(queryClient, queryKeys.knowledgeBases, { exact: true });
    },
  });

  return (
    <section className="card" aria-labelledby="deleted-kb-heading">
      <h2 id="deleted-kb-heading">Recently deleted</h2>
      {deleted.isPending ? (
        <Loading />
      ) : deleted.isError ? (
        <ErrorMessage error={deleted.error} onRetry={() => deleted.refetch()} />
      ) : deleted.data.knowledge_bases.length === 0 ? (
        <EmptyState title="No recently deleted knowledge bases.">
          <p>Knowledge bases you delete stay here for a while, so you can restore them.</p>
        </EmptyState>
      ) : (
        <ul className="list">
          {deleted.data.knowledge_bases.map((kb) => (
            <li key={kb.id} className="list__item" data-testid="deleted-kb-row" data-kb-name={kb.name}>
              <div className="list__main">
                <p className="list__title">{kb.name}</p>
                <p className="muted small">
                  Deleted <time dateTime={kb.deleted_at}>{formatDateTime(kb.deleted_at)}</time> · restorable until{' '}
                  <time dateTime={kb.restorable_until}>{formatDate(kb.restorable_until)}</time>
                </p>
              </div>
              <Button
                small
                onClick={() => restore.mutate(kb.id)}
                busy={restore.isPending && restore.variables === kb.id}
              >
                Restore
              </Button>
            </li>
          ))}
        </ul>
      )}
      {restore.error ? <ErrorMessage error={restore.error} /> : null}
    </section>
  );
}
