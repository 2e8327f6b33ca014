import type { KbDocument } from '../../api/generated.ts';

/** "a.pdf", "a.pdf and b.md", "a.pdf, b.md and c.txt". */
function names(documents: KbDocument[]): string {
  const all = documents.map((document) => document.filename);
  return all.length <= 1 ? (all[0] ?? '') : `${all.slice(0, -1).join(', ')} and ${all[all.length - 1]}`;
}

const isOrAre = (documents: KbDocument[]) => (documents.length === 1 ? 'is' : 'are');

/**
 * One status line for the documents added on this page (every file of a batch, pasted text too), saying where each
 * stands now from the polled list: being ingested, ready, or failed. Never "ingestion has started" about a document
 * that has since failed. Documents removed meanwhile are left out.
 */
export function IngestionSummary({ added, documents }: { added: KbDocument[]; documents: KbDocument[] | undefined }) {
  const current = added
    .map((document) => (documents ? documents.find((listed) => listed.id === document.id) : document))
    .filter((document): document is KbDocument => document !== undefined);
  const inFlight = current.filter((document) => document.status === 'queued' || document.status === 'processing');
  const ready = current.filter((document) => document.status === 'ready');
  const failed = current.filter((document) => document.status === 'failed');
  const parts = [
    current.length > 0 ? `Added ${names(current)}.` : '',
    inFlight.length > 0 ? `${names(inFlight)} ${isOrAre(inFlight)} being ingested.` : '',
    ready.length > 0 ? `${names(ready)} ${isOrAre(ready)} ready.` : '',
    failed.length > 0 ? `${names(failed)} failed: see the list below.` : '',
  ];
  return (
    <p role="status" className="status-line" data-testid="ingestion-summary">
      {parts.filter(Boolean).join(' ')}
    </p>
  );
}
