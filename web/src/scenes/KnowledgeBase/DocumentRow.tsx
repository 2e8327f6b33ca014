import { useMutation } from '@tanstack/react-query';
import { useRef, useState, type ChangeEvent } from 'react';
import { Link } from 'react-router';
import { api, documentFileUrl } from '../../api/client.ts';
import type { KbDocument } from '../../api/generated.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Badge } from '../../components/StatusBadge.tsx';
import { useLimits } from '../../hooks/limits.ts';
import { isFileKind, kindName } from '../../lib/fileKinds.ts';
import { checkFiles, refusalMessages, TEXT_ACCEPT_ATTRIBUTE } from '../../lib/files.ts';
import { formatDateTime } from '../../lib/format.ts';
import { DocumentStatus } from './DocumentStatus.tsx';
import { failedForGood, removalVerb } from './documentStates.ts';

export interface DocumentRowProps {
  document: KbDocument;
  /** The owner's controls: Replace, Retry, Delete, Cancel. Nobody else sees them at all. */
  canEdit: boolean;
  onChanged: () => void;
  onDelete: () => void;
  /** A queued or processing ingestion: stop it and remove the document (the scene confirms first). */
  onCancel: () => void;
}

export function DocumentRow({ document, canEdit, onChanged, onDelete, onCancel }: DocumentRowProps) {
  const fileInput = useRef<HTMLInputElement>(null);
  const [refusal, setRefusal] = useState<string | null>(null);
  const limits = useLimits();
  const isFile = isFileKind(document.kind);
  const inFlight = document.status === 'queued' || document.status === 'processing';

  // The new file's name replaces the old one: a replacement is usually a new version with its own name.
  const replace = useMutation({
    mutationFn: async (file: File) =>
      api.replaceDocument(document.id, { filename: file.name, content: await file.text() }),
    onSuccess: onChanged,
  });
  const retry = useMutation({ mutationFn: () => api.retryDocument(document.id), onSuccess: onChanged });

  function onReplaceChosen(event: ChangeEvent<HTMLInputElement>) {
    const files = Array.from(event.target.files ?? []);
    event.target.value = '';
    if (files.length === 0) return;
    // Text replaces text; the server keeps a PDF as it is (delete it and upload the new file instead).
    const check = checkFiles(files.slice(0, 1), { limits: limits.data ?? null, allowPdf: false });
    const refusals = refusalMessages(check);
    setRefusal(refusals.length > 0 ? refusals.join(' ') : null);
    replace.reset();
    if (check.text[0]) replace.mutate(check.text[0]);
  }

  const error = refusal ? new Error(refusal) : (replace.error ?? retry.error);

  return (
    <tr
      data-testid="document-row"
      data-status={document.status}
      data-filename={document.filename}
      data-document-id={document.id}
    >
      <td data-label="Document" className="cell--heading">
        <Link to={`/documents/${encodeURIComponent(document.id)}`} className="cell-title">
          {document.filename}
        </Link>
        {document.title && document.title !== document.filename ? (
          <span className="small muted block">{document.title}</span>
        ) : null}
        {isFile ? (
          <span className="doc-kind small block">
            <Badge>{kindName(document.kind)}</Badge>
            {document.kind === 'pdf' ? (
              <a href={documentFileUrl(document.id)} target="_blank" rel="noopener" data-testid="open-pdf">
                Open PDF
              </a>
            ) : (
              <a href={documentFileUrl(document.id)} download data-testid="download-original">
                Download original
              </a>
            )}
          </span>
        ) : null}
      </td>
      <td data-label="Status">
        <DocumentStatus document={document} />
        {error ? <ErrorMessage error={error} /> : null}
      </td>
      <td data-label="Updated" className="nowrap">
        <time dateTime={document.updated_at}>{formatDateTime(document.updated_at)}</time>
      </td>
      {canEdit ? (
        <td data-label="Actions" className="actions-cell">
          <div className="actions">
            {document.status === 'failed' && !failedForGood(document) ? (
              <Button small variant="primary" onClick={() => retry.mutate()} busy={retry.isPending}>
                Retry
              </Button>
            ) : null}
            {isFile ? null : (
              <>
                <Button small onClick={() => fileInput.current?.click()} busy={replace.isPending}>
                  Replace
                </Button>
                <input
                  ref={fileInput}
                  type="file"
                  accept={TEXT_ACCEPT_ATTRIBUTE}
                  hidden
                  tabIndex={-1}
                  data-testid="replace-input"
                  onChange={onReplaceChosen}
                />
              </>
            )}
            {inFlight ? (
              <Button small variant="danger" onClick={onCancel} data-testid="cancel-ingestion">
                Cancel
              </Button>
            ) : (
              <Button small variant={failedForGood(document) ? 'primary' : 'danger'} onClick={onDelete}>
                {removalVerb(document)}
              </Button>
            )}
          </div>
        </td>
      ) : null}
    </tr>
  );
}
