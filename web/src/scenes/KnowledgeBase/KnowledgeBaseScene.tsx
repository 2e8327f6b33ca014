// One knowledge base: its documents and their ingestion status, polled every second while any is still queued or
// processing. Owners upload (text and PDFs), paste, replace, retry, cancel and delete; everyone else only reads.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, isApiError } from '../../api/client.ts';
import type { KbDocument } from '../../api/generated.ts';
import { ConfirmDialog } from '../../components/Dialog.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Loading } from '../../components/Loading.tsx';
import { Badge, RoleBadge } from '../../components/StatusBadge.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { refetchAfterChange } from '../../hooks/refetchAfterChange.ts';
import { useDocumentTitle } from '../../hooks/useDocumentTitle.ts';
import { AnswerRatings } from './AnswerRatings.tsx';
import { DocumentRow } from './DocumentRow.tsx';
import { removalVerb } from './documentStates.ts';
import { IngestionSummary } from './IngestionSummary.tsx';
import { PasteTextForm } from './PasteTextForm.tsx';
import { UploadArea } from './UploadArea.tsx';

const POLL_MS = 1000;
/** Documents the summary line names at most (the newest). */
const MAX_SUMMARISED = 20;

export const isInFlight = (document: KbDocument) => document.status === 'queued' || document.status === 'processing';

/** Delete and Cancel are the same call (DELETE stops an ingestion in flight too); the dialog says which it is. */
interface Removal {
  document: KbDocument;
  cancel: boolean;
}

export function KnowledgeBaseScene() {
  const { id = '' } = useParams();
  const queryClient = useQueryClient();
  const kb = useQuery({ queryKey: queryKeys.knowledgeBase(id), queryFn: () => api.getKnowledgeBase(id) });
  const documents = useQuery({
    queryKey: queryKeys.documents(id),
    queryFn: () => api.listDocuments(id),
    refetchInterval: (query) => (query.state.data?.documents.some(isInFlight) ? POLL_MS : false),
  });
  const [removing, setRemoving] = useState<Removal | null>(null);
  /** What was added on this page, for the summary line (the newest batch last; a new page starts empty). */
  const [added, setAdded] = useState<KbDocument[]>([]);
  useDocumentTitle(kb.data?.knowledge_base.name ?? 'Knowledge base');

  const documentsChanged = () => {
    void refetchAfterChange(queryClient, queryKeys.documents(id));
    void refetchAfterChange(queryClient, queryKeys.knowledgeBases, { exact: true });
  };
  const documentsAdded = (documents: KbDocument[]) => {
    setAdded((current) =>
      [...current.filter((known) => !documents.some((document) => document.id === known.id)), ...documents].slice(
        -MAX_SUMMARISED,
      ),
    );
    documentsChanged();
  };
  const remove = useMutation({
    mutationFn: async (document: KbDocument) => {
      try {
        await api.deleteDocument(document.id);
      } catch (error) {
        // Already gone (removed in another tab): what was asked for is done.
        if (!isApiError(error, 404)) throw error;
      }
    },
    onSuccess: () => {
      setRemoving(null);
      documentsChanged();
    },
  });
  const askToRemove = (document: KbDocument, cancel: boolean) => {
    remove.reset();
    setRemoving({ document, cancel });
  };

  if (kb.isPending) return <Loading label="Loading the knowledge base…" />;
  if (kb.isError) {
    return (
      <div className="stack">
        <h1>Knowledge base</h1>
        {isApiError(kb.error, 404) ? (
          <EmptyState title="This knowledge base does not exist, or you cannot see it.">
            <p>
              <Link to="/knowledge-bases">Back to the knowledge bases</Link>
            </p>
          </EmptyState>
        ) : (
          <ErrorMessage error={kb.error} onRetry={() => kb.refetch()} />
        )}
      </div>
    );
  }

  const knowledgeBase = kb.data.knowledge_base;
  const isOwner = knowledgeBase.role === 'owner';

  return (
    <div className="stack">
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <Link to="/knowledge-bases">Knowledge bases</Link>
        <span aria-hidden="true"> / </span>
        <span aria-current="page">{knowledgeBase.name}</span>
      </nav>
      <div className="page-header">
        <h1 className="title-with-badges">
          <span>{knowledgeBase.name}</span>
          <RoleBadge role={knowledgeBase.role} />
          {knowledgeBase.is_default ? <Badge tone="accent">Default</Badge> : null}
        </h1>
        {knowledgeBase.description ? <p className="muted">{knowledgeBase.description}</p> : null}
        <p>
          <Link to={`/ask?kb=${encodeURIComponent(knowledgeBase.id)}`}>Put a question to this knowledge base</Link>
        </p>
      </div>

      {isOwner ? (
        <div className="grid-2">
          <UploadArea kbId={knowledgeBase.id} documents={documents.data?.documents ?? []} onUploaded={documentsAdded} />
          <PasteTextForm kbId={knowledgeBase.id} onAdded={documentsAdded} />
        </div>
      ) : (
        <p className="muted">You can read this knowledge base; only its owner can change its documents.</p>
      )}

      <section className="card" aria-labelledby="documents-heading">
        <h2 id="documents-heading">Documents</h2>
        <IngestionSummary added={added} documents={documents.data?.documents} />
        {documents.isPending ? (
          <Loading label="Loading documents…" />
        ) : documents.isError ? (
          <ErrorMessage
            title="The documents could not be loaded."
            error={documents.error}
            onRetry={() => documents.refetch()}
          />
        ) : documents.data.documents.length === 0 ? (
          <EmptyState title="No documents yet.">
            {isOwner ? (
              <p>
                Upload PDF, Word, PowerPoint, Excel, CSV, web page, image, .txt or .md files, or paste text, to add the
                first one.
              </p>
            ) : null}
          </EmptyState>
        ) : (
          <div className="table-wrap">
            <table className="table table--stack">
              <thead>
                <tr>
                  <th scope="col">Document</th>
                  <th scope="col">Status</th>
                  <th scope="col">Updated</th>
                  {isOwner ? (
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  ) : null}
                </tr>
              </thead>
              <tbody>
                {documents.data.documents.map((document) => (
                  <DocumentRow
                    key={document.id}
                    document={document}
                    canEdit={isOwner}
                    onChanged={documentsChanged}
                    onDelete={() => askToRemove(document, false)}
                    onCancel={() => askToRemove(document, true)}
                  />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      {isOwner ? <AnswerRatings kbId={knowledgeBase.id} /> : null}

      <ConfirmDialog
        open={removing !== null}
        title={
          removing?.cancel
            ? `Stop the ingestion of “${removing.document.filename}”?`
            : `${removalVerb(removing?.document)} “${removing?.document.filename ?? ''}”?`
        }
        onConfirm={() => removing && remove.mutate(removing.document)}
        onCancel={() => setRemoving(null)}
        confirmLabel={removing?.cancel ? 'Stop ingestion' : removalVerb(removing?.document)}
        cancelLabel={removing?.cancel ? 'Keep going' : 'Keep it'}
        busy={remove.isPending}
        error={remove.error}
      >
        {removing?.cancel ? (
          <p>
            The ingestion stops and the document is removed from this knowledge base
            {removing.document.chunks > 0 ? ', with the version that can be searched now' : ''}. This cannot be undone.
          </p>
        ) : (
          <p>The document and its chunks are removed from this knowledge base. This cannot be undone.</p>
        )}
      </ConfirmDialog>
    </div>
  );
}
