// The owner's view of how answers that searched this KB were rated in conversations: the counts, and the questions
// rated down (what was asked, what was searched, the comment, when). Never who asked: the API does not say.
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { EmptyState } from '../../components/EmptyState.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Loading } from '../../components/Loading.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { formatDateTime, plural } from '../../lib/format.ts';

export function AnswerRatings({ kbId }: { kbId: string }) {
  const ratings = useQuery({ queryKey: queryKeys.ratings(kbId), queryFn: () => api.getKnowledgeBaseRatings(kbId) });
  return (
    <section className="card" aria-labelledby="ratings-heading" data-testid="answer-ratings">
      <h2 id="ratings-heading">Answer ratings</h2>
      <p className="small muted">
        How people rated the answers that searched this knowledge base (on the Ask page). Only you, its owner, see this;
        it never says who asked.
      </p>
      {ratings.isPending ? (
        <Loading label="Loading ratings…" />
      ) : ratings.isError ? (
        <ErrorMessage error={ratings.error} onRetry={() => ratings.refetch()} />
      ) : ratings.data.ratings.up + ratings.data.ratings.down === 0 ? (
        <EmptyState title="No answer has been rated yet." />
      ) : (
        <>
          <p className="ratings__counts" data-testid="rating-counts">
            <span>
              <span aria-hidden="true">👍 </span>
              {plural(ratings.data.ratings.up, 'good answer')}
            </span>
            <span>
              <span aria-hidden="true">👎 </span>
              {plural(ratings.data.ratings.down, 'bad answer')}
            </span>
          </p>
          {ratings.data.ratings.down_rated.length > 0 ? (
            <>
              <h3>Questions rated down</h3>
              <ul className="list">
                {ratings.data.ratings.down_rated.map((entry, index) => (
                  <li key={`${entry.rated_at}-${index}`} className="list__item" data-testid="down-rated-question">
                    <p className="ratings__question pre-wrap">{entry.question}</p>
                    {entry.standalone_query !== entry.question ? (
                      <p className="small muted">Searched as: {entry.standalone_query}</p>
                    ) : null}
                    {entry.comment ? <p className="pre-wrap">Comment: {entry.comment}</p> : null}
                    <p className="small muted">{formatDateTime(entry.rated_at)}</p>
                  </li>
                ))}
              </ul>
              {ratings.data.ratings.down_rated.length < ratings.data.ratings.down ? (
                <p className="small muted">
                  The {ratings.data.ratings.down_rated.length} most recent are listed; an administrator's{' '}
                  <code>kbqa feedback export</code> writes them all.
                </p>
              ) : null}
            </>
          ) : null}
        </>
      )}
    </section>
  );
}
