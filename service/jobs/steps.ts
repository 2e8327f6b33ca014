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
// This file holds the steps; runner.ts claims jobs, holds their leases and settles how each run ends.
import { BadRequestError, IngestionAbandonedError, PdfExtractionError, UpstreamUnavailableError } from '../errors.ts';
import type { SegmentEmbedding } from '../rag/index.ts';
import type { DocumentRecord, IngestJobRecord, MetadataEntry } from '../store/index.ts';
import { metadataObject } from '../store/index.ts';
import { chunkMetadata } from '../search/metadataFilter.ts';
import type { PdfSteps } from '../extraction/pdf.ts';
import type { OcrPage } from '../extraction/ocr.ts';
import { splitPages } from '../extraction/pdfPages.ts';
import { removeVersionChunks } from './failures.ts';
import { chunkDocuments } from './records.ts';
import { JobCancelled, JobStopped, type FirstStep, type IngestDeps, type JobRun } from './run.ts';

/**
 * Segments embedded and indexed per step: progress moves, and a lost lease or a shutdown is noticed, this often. A
 * segment is up to 510 tokens plus a vector per sentence (up to 48): 8 keep a step to a few seconds on 2 cores.
 */
const SEGMENTS_PER_STEP = 8;
/**
 * A version's vectors are kept in memory for a rewrite after an alias swap up to this many segments: with their
 * sentence vectors (~8 a segment, at most 48) about 2 MB of 384-dimension vectors, 10 MB at most (4 times that for
 * 1536 dimensions).
 */
const VECTORS_KEPT_UP_TO = 64;
/** Alias moves one build follows before it gives up (retried): a swap and a rollback at once, say. */
const MAX_ALIAS_MOVES = 3;
const PROGRESS_EVERY_MS = 500;

/**
 * Splits a new text and embeds its first step at once, before its document and job are stored: the request's
 * writes (a few FerretDB round trips) then overlap the embedder's work instead of preceding it. Nothing is written:
 * the job builds for the index the step was embedded for, and a request whose writes fail drops it (its rejection is
 * handled here, so an unawaited failure is not an unhandled one).
 */
export function startFirstStep(deps: IngestDeps, content: string, filename: string, title: string): Promise<FirstStep> {
  const work = (async () => {
    const serving = await deps.search.servingIndex();
    const { total, segments } = await deps.rag.split(content, filename);
    const step = segments.slice(0, SEGMENTS_PER_STEP);
    const embeddings = step.length > 0 ? await deps.rag.embedSegments(title, step, serving.embedder.modelName) : [];
    return { total, segments, embeddings, serving };
  })();
  work.catch(() => undefined);
  return work;
}

/** Runs a held job from wherever it stands (a re-run after a crash continues the same way). */
export async function executeJob(run: JobRun): Promise<void> {
  const { deps, job } = run;
  if (job.attempts > deps.config.ingestion.maxAttempts) {
    throw new IngestionAbandonedError(
      `ingestion was interrupted ${job.attempts - 1} times (the process running it stopped each time); retry the document, or ask an operator to look at the server's logs`,
    );
  }
  if (job.phase === 'build') await buildVersion(run);
  if (job.replaces !== null) await retireReplacedVersion(run);
}

