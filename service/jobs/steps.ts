// Ingestion jobs: what turns a stored document version into searchable chunks, durably.
//
// A job is a record in MongoDB (store/ingestJobs.ts), one per document in flight, claimed with a lease by one
// process at a time. Every step can run again: chunk ids derive from the document id and version, the swap and
// the clean-ups are idempotent, so a process that dies anywhere leaves a job whose lease lapses and which another
// process (or this one, restarted) finishes. The steps of a job:
//
//   build   split → embed in small groups → bulk-index (no refresh) → one shared refresh (refresher.ts)
//           A new document then goes live (record `ready`, job deleted). A replacement swaps instead: ONE update
//           of the job record hides the old version instead of the new one, so a query sees exactly one version.
//   retire  the replaced version's text and chunks are removed after a short delay, then the job is deleted.
//   clean   a failed version's chunks are removed before the failure is recorded (nothing failed is searchable).
//
// This file holds the steps but the build (buildVersion.ts); execution.ts runs them in order under the job's lease (lease.ts), runner.ts claims jobs,
// and failures.ts settles how a run that did not finish ends.
import { BadRequestError, DocumentReadError, PdfExtractionError } from '../errors.ts';
import type { IngestJobRecord, MetadataEntry } from '../store/index.ts';
import type { FileKind } from '../extraction/fileKinds.ts';
import type { ExtractedPdf, PdfSteps } from '../extraction/pdf.ts';
import { removeVersionChunks } from './failures.ts';
import { JobCancelled, type IngestDeps, type JobRun } from './runContext.ts';

/** Progress is written at most this often (the first write of each kind excepted). */
export const PROGRESS_EVERY_MS = 500;

/**
 * A PDF's text per page, extracted from its stored original in a worker. Progress says what the reader does, as it
 * does it (issue 31: a 20 MB PDF said "page 1 of 1" with a full bar for ~10 s): the file is opened (`extracting`
 * with no pages yet), page n of m is read (`pages.done` = n - 1, and `pages.characters` as a slow page gives its
 * text; `pages.waiting` while it waits between two steps for the reader, which another PDF has), then all pages
 * are read and the text is prepared (`pages.done` = m) until the chunks are embedded. Written
 * at most every PROGRESS_EVERY_MS, except the first of each kind. An unreadable PDF fails the document with a message
 * a person understands (PdfExtractionError, errors.ts); nothing has been indexed yet, so nothing half-ingested remains.
 */
/** Reading failures that are what a hostile file looks like (a bound it passed), worth an operator's eye. */
const HOSTILE = new Set<string>(['too_large', 'timeout', 'too_many_rows', 'too_many_slides', 'xml_refused']);

export async function extractFile(
  { deps, job, checkpoint, stopped, onExtracted, readerSteps, timings }: JobRun,
  fileId: string,
  kind: FileKind,
): Promise<ExtractedPdf> {
  let lastProgress = 0;
  let progressWrite: Promise<unknown> = Promise.resolve();
  const writeProgress = (pages?: { done: number; total: number; characters?: number; waiting?: boolean }) => {
    lastProgress = Date.now();
    const progress = { embedded: 0, total: 0, phase: 'extracting' as const, ...(pages ? { pages } : {}) };
    progressWrite = progressWrite
      .then(() => deps.store.setDocumentProgress(job._id, 'processing', progress, { ...timings }))
      .catch(() => undefined);
  };
  // It has the reader: "Opening the PDF", not "Waiting for a worker", while the file is loaded and parsed.
  writeProgress();
  // Settled only once that write has landed: a failure recorded before it would be set back to "processing".
  const bytes = await deps.store.readFile(fileId).finally(() => progressWrite);
  if (bytes === null) throw new Error(`the stored file of document ${job._id} is missing`);
  let pagesKnown = false;
  let read = { done: 0, total: 0 };
  const onPage = (done: number, total: number, characters?: number) => {
    const first = !pagesKnown;
    pagesKnown = true;
    read = { done, total };
    if (!first && done < total && Date.now() - lastProgress < PROGRESS_EVERY_MS) return;
    writeProgress({ done, total, ...(characters !== undefined ? { characters } : {}) });
  };
  // Between two steps it waits for the reader again (another PDF has it), and says so until it reads on.
  const steps: PdfSteps = {
    ...readerSteps,
    paused: async () => {
      if (read.total > 0) writeProgress({ ...read, waiting: true });
      await readerSteps.paused?.();
      if (read.total > 0) writeProgress(read);
    },
  };
  let extracted;
  try {
    extracted = await deps.pdf!.extract(bytes, onPage, stopped, steps, { kind, filename: job.filename });
  } catch (error) {
    // The last page's progress write may still be in flight: landing after the failure is recorded, it would set
    // the document back to "processing" for good (seen once under load: a scanned PDF stuck at "page 2 of 2").
    await progressWrite;
    // Stopped (its reader was killed for it): the job is released or gone, not failed.
    checkpoint();
    // Over its memory or time: what a hostile PDF looks like, worth an operator's eye (ordinary failures are not).
    if ((error instanceof PdfExtractionError || error instanceof DocumentReadError) && HOSTILE.has(error.reason)) {
      deps.logger.warn(
        { documentId: job._id, kind, reason: error.reason, detail: error.message },
        kind === 'pdf' ? 'a PDF hit a reading limit' : 'a file hit a reading limit',
      );
    }
    throw error;
  } finally {
    onExtracted();
  }
  await progressWrite;
  checkpoint();
  // A PDF that names itself is titled so (its chunks, its embeddings' context, the record once ready), not by its
  // filename. Read again by every attempt, so the job record need not keep it.
  if (extracted.title !== null) job.title = extracted.title;
  // The same bound as a text document's content: a small file of compressed text can expand a hundredfold.
  const characters = extracted.pages.reduce((sum, page) => sum + page.length, 0);
  if (characters > deps.config.limits.maxContentBytes) {
    throw new BadRequestError(
      `the ${kind === 'pdf' ? "PDF's" : "file's"} text is ${characters.toLocaleString('en')} characters; the limit is ${deps.config.limits.maxContentBytes.toLocaleString('en')} (KBQA_MAX_CONTENT_BYTES)`,
    );
  }
  return extracted;
}

