// Which KBs a new conversation searches: those checked, or (none checked) every one reachable at each question.
import type { UseQueryResult } from '@tanstack/react-query';
import { Link } from 'react-router';
import type { KnowledgeBaseListItem } from '../../api/generated.ts';
import { EmptyState } from '../../components/EmptyState.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { CheckboxField } from '../../components/Field.tsx';
import { Loading } from '../../components/Loading.tsx';
import { plural } from '../../lib/format.ts';

export interface KnowledgeBaseChoiceProps {
  knowledgeBases: UseQueryResult<{ knowledge_bases: KnowledgeBaseListItem[] }>;
  selected: string[];
  onToggle: (kbId: string, checked: boolean) => void;
}

export function KnowledgeBaseChoice({ knowledgeBases, selected, onToggle }: KnowledgeBaseChoiceProps) {
  const reachable = knowledgeBases.data?.knowledge_bases ?? [];
  // Only ids still in the list count (a ?kb= link may name one that is gone).
  const selectedCount = selected.filter((id) => reachable.some((kb) => kb.id === id)).length;
  return (
    <fieldset className="card fieldset">
      <legend>Knowledge bases</legend>
      <p className="field__hint" aria-live="polite">
        {selectedCount === 0 ? 'All knowledge bases' : `${plural(selectedCount, 'knowledge base')} selected`}
        {selectedCount === 0
          ? ' (none checked: each question goes to every one you can reach, except shares you have not accepted).'
          : '.'}{' '}
        The conversation keeps this choice.
      </p>
      {knowledgeBases.isPending ? (
        <Loading label="Loading knowledge bases…" />
      ) : knowledgeBases.isError ? (
        <ErrorMessage error={knowledgeBases.error} onRetry={() => knowledgeBases.refetch()} />
      ) : reachable.length === 0 ? (
        <EmptyState title="You have no knowledge bases yet.">
          <p>
            <Link to="/knowledge-bases">Create one and add documents</Link> before asking.
          </p>
        </EmptyState>
      ) : (
        <div className="checkbox-list">
          {reachable.map((kb) => (
            <CheckboxField
              key={kb.id}
              label={kb.pending ? `${kb.name} (pending: searched only when checked)` : kb.name}
              checked={selected.includes(kb.id)}
              onChange={(event) => onToggle(kb.id, event.target.checked)}
            />
          ))}
        </div>
      )}
    </fieldset>
  );
}