async function buildVersion(run: JobRun): Promise<void> {
  const { deps, job, owner, checkpoint, held, onLive, prepared } = run;
  const { store, search, rag } = deps;
  let document: DocumentRecord | null;
  let content: string | null;
  if (prepared) {
    ({ document, content } = prepared);
  } else {
    document = await store.findDocument(job._id);
    const knowledgeBaseLive = (await store.findLiveKnowledgeBase(job.knowledge_base_id)) !== null;
    if (!document || document.version !== job.version || !knowledgeBaseLive)
      await cancel(deps, job, !knowledgeBaseLive);
    // An earlier attempt may have indexed some chunks (or more of them, before a splitter change): start clean.
    if (job.attempts > 1) await search.deleteChunksOfDocumentVersion(job._id, job.version);
    content = job.file_id ? null : await store.findDocumentContent(job.content_id);
  }
  const extracted = job.file_id ? await extractPdf(run, job.file_id) : null;
  const pages = extracted?.pages ?? null;
  if (pages === null && content === null)
    throw new Error(`the stored text of document ${job._id} (version ${job.version}) is missing`);

  const firstStep = pages === null && prepared?.firstStep ? await prepared.firstStep : null;
  const { total, segments } = pages
    ? await splitPages(pages, (text) => rag.split(text, job.filename), extracted!.scanned)
    : (firstStep ?? (await rag.split(content as string, job.filename)));
  // A PDF's progress keeps saying how many pages it has while its chunks are embedded.
  const phase = pages ? { phase: 'embedding' as const, pages: { done: pages.length, total: pages.length } } : {};
  checkpoint();
  if (segments.length === 0) throw new BadRequestError('content: has no text to index (no letters or digits)');
  // One document write per job start and per PROGRESS_EVERY_MS, not per step: writes are what FerretDB is slow at.
  // A request waiting on a document of one step goes from queued to ready directly (nobody polls it meanwhile).
  if (!prepared || segments.length > SEGMENTS_PER_STEP) {
    if (
      !(await store.setDocumentProgress(
        job._id,
        'processing',
        { embedded: 0, total: segments.length, ...phase },
        run.timings,
      ))
    )
      await cancel(deps, job, false);
  }
  // The version's metadata on every chunk; a job queued before jobs carried metadata uses the record's.
  const metadata = job.metadata ?? document!.metadata;
  const target = {
    _id: job._id,
    knowledge_base_id: job.knowledge_base_id,
    filename: job.filename,
    title: job.title,
    created_at: document!.created_at,
    chunkMetadata: chunkMetadata(metadataObject(metadata)),
  };
  let lastProgress = Date.now();
  // One index for the whole version, with its embedder: the one the alias points to as the build starts (as its
  // first step began, when the request embedded it). If a migration swaps the alias meanwhile, the version is
  // written to the new one too before it goes live (below).
  let serving = firstStep?.serving ?? (await search.servingIndex());
  // Kept for that rewrite while the version is small; a large one is embedded again in that rare case.
  const vectorsKept: SegmentEmbedding[] | null = segments.length <= VECTORS_KEPT_UP_TO ? [] : null;
  const modelName = serving.embedder.modelName;
  const embedStep = (start: number): Promise<SegmentEmbedding[]> => {
    if (start === 0 && firstStep) return Promise.resolve(firstStep.embeddings);
    const embedding = rag.embedSegments(job.title, segments.slice(start, start + SEGMENTS_PER_STEP), modelName);
    // Awaited by the next turn of the loop, or dropped when this one stops the job.
    embedding.catch(() => undefined);
    return embedding;
  };
  let nextEmbeddings = embedStep(0);
  for (let start = 0; start < segments.length; start += SEGMENTS_PER_STEP) {
    const step = segments.slice(start, start + SEGMENTS_PER_STEP);
    const embeddings = await nextEmbeddings;
    vectorsKept?.push(...embeddings);
    checkpoint();
    // The next step's vectors are computed while this step's chunks are indexed and its progress written: the
    // model pool is not left idle while this job waits on OpenSearch and FerretDB (one step ahead, no more).
    if (start + SEGMENTS_PER_STEP < segments.length) nextEmbeddings = embedStep(start + SEGMENTS_PER_STEP);
    await search.indexChunks(
      chunkDocuments(target, job.version, step, embeddings, serving.embedder.modelName, start),
      serving.index,
    );
    // Deleted (cancelled) meanwhile: its deleter removed the chunks written so far, not this step's. Seen here, one
    // primary-key read per step, rather than at the next lease renewal seconds later.
    if (segments.length > SEGMENTS_PER_STEP && (await store.findJob(job._id)) === null) await cancel(deps, job, false);
    const embedded = start + step.length;
    if (embedded < segments.length && Date.now() - lastProgress >= PROGRESS_EVERY_MS) {
      lastProgress = Date.now();
      if (!(await store.setDocumentProgress(job._id, 'processing', { embedded, total: segments.length, ...phase })))
        await cancel(deps, job, false);
    }
    checkpoint();
  }
  await search.chunksSearchable(serving.index);
  checkpoint();
  // Before going live: the alias read afresh (not from the cache). Moved by a migration since the build began, the
  // version is written to the index served now as well: a migration's catch-up after its swap copies only versions
  // live by then, and this one may go live after it ran, present in the old index alone.
  for (let moves = 0; ; moves += 1) {
    search.forgetServingIndex();
    const now = await search.servingIndex();
    if (now.index === serving.index) break;
    if (moves >= MAX_ALIAS_MOVES)
      throw new UpstreamUnavailableError(
        'opensearch',
        `the chunk index alias kept moving while document ${job._id} was indexed; it is retried`,
      );
    deps.logger.info(
      { documentId: job._id, from: serving.index, to: now.index },
      'the chunk index alias moved during an ingestion: writing the version to the new index',
    );
    const reuse = vectorsKept !== null && now.embedder.modelName === serving.embedder.modelName;
    for (let start = 0; start < segments.length; start += SEGMENTS_PER_STEP) {
      const step = segments.slice(start, start + SEGMENTS_PER_STEP);
      const embeddings = reuse
        ? vectorsKept.slice(start, start + step.length)
        : await rag.embedSegments(job.title, step, now.embedder.modelName);
      checkpoint();
      await search.indexChunks(
        chunkDocuments(target, job.version, step, embeddings, now.embedder.modelName, start),
        now.index,
      );
      checkpoint();
    }
    await search.chunksSearchable(now.index);
    // The old index dropped meanwhile and made again by this job's own writes (a bulk creates a missing index):
    // removed, and said, rather than left as an index of no family.
    if (await search.removeRecreatedIndex(serving.index, job._id, job.version)) {
      deps.logger.warn(
        { documentId: job._id, index: serving.index },
        'an ingestion wrote to a dropped chunk index, which its writes created again: deleted it',
      );
    }
    serving = now;
    checkpoint();
  }

  // Pages read by OCR, with their confidence: the document page flags those a person should check (docs/web-app.md).
  const built = { chunks: segments.length, total_chunks: total, scanned_pages: extracted?.scanned ?? [] };
  if (job.replaces === null) {
    const now = new Date();
    if (
      !(await store.setDocumentReady(
        job._id,
        job.version,
        { filename: job.filename, title: job.title, ...built, ...liveMetadata(job) },
        now,
      ))
    ) {
      await cancel(deps, job, false);
    }
    // The KB may have been deleted while this job worked: it is invisible now, so remove what was written (the
    // document is new: nothing of it was live before this job). Read beside the job's removal, one round trip for
    // both: once the KB is gone no query reaches the version the removal unhides, and cancel() removes it again.
    const [knowledgeBase] = await Promise.all([
      store.findLiveKnowledgeBase(job.knowledge_base_id),
      store.deleteJob(job._id),
    ]);
    if (knowledgeBase === null) await cancel(deps, job, true, true);
    onLive({
      ...document!,
      filename: job.filename,
      title: job.title,
      ...built,
      ...liveMetadata(job),
      status: 'ready',
      live_version: job.version,
      progress: null,
      error: null,
      updated_at: now,
    });
    return;
  }
  // The swap: one write hides the replaced version instead of the new one.
  const replaced = job.replaces;
  if (!(await held(() => store.updateHeldJob(job._id, owner, { phase: 'retire', hidden: [replaced], built }))))
    throw new JobStopped('lease-lost');
  job.phase = 'retire';
  job.hidden = [replaced];
  job.built = built;
}

