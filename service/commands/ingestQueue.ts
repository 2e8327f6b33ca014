// Where a queued document stands (issue 24 §2): "2 documents ahead" in the web app, computed from the fair claim
// order (jobs/scheduling.ts). Only the web realm shows it; the Developer API's fields are the contract's.
import type { DocumentRecord } from '../store/index.ts';
import type { IngestRunner } from '../jobs/runner.ts';

/** Document id → documents ahead of it, for those of `documents` that are queued (no read when none is). */
export async function documentsAhead(
  deps: { jobs: IngestRunner },
  documents: DocumentRecord[],
): Promise<ReadonlyMap<string, number>> {
  if (!documents.some((document) => document.status === 'queued')) return new Map();
  return deps.jobs.documentsAhead();
}
