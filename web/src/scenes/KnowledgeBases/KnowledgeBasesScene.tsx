// Every knowledge base the user can reach, with what their role lets them do: owners create, share and delete
// (never the default one); admins put any of them in the library; those shared with the user accept (a share is
// pending until then: the Invitations section above the list, which says who shared it and when), decline or leave
// them, and block a sender; everyone else reads.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../../api/client.ts';
import type { KnowledgeBase } from '../../api/generated.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmDialog } from '../../components/Dialog.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Loading } from '../../components/Loading.tsx';
import { Badge, RoleBadge } from '../../components/StatusBadge.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { refetchAfterChange } from '../../hooks/refetchAfterChange.ts';
import { useCurrentUser } from '../../hooks/session.ts';
import { useDocumentTitle } from '../../hooks/useDocumentTitle.ts';
import { DeletedKnowledgeBases } from './DeletedKnowledgeBases.tsx';
import { Invitations } from './Invitations.tsx';
import { LibraryToggle } from './LibraryToggle.tsx';
import { MembershipActions } from './MembershipActions.tsx';
import { NewKnowledgeBaseForm } from './NewKnowledgeBaseForm.tsx';
import { ShareDialog } from './ShareDialog.tsx';

export function KnowledgeBasesScene() {
  useDocumentTitle('Knowledge bases');
  const user = useCurrentUser();
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: queryKeys.knowledgeBases, queryFn: api.listKnowledgeBases });
  const [deleting, setDeleting] = useState<KnowledgeBase | null>(null);
  const [sharing, setSharing] = useState<KnowledgeBase | null>(null);

  const remove = useMutation({
    mutationFn: (kb: KnowledgeBase) => api.deleteKnowledgeBase(kb.id),
    onSuccess: () => {
      setDeleting(null);
      void refetchAfterChange(queryClient, queryKeys.knowledgeBases, { exact: true });
      void refetchAfterChange(queryClient, queryKeys.deletedKnowledgeBases);
    },
  });

  return (
    <div className="stack">
      <div className="page-header">
        <h1>Knowledge bases</h1>
        <p className="muted">Your own, those shared with you, your organisation's and the library.</p>
      </div>

      <Invitations />

      <section className="card" aria-label="Knowledge base list">
        {list.isPending ? (
          <Loading label="Loading knowledge bases…" />
        ) : list.isError ? (
          <ErrorMessage
            title="The knowledge bases could not be loaded."
            error={list.error}
            onRetry={() => list.refetch()}
          />
        ) : list.data.knowledge_bases.length === 0 ? (
          <EmptyState title="No knowledge bases yet.">
            <p>Create one below, then upload documents to it.</p>
          </EmptyState>
        ) : (
          <div className="table-wrap">
            <table className="table table--stack">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Description</th>
                  <th scope="col">Role</th>
                  <th scope="col" className="numeric">
                    Documents
                  </th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.knowledge_bases.map((kb) => (
                  <tr key={kb.id} data-testid="kb-row" data-kb-name={kb.name} data-kb-id={kb.id}>
                    <td data-label="Name" className="cell--heading">
                      <span className="cell-title">
                        <Link to={`/knowledge-bases/${encodeURIComponent(kb.id)}`}>{kb.name}</Link>
                        {kb.is_default ? <Badge tone="accent">Default</Badge> : null}
                      </span>
                    </td>
                    <td data-label="Description" className="muted">
                      {kb.description || '—'}
                    </td>
                    <td data-label="Role">
                      <RoleBadge role={kb.role} />
                      {kb.pending ? (
                        <span title="Shared with you: it answers your questions only when you tick it on Ask, until you accept it">
                          <Badge tone="accent">pending</Badge>
                        </span>
                      ) : null}
                    </td>
                    <td data-label="Documents" className="numeric">
                      {kb.document_count ?? '—'}
                    </td>
                    <td data-label="Actions" className="actions-cell">
                      <div className="actions">
                        {kb.role === 'owner' ? (
                          <Button small onClick={() => setSharing(kb)}>
                            Share
                          </Button>
                        ) : null}
                        <MembershipActions kb={kb} />
                        {user.is_admin && kb.role !== 'owner' ? <LibraryToggle kb={kb} /> : null}
                        {kb.role === 'owner' && !kb.is_default ? (
                          <Button
                            small
                            variant="danger"
                            onClick={() => {
                              remove.reset();
                              setDeleting(kb);
                            }}
                          >
                            Delete
                          </Button>
                        ) : null}
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <NewKnowledgeBaseForm />
      <DeletedKnowledgeBases />

      <ConfirmDialog
        open={deleting !== null}
        title={`Delete “${deleting?.name ?? ''}”?`}
        onConfirm={() => deleting && remove.mutate(deleting)}
        onCancel={() => setDeleting(null)}
        confirmLabel="Delete knowledge base"
        busy={remove.isPending}
        error={remove.error}
      >
        <p>
          The knowledge base and its documents stop being searchable at once. You can restore it from “Recently deleted”
          for a while.
        </p>
      </ConfirmDialog>
      <ShareDialog kb={sharing} onClose={() => setSharing(null)} />
    </div>
  );
}
