import type { KbDocument } from '../../api/generated.ts';
import { ProgressBar } from '../../components/ProgressBar.tsx';
import { StatusBadge } from '../../components/StatusBadge.tsx';
import { isFileKind, pageWord, readingWhat } from '../../lib/fileKinds.ts';
import { plural } from '../../lib/format.ts';

interface Step {
  text: string;
  /** A determinate bar, when the step's size is known. */
  bar?: { value: number; max: number; label: string };
}

/**
 * What an ingestion in flight is doing, from the server's `progress` (so it survives a reload), as the work moves
 * (issue 31: a 20 MB PDF said "page 1 of 1" with a full bar while its one page was still being read). A PDF is
 * opened ("Opening the PDF…"), its pages read ("Reading page n of m", the bar at the pages done, and the characters
 * a slow page has given so far; "Waiting for the PDF reader" between two steps), its text prepared ("Preparing the text of m pages…"); then every document's chunks
 * are embedded ("Embedding x of y").
 */
function ingestionStep(document: KbDocument): Step {
  const { status, progress, filename } = document;
  if (progress?.phase === 'extracting') {
    const pages = progress.pages;
    const what = readingWhat(document.kind);
    const unit = pageWord(document.kind);
    if (!pages || pages.total === 0) return { text: `Opening ${what}…` };
    if (pages.done >= pages.total) return { text: `Preparing the text of ${plural(pages.total, unit)}…` };
    const bar = { value: pages.done, max: pages.total, label: `Pages of ${filename} read` };
    // Between two steps: another PDF has the reader for a while.
    if (pages.waiting) return { text: `Waiting for the PDF reader (${pages.done} of ${pages.total} pages read)`, bar };
    const characters =
      pages.characters !== undefined ? ` (${pages.characters.toLocaleString('en')} characters of text so far)` : '';
    return {
      // The server's count of pages done; the page being read is the next one.
      text: `Reading ${unit} ${pages.done + 1} of ${pages.total}${characters}`,
      bar,
    };
  }
  if (progress && progress.total > 0) {
    return {
      text: `Embedding ${progress.embedded} of ${progress.total}`,
      bar: { value: progress.embedded, max: progress.total, label: `Embedding ${filename}` },
    };
  }
  // Where it stands, from the server's claim order: "1 document ahead" says why it waits, and that it moves.
  if (status === 'queued' && document.ahead) return { text: `${plural(document.ahead, 'document')} ahead` };
  if (status === 'queued')
    return {
      text: isFileKind(document.kind)
        ? `Waiting for the ${document.kind === 'pdf' ? 'PDF reader' : 'reader'}…`
        : 'Waiting for a worker…',
    };
  return { text: isFileKind(document.kind) ? `Reading ${readingWhat(document.kind)}…` : 'Splitting into chunks…' };
}

/** The status badge plus what goes with it: progress while in flight, the chunk count, or the error. */
export function DocumentStatus({ document }: { document: KbDocument }) {
  const { status } = document;
  const step = status === 'queued' || status === 'processing' ? ingestionStep(document) : null;
  return (
    <div className="doc-status">
      <StatusBadge status={status} />
      {step ? (
        <div className="doc-status__progress">
          {step.bar ? <ProgressBar value={step.bar.value} max={step.bar.max} label={step.bar.label} /> : null}
          <span className="small muted" data-testid="ingestion-progress">
            {step.text}
          </span>
        </div>
      ) : null}
      {status === 'ready' ? <span className="small muted">{plural(document.chunks, 'chunk')}</span> : null}
      {status === 'failed' ? <span className="doc-status__error">{document.error ?? 'Ingestion failed.'}</span> : null}
    </div>
  );
}
