import type { KbDocument } from '../../api/types.ts';
import { ProgressBar } from '../../components/ProgressBar.tsx';
import { StatusBadge } from '../../components/StatusBadge.tsx';
import { plural } from '../../lib/format.ts';

/** The status badge plus what goes with it: progress while processing, the chunk count, or the error. */
export function DocumentStatus({ document }: { document: KbDocument }) {
  const { status, progress } = document;
  return (
    <div className="doc-status">
      <StatusBadge status={status} />
      {status === 'processing' ? (
        progress && progress.total > 0 ? (
          <div className="doc-status__progress">
            <ProgressBar value={progress.embedded} max={progress.total} label={`Embedding ${document.filename}`} />
            <span className="small muted">
              {progress.embedded} of {progress.total}
            </span>
          </div>
        ) : (
          <span className="small muted">Splitting into chunks…</span>
        )
      ) : null}
      {status === 'queued' ? <span className="small muted">Waiting for a worker…</span> : null}
      {status === 'ready' ? <span className="small muted">{plural(document.chunks, 'chunk')}</span> : null}
      {status === 'failed' ? <span className="doc-status__error">{document.error ?? 'Ingestion failed.'}</span> : null}
    </div>
  );
}
