import { useId } from 'react';
import { Button } from '../../components/Button.tsx';
import { ProgressBar } from '../../components/ProgressBar.tsx';
import { formatBytes } from '../../lib/format.ts';
import type { PdfUpload } from './usePdfUploads.ts';

export interface UploadRowProps {
  upload: PdfUpload;
  onCancel: () => void;
  onRetry: () => void;
  onDismiss: () => void;
}

/** One PDF on its way to the server: waiting, uploading (bytes sent of total), or failed with the reason. */
export function UploadRow({ upload, onCancel, onRetry, onDismiss }: UploadRowProps) {
  const textId = useId();
  const { file, state, sent, total } = upload;
  const amount = `${formatBytes(sent)} of ${formatBytes(total)}`;
  return (
    <li className="upload-row" data-testid="upload-row" data-filename={file.name} data-state={state}>
      <p id={textId} className="upload-row__text break-words">
        {state === 'waiting' ? (
          <>
            Waiting to upload <strong>{file.name}</strong> ({formatBytes(file.size)})
          </>
        ) : state === 'uploading' ? (
          <>
            Uploading <strong>{file.name}</strong> — {amount}
            {sent >= total ? ', waiting for the server…' : ''}
          </>
        ) : (
          <>
            <strong>{file.name}</strong> was not uploaded.
          </>
        )}
      </p>
      {state === 'uploading' ? (
        <ProgressBar value={sent} max={total} label={`Uploading ${file.name}`} valueText={amount} />
      ) : null}
      {state === 'failed' ? (
        <p role="alert" className="upload-row__error">
          {upload.error}
        </p>
      ) : null}
      <div className="actions">
        {state === 'failed' ? (
          <>
            <Button small variant="primary" onClick={onRetry} aria-describedby={textId}>
              Try again
            </Button>
            <Button small onClick={onDismiss} aria-describedby={textId}>
              Dismiss
            </Button>
          </>
        ) : (
          <Button small onClick={onCancel} aria-describedby={textId} data-testid="cancel-upload">
            Cancel
          </Button>
        )}
      </div>
    </li>
  );
}
