// One document: its details, its text (markdown rendered as elements; for a PDF the original one click away) and the
// passages it was cut into; citation cards on the Ask page link here.
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { api, documentFileUrl, isApiError } from '../../api/client.ts';
import { EmptyState } from '../../components/EmptyState.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Loading } from '../../components/Loading.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { useDocumentTitle } from '../../hooks/useDocumentTitle.ts';
import { formatDateTime } from '../../lib/format.ts';
import { plural } from '../../lib/format.ts';
import type { DocumentOrigin } from '../../api/generated.ts';
import { DocumentStatus } from '../KnowledgeBase/DocumentStatus.tsx';
import { DocumentPassages } from './DocumentPassages.tsx';
import { isFileKind, kindName } from '../../lib/fileKinds.ts';
import { DocumentText } from './DocumentText.tsx';

const ORIGIN_LABELS: Record<DocumentOrigin, string> = {
  paste: 'Pasted text',
  file: 'Uploaded file',
  api: 'Developer API',
};

export function DocumentScene() {
  const { id = '' } = useParams();
  const document = useQuery({
    queryKey: queryKeys.document(id),
    queryFn: () => api.getDocument(id),
    refetchInterval: (query) => {
      const status = query.state.data?.document.status;
      return status === 'queued' || status === 'processing' ? 1000 : false;
    },
  });
  const status = document.data?.document.status;
  // Read again when an ingestion ends: a new version brings its own text and passages.
  const content = useQuery({
    queryKey: [...queryKeys.documentContent(id), status],
    queryFn: () => api.getDocumentContent(id),
    enabled: document.isSuccess,
  });
  useDocumentTitle(document.data?.document.filename ?? 'Document');

  if (document.isPending) return <Loading label="Loading the document…" />;
  if (document.isError) {
    return (
      <div className="stack">
        <h1>Document</h1>
        {isApiError(document.error, 404) ? (
          <EmptyState title="This document does not exist, or you cannot see it.">
            <p>
              <Link to="/knowledge-bases">Back to the knowledge bases</Link>
            </p>
          </EmptyState>
        ) : (
          <ErrorMessage error={document.error} onRetry={() => document.refetch()} />
        )}
      </div>
    );
  }

  const doc = document.data.document;
  const kbPath = `/knowledge-bases/${encodeURIComponent(doc.knowledge_base_id)}`;
  return (
    <div className="stack">
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <Link to="/knowledge-bases">Knowledge bases</Link>
        <span aria-hidden="true"> / </span>
        <Link to={kbPath}>{content.data?.knowledge_base.name ?? 'Knowledge base'}</Link>
        <span aria-hidden="true"> / </span>
        <span aria-current="page">{doc.filename}</span>
      </nav>
      <div className="page-header">
        <h1 className="break-words">{doc.title || doc.filename}</h1>
      </div>
      <section className="card">
        <dl className="details">
          <div>
            <dt>Filename</dt>
            <dd className="break-words">{doc.filename}</dd>
          </div>
          <div>
            <dt>Title</dt>
            <dd className="break-words">{doc.title || '—'}</dd>
          </div>
          <div>
            <dt>Kind</dt>
            <dd data-testid="document-kind" data-kind={doc.kind}>
              {doc.kind === 'pdf' ? (
                <>
                  PDF ·{' '}
                  <a href={documentFileUrl(doc.id)} target="_blank" rel="noopener" data-testid="open-pdf">
                    Open PDF
                  </a>
                </>
              ) : isFileKind(doc.kind) ? (
                <>
                  {kindName(doc.kind)} ·{' '}
                  <a href={documentFileUrl(doc.id)} download data-testid="download-original">
                    Download original
                  </a>
                </>
              ) : (
                'Text'
              )}
            </dd>
          </div>
          <div>
            <dt>Status</dt>
            <dd>
              <DocumentStatus document={doc} />
            </dd>
          </div>
          <div>
            <dt>Chunks</dt>
            <dd>
              {doc.status === 'ready' || doc.total_chunks === 0 ? doc.chunks : `${doc.chunks} of ${doc.total_chunks}`}
            </dd>
          </div>
          {doc.scanned_pages?.length ? (
            <div>
              <dt>Read by OCR</dt>
              <dd data-testid="scanned-pages">
                <ScannedPages pages={doc.scanned_pages} />
              </dd>
            </div>
          ) : null}
          <div>
            <dt>Added as</dt>
            <dd data-testid="document-source">{ORIGIN_LABELS[doc.origin ?? 'api']}</dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>
              <time dateTime={doc.created_at}>{formatDateTime(doc.created_at)}</time>
            </dd>
          </div>
          <div>
            <dt>Updated</dt>
            <dd>
              <time dateTime={doc.updated_at}>{formatDateTime(doc.updated_at)}</time>
            </dd>
          </div>
          <div>
            <dt>Knowledge base</dt>
            <dd>
              <Link to={kbPath}>{content.data?.knowledge_base.name ?? 'Open its knowledge base'}</Link>
            </dd>
          </div>
        </dl>
      </section>
      {content.isPending ? (
        <Loading label="Loading the text…" />
      ) : content.isError ? (
        <ErrorMessage title="The text could not be loaded." error={content.error} onRetry={() => content.refetch()} />
      ) : (
        <>
          <section className="card" aria-labelledby="document-text-heading">
            <h2 id="document-text-heading">Text</h2>
            {content.data.content !== null ? (
              <DocumentText document={doc} content={content.data.content} />
            ) : (
              <p>
                The text extracted from each page is in the passages below; the original:{' '}
                <a href={documentFileUrl(doc.id)} target="_blank" rel="noopener">
                  Open PDF
                </a>
                .
              </p>
            )}
          </section>
          <section className="card" aria-labelledby="document-passages-heading">
            <h2 id="document-passages-heading">Passages</h2>
            <p className="muted small">
              What a question is matched against: the text cut into {plural(content.data.passages_total, 'passage')}
              {content.data.passages.length < content.data.passages_total
                ? `, the first ${content.data.passages.length} shown`
                : ''}
              .
            </p>
            {content.data.passages.length === 0 ? (
              <EmptyState title="No passages yet.">
                <p>They appear once the document is ready.</p>
              </EmptyState>
            ) : (
              <DocumentPassages documentId={doc.id} kind={doc.kind} passages={content.data.passages} />
            )}
          </section>
        </>
      )}
    </div>
  );
}

/**
 * The pages read by OCR, with Tesseract's confidence; those under 70 % flagged, for a person to check them against
 * the original (their words may be misread).
 */
function ScannedPages({ pages }: { pages: { page: number; confidence: number; low_confidence: boolean }[] }) {
  const low = pages.filter((page) => page.low_confidence);
  return (
    <>
      {pages.length === 1 ? 'page ' : 'pages '}
      {pages.map((page) => page.page).join(', ')} (scans without text, read by OCR)
      {low.length ? (
        <p className="small" role="note" data-testid="low-confidence">
          Low OCR confidence on {low.map((page) => `page ${page.page} (${Math.round(page.confidence)} %)`).join(', ')}:
          check {low.length === 1 ? 'it' : 'them'} against the original.
        </p>
      ) : null}
    </>
  );
}