/** The new version is live: its text becomes the document's, its record fields too; the old chunks go. */
export async function retireReplacedVersion({ deps, job, onLive, checkpoint }: JobRun): Promise<void> {
  const { store, search } = deps;
  const built = job.built!;
  // A re-run after a lapsed lease starts here too: not once another process may hold the job.
  checkpoint();
  if (job.content_id !== job._id) {
    const content = await store.findDocumentContent(job.content_id);
    if (content !== null) await store.setLiveContent(job._id, job.knowledge_base_id, content);
  }
  const now = new Date();
  const ready = await store.setDocumentReady(
    job._id,
    job.version,
    { filename: job.filename, title: job.title, ...built, ...liveMetadata(job) },
    now,
  );
  if (job.content_id !== job._id) await store.deleteDocumentContent(job.content_id);
  const document = ready ? await store.findDocument(job._id) : null;
  if (document) onLive(document);
  // Queries that read the hidden versions just before the swap still exclude the new version and serve the old
  // one for a moment; keeping the old chunks a little longer means such a query never finds neither.
  await new Promise((resolve) => setTimeout(resolve, deps.config.ingestion.retireDelayMs));
  checkpoint();
  await search.deleteChunksOfDocumentVersion(job._id, job.replaces!);
  await store.deleteJob(job._id);
  if (!ready) {
    // Deleted meanwhile: the deleter removed what it found; this removes what was built after.
    await search.deleteChunksOfDocument(job._id);
    throw new JobCancelled(false);
  }
}

/**
 * The document, its version or its KB went away: remove this version's chunks (and, when the KB is gone and the
 * document never went live, the whole document), delete the job, stop.
 */
export async function cancel(
  deps: IngestDeps,
  job: IngestJobRecord,
  knowledgeBaseGone: boolean,
  newDocument = false,
): Promise<never> {
  // Read first: a job found gone may have been finished by another process after this one's lease lapsed, and the
  // version it made live keeps its chunks. (A KB gone takes all of a new document's chunks below anyway.)
  const document = await deps.store.findDocument(job._id);
  if (document?.live_version !== job.version) await removeVersionChunks(deps, job);
  if (document && knowledgeBaseGone && (newDocument || document.live_version === null)) {
    await deps.store.deleteDocument(job._id);
    await deps.search.deleteChunksOfDocument(job._id);
  } else if (job.content_id !== job._id && (!document || document.version !== job.version)) {
    await deps.store.deleteDocumentContent(job.content_id);
  }
  await deps.store.deleteJob(job._id);
  throw new JobCancelled(knowledgeBaseGone);
}

/** The record's metadata once the job's version is live (a job queued before jobs carried metadata leaves it). */
export function liveMetadata(job: IngestJobRecord): { metadata?: MetadataEntry[] } {
  return job.metadata ? { metadata: job.metadata } : {};
}
