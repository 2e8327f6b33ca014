// The build step of an ingestion job (steps.ts has the others): a version's text split, embedded and indexed in
// steps of SEGMENTS_PER_STEP, then made live. startFirstStep begins it before the job is stored.
import { BadRequestError, UpstreamUnavailableError } from '../errors.ts';
import type { SegmentEmbedding } from '../rag/index.ts';
import type { TextSegment } from '../rag/splitter.ts';
import type { ServingIndex } from '../search/index.ts';
import type { DocumentRecord } from '../store/index.ts';
import { metadataObject } from '../store/index.ts';
import { chunkMetadata } from '../search/metadataFilter.ts';
import { hasPages, isFileKind, type FileKind } from '../extraction/fileKinds.ts';
import { splitFile } from '../extraction/pdfPages.ts';
import type { OcrPage } from '../extraction/ocr.ts';
import { chunkDocuments } from './chunkRecords.ts';
import { JobStopped, type FirstStep, type IngestDeps, type JobRun } from './runContext.ts';
import { PROGRESS_EVERY_MS, cancel, extractFile, liveMetadata } from './steps.ts';

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

/** The version's chunks written and made live, in five named steps (a re-run after a crash goes the same way). */
export async function buildVersion(run: JobRun): Promise<void> {
  const loaded = await loadVersion(run);
  const split = await splitVersion(run, loaded);
  const indexed = await embedAndIndex(run, split);
  await followAliasMoves(run, split, indexed);
  await goLive(run, split);
}

/** The version as read: its document record and, for a text, its content (a PDF's is read from its file). */
interface LoadedVersion {
  document: DocumentRecord | null;
  content: string | null;
}

/** The version split into segments, with the first step's vectors when its request began them. */
interface SplitVersion {
  document: DocumentRecord | null;
  firstStep: FirstStep | null;
  total: number;
  segments: TextSegment[];
  /** A PDF's progress keeps its pages while its chunks are embedded. */
  phase: { phase?: 'embedding'; pages?: { done: number; total: number } };
  /** Pages read by OCR, with their confidence ([] but for scans). */
  scanned: OcrPage[];
}

/** Where the version's chunks were written: the index (and its embedder), the vectors kept for a rewrite. */
interface IndexedVersion {
  serving: ServingIndex;
  vectorsKept: SegmentEmbedding[] | null;
  target: Parameters<typeof chunkDocuments>[0];
}

/** Load: the version's record and text (the request's, in memory), or a cancel when it or its KB went away. */
async function loadVersion(run: JobRun): Promise<LoadedVersion> {
  const { deps, job, prepared } = run;
  const { store, search } = deps;
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
  return { document, content };
}

/** Split: the text (a PDF's, page by page) into segments; the document shows it is processing. */
async function splitVersion(run: JobRun, { document, content }: LoadedVersion): Promise<SplitVersion> {
  const { deps, job, checkpoint, prepared } = run;
  const { store, rag } = deps;
  // A file's kind is its record's (every record with a file but no kind is a PDF's, from before kinds).
  const kind: FileKind | null = job.file_id ? (isFileKind(document?.kind) ? document.kind : 'pdf') : null;
  const extracted = job.file_id && kind ? await extractFile(run, job.file_id, kind) : null;
  if (extracted === null && content === null)
    throw new Error(`the stored text of document ${job._id} (version ${job.version}) is missing`);

  const firstStep = extracted === null && prepared?.firstStep ? await prepared.firstStep : null;
  const { total, segments } =
    extracted && kind
      ? await splitFile(kind, extracted, job.filename, (text, filename) => rag.split(text, filename))
      : (firstStep ?? (await rag.split(content as string, job.filename)));
  // A PDF's (a scan's, a deck's) progress keeps saying how many pages (slides) it has while its chunks are embedded.
  const pageCount = extracted && kind && (hasPages(kind) || kind === 'pptx') ? extracted.pages.length : null;
  const phase =
    extracted !== null
      ? { phase: 'embedding' as const, ...(pageCount !== null ? { pages: { done: pageCount, total: pageCount } } : {}) }
      : {};
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
  return { document, firstStep, total, segments, phase, scanned: extracted?.scanned ?? [] };
}

/** Embed and index: step by step into the index served as the build starts, progress written as it goes. */
async function embedAndIndex(run: JobRun, split: SplitVersion): Promise<IndexedVersion> {
  const { deps, job, checkpoint } = run;
  const { store, search, rag } = deps;
  const { document, firstStep, segments, phase } = split;
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
  // written to the new one too before it goes live (followAliasMoves).
  const serving = firstStep?.serving ?? (await search.servingIndex());
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
  return { serving, vectorsKept, target };
}

/** Follow the alias: the version written to the index served now too, if a migration moved the alias meanwhile. */
async function followAliasMoves(run: JobRun, { segments }: SplitVersion, indexed: IndexedVersion): Promise<void> {
  const { deps, job, checkpoint } = run;
  const { search, rag } = deps;
  const { vectorsKept, target } = indexed;
  let serving = indexed.serving;
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
}

/** Go live: a new document is ready (its job deleted); a replacement swaps which version its job hides. */
async function goLive(run: JobRun, { document, total, segments, scanned }: SplitVersion): Promise<void> {
  const { deps, job, owner, held, onLive } = run;
  const { store } = deps;
  // Pages read by OCR, with their confidence: the document page flags those a person should check (docs/web-app.md).
  const built = { chunks: segments.length, total_chunks: total, scanned_pages: scanned };
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