/**
 * A PDF's text per page, extracted from its stored original in a worker. Progress says what the reader does, as it
 * does it (issue 31: a 20 MB PDF said "page 1 of 1" with a full bar for ~10 s): the file is opened (`extracting`
 * with no pages yet), page n of m is read (`pages.done` = n - 1, and `pages.characters` as a slow page gives its
 * text; `pages.waiting` while it waits between two steps for the reader, which another PDF has), then all pages
 * are read and the text is prepared (`pages.done` = m) until the chunks are embedded. Written
 * at most every PROGRESS_EVERY_MS, except the first of each kind. An unreadable PDF fails the document with a message
 * a person understands (extraction.ts); nothing has been indexed yet, so nothing half-ingested remains.
 */
async function extractPdf(
  { deps, job, checkpoint, stopped, onExtracted, readerSteps, timings }: JobRun,
  fileId: string,
): Promise<{ pages: string[]; scanned: OcrPage[] }> {
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
    extracted = await deps.pdf!.extract(bytes, onPage, stopped, steps);
  } catch (error) {
    // The last page's progress write may still be in flight: landing after the failure is recorded, it would set
    // the document back to "processing" for good (seen once under load: a scanned PDF stuck at "page 2 of 2").
    await progressWrite;
    // Stopped (its reader was killed for it): the job is released or gone, not failed.
    checkpoint();
    // Over its memory or time: what a hostile PDF looks like, worth an operator's eye (ordinary failures are not).
    if (error instanceof PdfExtractionError && (error.reason === 'too_large' || error.reason === 'timeout')) {
      deps.logger.warn(
        { documentId: job._id, reason: error.reason, detail: error.message },
        'a PDF hit a reading limit',
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
      `the PDF's text is ${characters.toLocaleString('en')} characters; the limit is ${deps.config.limits.maxContentBytes.toLocaleString('en')} (KBQA_MAX_CONTENT_BYTES)`,
    );
  }
  return { pages: extracted.pages, scanned: extracted.scanned };
}

/** The new version is live: its text becomes the document's, its record fields too; the old chunks go. */
async function retireReplacedVersion({ deps, job, onLive, checkpoint }: JobRun): Promise<void> {
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
async function cancel(
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
function liveMetadata(job: IngestJobRecord): { metadata?: MetadataEntry[] } {
  return job.metadata ? { metadata: job.metadata } : {};
}
