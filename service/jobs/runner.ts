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
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { ApiError, BadRequestError, NotFoundError, SearchIndexReadOnlyError, ServiceStoppingError, UpstreamUnavailableError, errorSummary } from '../errors.ts';
import type { Rag, SegmentEmbedding } from '../rag/index.ts';
import type { TextSegment } from '../rag/splitter.ts';
import type { ChunkDocument, SearchIndex } from '../search/index.ts';
import type { DocumentRecord, IngestionTimings, IngestJobRecord, MetadataEntry, Store } from '../store/index.ts';
import { metadataObject } from '../store/index.ts';
import { chunkMetadata, type ChunkMetadata } from '../search/metadataFilter.ts';
import { createPdfExtractor, PdfExtractionError, type PdfExtractor, type PdfPoolStats, type PdfSteps } from '../extraction/pdf.ts';
import type { Metrics } from '../metrics.ts';
import { extractionFailure, splitPages } from '../extraction/pdfPages.ts';
import { isClaimable, type ScheduledJob } from '../store/ingestJobs.ts';
import { claimOrder, documentsAhead, knowledgeBaseOwners, needsPdfReader } from './scheduling.ts';

export interface IngestDeps {
  store: Store;
  search: SearchIndex;
  rag: Rag;
  logger: Logger;
  config: Pick<Config, 'ingestion' | 'pdf' | 'limits'>;
  /** Reads PDFs in worker threads; by default the runner starts one on its first PDF and closes it on stop(). */
  pdf?: PdfExtractor;
  /** Counts the outages a job failed on that no request answers (a waiting request's 503 is counted as a response). */
  metrics?: Pick<Metrics, 'countUpstreamError'>;
}

/** PDFs read at once by the extractor the runner starts (each in a process of its own, extraction/pdf.ts). */
const PDF_READERS = 1;

/** An extractor whose worker pool starts on first use: most processes never see a PDF. */
function lazyPdfExtractor(limits: Config['pdf']): PdfExtractor {
  let extractor: PdfExtractor | null = null;
  return {
    extract: (bytes, onPage, stop, steps) => (extractor ??= createPdfExtractor(limits, { workers: PDF_READERS })).extract(bytes, onPage, stop, steps),
    close: async () => {
      await extractor?.close();
    },
    stats: () => extractor?.stats?.() ?? null,
  };
}

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

/** Why a running job stopped before its end (not a failure of the document). */
type StopReason = 'shutdown' | 'lease-lost';

class JobStopped extends Error {
  readonly reason: StopReason;
  constructor(reason: StopReason) {
    super(`ingestion job stopped: ${reason}`);
    this.reason = reason;
  }
}

/** A job's document, KB or version went away while it ran (deleted, superseded): it removes what it wrote. */
class JobCancelled extends Error {
  readonly knowledgeBaseGone: boolean;
  constructor(knowledgeBaseGone: boolean) {
    super('ingestion job cancelled');
    this.knowledgeBaseGone = knowledgeBaseGone;
  }
}

/** A document's chunks as indexed. Chunk ids derive from the document id and version: indexing again overwrites. */
export function chunkDocuments(
  /** `chunkMetadata`: the version's metadata as every chunk carries it (computed once per job: one shared object). */
  record: Pick<DocumentRecord, '_id' | 'knowledge_base_id' | 'filename' | 'title' | 'created_at'> & { chunkMetadata?: ChunkMetadata },
  version: number,
  segments: TextSegment[],
  embeddings: SegmentEmbedding[],
  embedder: string,
  firstIndex = 0,
): ChunkDocument[] {
  return segments.map((segment, offset) => {
    const index = firstIndex + offset;
    return {
      chunk_id: `${record._id}:${version}:${index}`,
      knowledge_base_id: record.knowledge_base_id,
      document_id: record._id,
      document_version: version,
      filename: record.filename,
      title: record.title,
      heading_path: segment.heading_path,
      chunk_index: index,
      page_start: segment.page_start ?? null,
      page_end: segment.page_end ?? null,
      text: segment.text,
      embedding: embeddings[offset].vector,
      ...(embeddings[offset].sentences.length > 0 ? { sentence_embeddings: embeddings[offset].sentences } : {}),
      embedder,
      created_at: record.created_at.toISOString(),
      ...record.chunkMetadata,
    };
  });
}

/** What a user reads in a failed document's `error`: actionable, never an internal detail. */
export function failureMessage(error: unknown, jobId: string): string {
  if ((error instanceof ApiError && error.status < 500) || error instanceof IngestionAbandonedError) return error.message;
  if (error instanceof UpstreamUnavailableError) return `${error.message.replace(/; retry later$/, '')}; retry the document (POST /api/v1/documents/${jobId}/retry)`;
  return `the document could not be indexed (an internal error, logged on the server for document ${jobId}); retry it, or ask an operator`;
}

/**
 * A failure the document itself causes (a 4xx: no text, a scanned, broken, encrypted or too large PDF, one that took
 * too long to read): the same bytes fail the same way, so a retry cannot help. Everything else (an outage, an
 * interrupted process, an internal error) may pass next time.
 */
export function isPermanentFailure(error: unknown): boolean {
  return error instanceof ApiError && error.status < 500;
}

/** A job whose process stopped too many times while running it (a document that crashes the process, say). */
export class IngestionAbandonedError extends Error {}

function isTransient(error: unknown): boolean {
  return error instanceof UpstreamUnavailableError;
}

/** Back-off before the next attempt after a transient failure: 2 s, 4 s, … up to 5 min. */
export function retryDelayMs(attempts: number): number {
  return Math.min(300_000, 1_000 * 2 ** Math.max(1, attempts));
}

/** Queues the holder's writes to its job record one after the other. */
type HeldWrites = <T>(write: () => Promise<T>) => Promise<T>;

interface Running {
  stop: (reason: StopReason) => void;
  done: Promise<void>;
}

/** One run of a held job: what its steps share. */
interface JobRun {
  deps: IngestDeps;
  job: IngestJobRecord;
  owner: string;
  /** Throws JobStopped when the lease was lost or the process is stopping: called between two steps. */
  checkpoint: () => void;
  /** Aborted as the job is stopped: for a step that can be cut short (reading a PDF). */
  stopped: AbortSignal;
  /** Runs a write of the holder to its job record after the one before (see #launch). */
  held: HeldWrites;
  /** The version is live (a waiting request answers now; retiring the old one goes on). */
  onLive: (document: DocumentRecord) => void;
  /** A PDF's text is extracted (or failed to be): the reader is free for the next PDF. */
  onExtracted: () => void;
  /** A PDF's reading steps: it gives the reader up between them while other PDFs wait (see IngestRunner). */
  readerSteps: PdfSteps;
  /** What the job records of its waits, written with its progress. */
  timings: IngestionTimings;
  prepared: Prepared | undefined;
}

/**
 * What a request that just wrote the document hands its own job, so the job does not read back what is in memory
 * (on FerretDB a read of a just-written record scans its table).
 */
export interface Prepared {
  document: DocumentRecord;
  content: string;
}

/**
 * The job engine of one process: polls for claimable jobs, runs up to `concurrency` at once (plus the jobs of
 * requests that wait for their document), renews their leases, and on stop() finishes or releases them.
 */
export class IngestRunner {
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly #deps: IngestDeps;
  /** The PDF extractor this runner started (closed by stop()); null when the caller gave one. */
  readonly #ownPdf: PdfExtractor | null;
  readonly #running = new Map<string, Running>();
  /** Jobs claimed to read a PDF, until their text is extracted: they hold a PDF reader, not an ingest slot. */
  readonly #reading = new Set<string>();
  /** PDF jobs that gave the reader up after a step, in the order they did: each resumes when a reader is free. */
  readonly #paused: { id: string; resume: () => void; pause: number }[] = [];
  /** Pauses so far: a poll resumes only those from before it computed its claims (see #claimWork). */
  #pauses = 0;
  /** A poll was asked for while one ran: the next starts at once, not a poll interval later. */
  #pollAgain = false;
  /** PDFs the fair order would claim now but for a busy reader (as of the last poll), in that order. */
  #pdfsWaiting: ScheduledJob[] = [];
  /** KB → owner, for the fair order of claims. */
  readonly #knowledgeBaseOwners = knowledgeBaseOwners((id) => this.#deps.store.findLiveKnowledgeBase(id));
  /** With `claims: 'own'`, the queued jobs this runner may take (those queued through it). */
  readonly #own: Set<string> | null;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | null = null;
  #stopping = false;
  #started = false;

  /**
   * `claims: 'own'` takes only jobs queued through this runner (nudge(id)): for tests, where several apps share one
   * database and some of them inject faults that must not reach another app's jobs. Services claim 'all'.
   */
  constructor(deps: IngestDeps, options: { claims?: 'all' | 'own' } = {}) {
    this.#ownPdf = deps.pdf ? null : lazyPdfExtractor(deps.config.pdf);
    this.#deps = { ...deps, pdf: deps.pdf ?? this.#ownPdf! };
    this.#own = options.claims === 'own' ? new Set() : null;
  }

  get settings() {
    return this.#deps.config.ingestion;
  }

  /** Starts polling for jobs (queued ones, and those whose holder died). */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#schedule(0);
  }

  /** Look for work now (the job of this document was just queued). */
  nudge(documentId: string): void {
    this.#own?.add(documentId);
    if (this.#started && !this.#stopping) this.#schedule(0);
  }

  /** Jobs running in this process. */
  runningJobs(): string[] {
    return [...this.#running.keys()];
  }

  /**
   * Queued jobs → how many documents each waits behind (scheduling.ts documentsAhead). PDFs being read: those
   * held, still to be built, whose document has not reached embedding, less those paused here between two steps.
   */
  async documentsAhead(): Promise<Map<string, number>> {
    const { store } = this.#deps;
    const jobs = await store.listJobsToSchedule();
    await this.#knowledgeBaseOwners.learn(jobs.map((job) => job.knowledge_base_id));
    const now = Date.now();
    const paused = new Set(this.#paused.map((entry) => entry.id));
    const held = jobs.filter((job) => needsPdfReader(job) && job.lease_until !== null && !isClaimable(job, now, this.settings.leaseMs) && !paused.has(job._id));
    const documents = await Promise.all(held.map((job) => store.findDocument(job._id)));
    const reading = documents.filter((document) => document !== null && document.progress?.phase !== 'embedding').length;
    const share = { perUser: this.settings.maxJobsPerUser, perKnowledgeBase: this.settings.maxJobsPerKnowledgeBase };
    return documentsAhead(jobs, this.#knowledgeBaseOwners.ownerOf, now, this.settings.leaseMs, share, reading);
  }

  /** Read-only, for metrics: the PDF worker pool's use, or null while it has not been started. */
  pdfPoolStats(): PdfPoolStats | null {
    return this.#deps.pdf?.stats?.() ?? null;
  }

  /**
   * A job this process already holds (its lease was written with the job): runs it now, resolving once its version
   * is live (the retire step goes on in the background) and rejecting with the reason it failed.
   */
  async runHeld(job: IngestJobRecord, prepared?: Prepared): Promise<DocumentRecord> {
    if (this.#stopping) {
      // Written just as SIGTERM came: give the job back at once, for whichever process runs next. The request is
      // told its document is stored and finished elsewhere: queued from now on (async), not all-or-nothing.
      await this.#deps.store.releaseJob(job._id, this.owner, Date.now(), { unclaimed: true, async: true });
      throw stoppingError(job._id);
    }
    return new Promise<DocumentRecord>((resolve, reject) => {
      this.#launch(job, { onLive: resolve, onFailed: reject }, prepared);
    });
  }

  /**
   * Stops taking work, gives running jobs `graceMs` to finish, then stops the rest between two steps and releases
   * their leases (another process, or this one restarted, picks them up at once).
   */
  async stop(graceMs = this.settings.shutdownGraceMs): Promise<void> {
    this.#stopping = true;
    if (this.#timer) clearTimeout(this.#timer);
    // A poll in flight may be claiming a job right now: let it finish (it releases what it claims once stopping),
    // so the snapshot below sees every job this process holds.
    await this.#polling;
    const all = () => Promise.allSettled([...this.#running.values()].map((running) => running.done));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    for (const running of this.#running.values()) running.stop('shutdown');
    await all();
    await this.#ownPdf?.close();
  }

  #schedule(delayMs: number): void {
    if (this.#stopping) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#poll(), delayMs);
    this.#timer.unref();
  }

  #poll(): Promise<void> {
    if (this.#polling) this.#pollAgain = true;
    if (this.#polling || this.#stopping) return this.#polling ?? Promise.resolve();
    this.#pollAgain = false;
    this.#polling = this.#claimWork().finally(() => {
      this.#polling = null;
      this.#schedule(this.#pollAgain ? 0 : this.settings.pollMs);
    });
    return this.#polling;
  }

  /**
   * Claims what this process can start now, in the fair order (scheduling.ts): text jobs up to `concurrency`
   * slots, PDFs to be read up to the free PDF readers. A PDF job holds a reader while its text is extracted and takes
   * a slot only after, so PDFs waiting for the reader hold no slot and never keep another user's text waiting; past
   * extraction it goes on even when the slots are full (at most PDF_READERS jobs over `concurrency`).
   */
  async #claimWork(): Promise<void> {
    // A PDF that paused after this poll computed its claims must wait for the next poll: resumed here, it would take
    // the reader back from the PDF it paused for, which this poll did not see waiting.
    let pausesSeen = this.#pauses;
    try {
      const slotsFree = () => this.settings.concurrency - (this.#running.size - this.#reading.size);
      const readersFree = () => this.#readersFree();
      // With the reader busy, a poll still looks: a PDF waiting for it makes the one reading give it up after a step.
      if (slotsFree() <= 0 && readersFree() <= 0 && this.#pdfsWaiting.length > 0) return;
      let now = Date.now();
      let jobs = await this.#deps.store.listJobsToSchedule();
      // A KB seen for the first time costs a read of its owner; then the jobs are read again, so that the claims below
      // write leases from a fresh `now` (a 2 s lease, read before those reads, lapsed before it was written under load).
      if (await this.#knowledgeBaseOwners.learn(jobs.map((job) => job.knowledge_base_id))) {
        now = Date.now();
        jobs = await this.#deps.store.listJobsToSchedule();
      }
      const share = { perUser: this.settings.maxJobsPerUser, perKnowledgeBase: this.settings.maxJobsPerKnowledgeBase };
      const { ownerOf } = this.#knowledgeBaseOwners;
      // With `claims: 'own'`, another runner's queued jobs are not this one's to claim; all jobs in flight still count.
      const mine = this.#own ? jobs.filter((job) => this.#own!.has(job._id) || !isClaimable(job, now, this.settings.leaseMs)) : jobs;
      pausesSeen = this.#pauses;
      const candidates = claimOrder(mine, ownerOf, now, this.settings.leaseMs, share, Math.max(0, readersFree()));
      const pdfsEligible = claimOrder(mine, ownerOf, now, this.settings.leaseMs, share).filter(needsPdfReader);
      const pdfsClaimed = new Set<string>();
      // The chunk index refuses writes (a full disk): every job stays queued until the block is lifted (cached check).
      if (candidates.length > 0 && (await this.#deps.search.writeBlock()) !== null) return;
      for (const candidate of candidates) {
        if (this.#stopping || (slotsFree() <= 0 && readersFree() <= 0)) break;
        const reads = needsPdfReader(candidate);
        if ((reads ? readersFree() : slotsFree()) <= 0 || this.#running.has(candidate._id)) continue;
        const job = await this.#deps.store.claimJob(candidate, this.owner, now, this.settings.leaseMs);
        if (!job) continue;
        if (this.#stopping) {
          // SIGTERM arrived during the claim: give it straight back (its attempt is not counted against it).
          await this.#deps.store.releaseJob(job._id, this.owner, Date.now(), { unclaimed: true });
          break;
        }
        if (reads) {
          this.#reading.add(job._id);
          pdfsClaimed.add(job._id);
        }
        this.#launch(job, {});
      }
      this.#pdfsWaiting = readersFree() > 0 ? [] : pdfsEligible.filter((job) => !pdfsClaimed.has(job._id));
    } catch (error) {
      this.#deps.logger.warn({ err: errorSummary(error) }, 'ingestion jobs: could not poll for work');
    } finally {
      this.#resumePaused(pausesSeen);
    }
  }

  #readersFree(): number {
    return (this.#deps.pdf!.stats?.()?.workers ?? PDF_READERS) - this.#reading.size;
  }

  /**
   * PDFs that gave the reader up after a step read on while readers are free, after the PDFs just claimed: a PDF
   * queued behind a big one is read after one step of it, and the big one then goes on (round-robin between PDFs).
   */
  #resumePaused(pausesSeen: number): void {
    while (this.#readersFree() > 0 && this.#paused.length > 0 && this.#paused[0].pause <= pausesSeen) {
      const { id, resume } = this.#paused.shift()!;
      this.#reading.add(id);
      resume();
    }
  }

  /**
   * The reader was given up after a step: claims the PDF the last poll saw waiting for it at once (two writes),
   * rather than after a poll's read of every job (seconds on a loaded FerretDB); then polls for the rest.
   */
  async #handOver(): Promise<void> {
    try {
      for (let next = this.#pdfsWaiting.shift(); next && this.#readersFree() > 0 && !this.#stopping; next = this.#pdfsWaiting.shift()) {
        if (this.#running.has(next._id)) continue;
        const job = await this.#deps.store.claimJob(next, this.owner, Date.now(), this.settings.leaseMs);
        if (!job) continue;
        if (this.#stopping) {
          await this.#deps.store.releaseJob(job._id, this.owner, Date.now(), { unclaimed: true });
          return;
        }
        this.#reading.add(job._id);
        this.#launch(job, {});
      }
    } catch (error) {
      this.#deps.logger.warn({ err: errorSummary(error) }, 'ingestion jobs: could not hand the PDF reader over');
    } finally {
      this.#schedule(0);
    }
  }

  /** A PDF job's part in the reading steps (see extraction/pdf.ts and #resumePaused). */
  #readerSteps(jobId: string, stopped: AbortSignal, timings: IngestionTimings): PdfSteps {
    return {
      othersWaiting: () => this.#pdfsWaiting.length > 0 || this.#paused.length > 0,
      paused: () =>
        new Promise<void>((resolve, reject) => {
          this.#reading.delete(jobId);
          this.#pauses += 1;
          const entry = { id: jobId, resume: resolve, pause: this.#pauses };
          const onStop = () => {
            const index = this.#paused.indexOf(entry);
            if (index >= 0) this.#paused.splice(index, 1);
            reject(new Error('the PDF reading was stopped between two steps'));
          };
          if (stopped.aborted) return onStop();
          this.#paused.push(entry);
          stopped.addEventListener('abort', onStop, { once: true });
          if (!this.#stopping) void this.#handOver();
        }),
      onStep: (heldMs) => {
        timings.longest_step_ms = Math.max(timings.longest_step_ms ?? 0, heldMs);
      },
    };
  }

  #launch(
    job: IngestJobRecord,
    callbacks: { onLive?: (document: DocumentRecord) => void; onFailed?: (error: unknown) => void },
    prepared?: Prepared,
  ): void {
    let stopReason: StopReason | null = null;
    // Aborted when the job is stopped (shutdown, a lost lease, a deleted document): a PDF being read is killed then,
    // rather than holding the reader until its time is up.
    const stopped = new AbortController();
    const stopWith = (reason: StopReason) => {
      stopReason ??= reason;
      stopped.abort();
    };
    // Until when this process surely holds the lease: the lease_until it last wrote (the claim's, then each renewal's,
    // from the time the renewal was sent). Past it a claimer may take the job (claimMarginMs later), and on FerretDB
    // v1 a renewal racing that claim can both "succeed": so the holder fences itself instead of trusting its writes.
    let leaseValidUntil = job.lease_until ?? 0;
    const leaseLapsed = () => Date.now() > leaseValidUntil;
    const checkpoint = () => {
      if (!stopReason && leaseLapsed()) stopReason = 'lease-lost';
      if (stopReason) throw new JobStopped(stopReason);
    };
    // The holder's writes to its job record (renewals, the swap, a release) one at a time: FerretDB v1 writes back
    // the whole record it read, so a renewal overlapping the swap would put the swapped fields back.
    let writes: Promise<unknown> = Promise.resolve();
    const held: HeldWrites = (write) => {
      const next = writes.then(write);
      writes = next.catch(() => undefined);
      return next;
    };
    const renewEvery = Math.max(250, Math.floor(this.settings.leaseMs / 3));
    let renewing = false;
    const renewal = setInterval(() => {
      if (renewing) return;
      renewing = true;
      let sentAt = 0;
      held(() => {
        sentAt = Date.now();
        return this.#deps.store.renewLease(job._id, this.owner, sentAt, sentAt + this.settings.leaseMs);
      })
        .then(
          (stillHeld) => {
            if (!stillHeld) stopWith('lease-lost');
            else leaseValidUntil = Math.max(leaseValidUntil, sentAt + this.settings.leaseMs);
          },
          (error: unknown) => this.#deps.logger.warn({ err: errorSummary(error), documentId: job._id }, 'ingestion jobs: could not renew a lease'),
        )
        .finally(() => (renewing = false));
    }, renewEvery);
    renewal.unref();

    const fromQueue = prepared === undefined && callbacks.onLive === undefined;
    const done = (async () => {
      try {
        const onExtracted = () => {
          // The reader is free: the next PDF may be claimed now, and this job counts in the slots from here on.
          if (this.#reading.delete(job._id) && !this.#stopping) this.#schedule(0);
        };
        // Its wait ends as it is taken (a PDF is claimed only with a reader free). A retry's includes its back-off.
        const timings: IngestionTimings = { queue_wait_ms: Date.now() - job.created_at.getTime() };
        await executeJob({
          deps: this.#deps,
          job,
          owner: this.owner,
          checkpoint,
          stopped: stopped.signal,
          held,
          onLive: (document) => callbacks.onLive?.(document),
          onExtracted,
          readerSteps: this.#readerSteps(job._id, stopped.signal, timings),
          timings,
          prepared,
        });
      } catch (error) {
        // Failed past its lease: another process may be running the job, so this one records nothing of it.
        const fenced = !(error instanceof JobStopped || error instanceof JobCancelled) && leaseLapsed();
        await this.#settleFailure(job, fenced ? new JobStopped('lease-lost') : error, callbacks.onFailed, held);
      } finally {
        clearInterval(renewal);
        this.#running.delete(job._id);
        this.#reading.delete(job._id);
        if (this.#own && (await this.#deps.store.findJob(job._id).catch(() => null)) === null) this.#own.delete(job._id);
        // A queued job's slot is free: look for the next one now. (A request's own job took no slot.)
        if (!this.#stopping && fromQueue) this.#schedule(0);
      }
    })();
    this.#running.set(job._id, { stop: stopWith, done });
  }

  async #settleFailure(job: IngestJobRecord, error: unknown, onFailed: ((error: unknown) => void) | undefined, held: HeldWrites): Promise<void> {
    const { store, logger } = this.#deps;
    try {
      if (error instanceof JobStopped) {
        if (error.reason === 'shutdown') {
          // The waiting request hears "stored, another instance finishes it": async from now on (see releaseJob).
          await held(() => store.releaseJob(job._id, this.owner, Date.now(), { async: true }));
          onFailed?.(stoppingError(job._id));
        } else {
          // Someone else holds it now, or it was deleted (the deleter removed the document; remove what we wrote
          // since) — or another process finished it meanwhile: then the version is live and its chunks stay.
          if ((await store.findJob(job._id)) === null) await removeVersionChunksUnlessLive(this.#deps, job);
          onFailed?.(await goneError(this.#deps, job, false));
        }
        return;
      }
      if (error instanceof JobCancelled) {
        onFailed?.(await goneError(this.#deps, job, error.knowledgeBaseGone));
        return;
      }
      if (!(error instanceof ApiError)) logger.error({ err: errorSummary(error), documentId: job._id }, 'ingestion job failed');
      if (error instanceof SearchIndexReadOnlyError) {
        // A full disk is not the document's fault and may last hours. The job waits, queued, without using up an
        // attempt (the runner claims nothing while the block is on), keeping what it indexed: OpenSearch refuses
        // deletions under the block too, and the version stays hidden while its job exists; the next run writes the
        // same chunk ids again. A request waiting on it hears so (as at shutdown: the document is stored).
        this.#deps.metrics?.countUpstreamError(error.upstream);
        // Only a version still being built is `queued`: after the swap (retire phase) it is live and the document
        // ready, and only the removal of the replaced version's chunks waits for the block.
        if (job.phase === 'build') await store.setDocumentProgress(job._id, 'queued', null);
        // A waiting request is told its document is stored and queued: async from now on, so a later transient
        // failure retries it instead of removing the document as all-or-nothing (failJob).
        await held(() => store.releaseJob(job._id, this.owner, Date.now() + retryDelayMs(1), { unclaimed: true, async: true }));
        this.#own?.add(job._id);
        logger.warn({ err: errorSummary(error), documentId: job._id }, 'ingestion job waits: the search index is read-only');
        onFailed?.(new SearchIndexReadOnlyError(error.block, job._id));
        return;
      }
      const retried = job.mode === 'async' && isTransient(error) && job.attempts < this.settings.maxAttempts;
      if (error instanceof UpstreamUnavailableError && (retried || !onFailed)) this.#deps.metrics?.countUpstreamError(error.upstream);
      if (retried) {
        await store.setDocumentProgress(job._id, 'queued', null);
        await held(() => store.releaseJob(job._id, this.owner, Date.now() + retryDelayMs(job.attempts)));
        logger.warn({ err: errorSummary(error), documentId: job._id, attempts: job.attempts }, 'ingestion job will be retried');
        return;
      }
      await failJob(this.#deps, job, error);
      onFailed?.(error);
    } catch (settleError) {
      // The stores are failing too: the job keeps its record and lease, which lapses; the next holder settles it.
      logger.error({ err: errorSummary(settleError), documentId: job._id }, 'ingestion jobs: could not record the end of a job; its lease will lapse and it runs again');
      onFailed?.(error instanceof JobStopped ? new ServiceStoppingError('the service is shutting down; retry the request') : error);
    }
  }
}

function stoppingError(documentId: string): ServiceStoppingError {
  return new ServiceStoppingError(
    `the service is shutting down; document ${documentId} is stored and another instance finishes it: follow GET /api/v1/documents/${documentId}`,
  );
}

/** What a request waiting on a cancelled job hears: its KB is gone (deleted meanwhile), or its document is. */
async function goneError(deps: IngestDeps, job: IngestJobRecord, knowledgeBaseGone: boolean): Promise<NotFoundError> {
  if (knowledgeBaseGone || (await deps.store.findLiveKnowledgeBase(job.knowledge_base_id)) === null) return NotFoundError.knowledgeBase(job.knowledge_base_id);
  return new NotFoundError(`document ${job._id} not found`);
}

/** Removes the chunks this job's version wrote (best effort is not enough: failures go up). */
async function removeVersionChunks(deps: IngestDeps, job: IngestJobRecord): Promise<void> {
  await deps.search.deleteChunksOfDocumentVersion(job._id, job.version);
}

/**
 * The same, for a holder that finds its job gone or taken: unless the document went live with this version meanwhile
 * (another process finished the job after this one's lease lapsed), whose chunks must stay.
 */
async function removeVersionChunksUnlessLive(deps: IngestDeps, job: IngestJobRecord): Promise<void> {
  if ((await deps.store.findDocument(job._id))?.live_version === job.version) return;
  await removeVersionChunks(deps, job);
}

/**
 * A failure the job cannot get past. A request waiting on a NEW document gets all-or-nothing (as v1 promised):
 * the document is removed entirely and the request answers the error. Otherwise the failed version's chunks are
 * removed, and the document shows `failed` with the error until it is deleted or retried; a replaced version
 * stays live.
 */
async function failJob(deps: IngestDeps, job: IngestJobRecord, error: unknown): Promise<void> {
  await removeVersionChunks(deps, job);
  if (job.mode === 'sync' && job.replaces === null) {
    await deps.store.deleteJob(job._id);
    await deps.store.deleteDocument(job._id);
    return;
  }
  await deps.store.setDocumentFailed(job._id, failureMessage(error, job._id), new Date(), !isPermanentFailure(error));
  await deps.store.deleteJob(job._id);
}

/** Runs a held job from wherever it stands (a re-run after a crash continues the same way). */
async function executeJob(run: JobRun): Promise<void> {
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
    if (!document || document.version !== job.version || !knowledgeBaseLive) await cancel(deps, job, !knowledgeBaseLive);
    // An earlier attempt may have indexed some chunks (or more of them, before a splitter change): start clean.
    if (job.attempts > 1) await search.deleteChunksOfDocumentVersion(job._id, job.version);
    content = job.file_id ? null : await store.findDocumentContent(job.content_id);
  }
  const pages = job.file_id ? await extractPdf(run, job.file_id) : null;
  if (pages === null && content === null) throw new Error(`the stored text of document ${job._id} (version ${job.version}) is missing`);

  const { total, segments } = pages
    ? await splitPages(pages, (text) => rag.split(text, job.filename))
    : await rag.split(content as string, job.filename);
  // A PDF's progress keeps saying how many pages it has while its chunks are embedded.
  const phase = pages ? { phase: 'embedding' as const, pages: { done: pages.length, total: pages.length } } : {};
  checkpoint();
  if (segments.length === 0) throw new BadRequestError('content: has no text to index (no letters or digits)');
  // One document write per job start and per PROGRESS_EVERY_MS, not per step: writes are what FerretDB is slow at.
  // A request waiting on a document of one step goes from queued to ready directly (nobody polls it meanwhile).
  if (!prepared || segments.length > SEGMENTS_PER_STEP) {
    if (!(await store.setDocumentProgress(job._id, 'processing', { embedded: 0, total: segments.length, ...phase }, run.timings))) await cancel(deps, job, false);
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
  // One index for the whole version, with its embedder: the one the alias points to as the build starts. If a
  // migration swaps the alias meanwhile, the version is written to the new one too before it goes live (below).
  let serving = await search.servingIndex();
  // Kept for that rewrite while the version is small; a large one is embedded again in that rare case.
  const vectorsKept: SegmentEmbedding[] | null = segments.length <= VECTORS_KEPT_UP_TO ? [] : null;
  for (let start = 0; start < segments.length; start += SEGMENTS_PER_STEP) {
    const step = segments.slice(start, start + SEGMENTS_PER_STEP);
    const embeddings = await rag.embedSegments(job.title, step, serving.embedder.modelName);
    vectorsKept?.push(...embeddings);
    checkpoint();
    await search.indexChunks(chunkDocuments(target, job.version, step, embeddings, serving.embedder.modelName, start), serving.index);
    // Deleted (cancelled) meanwhile: its deleter removed the chunks written so far, not this step's. Seen here, one
    // primary-key read per step, rather than at the next lease renewal seconds later.
    if (segments.length > SEGMENTS_PER_STEP && (await store.findJob(job._id)) === null) await cancel(deps, job, false);
    const embedded = start + step.length;
    if (embedded < segments.length && Date.now() - lastProgress >= PROGRESS_EVERY_MS) {
      lastProgress = Date.now();
      if (!(await store.setDocumentProgress(job._id, 'processing', { embedded, total: segments.length, ...phase }))) await cancel(deps, job, false);
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
    if (moves >= MAX_ALIAS_MOVES) throw new UpstreamUnavailableError('opensearch', `the chunk index alias kept moving while document ${job._id} was indexed; it is retried`);
    deps.logger.info({ documentId: job._id, from: serving.index, to: now.index }, 'the chunk index alias moved during an ingestion: writing the version to the new index');
    const reuse = vectorsKept !== null && now.embedder.modelName === serving.embedder.modelName;
    for (let start = 0; start < segments.length; start += SEGMENTS_PER_STEP) {
      const step = segments.slice(start, start + SEGMENTS_PER_STEP);
      const embeddings = reuse ? vectorsKept.slice(start, start + step.length) : await rag.embedSegments(job.title, step, now.embedder.modelName);
      checkpoint();
      await search.indexChunks(chunkDocuments(target, job.version, step, embeddings, now.embedder.modelName, start), now.index);
      checkpoint();
    }
    await search.chunksSearchable(now.index);
    // The old index dropped meanwhile and made again by this job's own writes (a bulk creates a missing index):
    // removed, and said, rather than left as an index of no family.
    if (await search.removeRecreatedIndex(serving.index, job._id, job.version)) {
      deps.logger.warn({ documentId: job._id, index: serving.index }, 'an ingestion wrote to a dropped chunk index, which its writes created again: deleted it');
    }
    serving = now;
    checkpoint();
  }

  const built = { chunks: segments.length, total_chunks: total };
  if (job.replaces === null) {
    const now = new Date();
    if (!(await store.setDocumentReady(job._id, job.version, { filename: job.filename, title: job.title, ...built, ...liveMetadata(job) }, now))) {
      await cancel(deps, job, false);
    }
    // The KB may have been deleted while this job worked: it is invisible now, so remove what was written (the
    // document is new: nothing of it was live before this job).
    if ((await store.findLiveKnowledgeBase(job.knowledge_base_id)) === null) await cancel(deps, job, true, true);
    await store.deleteJob(job._id);
    onLive({ ...document!, filename: job.filename, title: job.title, ...built, ...liveMetadata(job), status: 'ready', live_version: job.version, progress: null, error: null, updated_at: now });
    return;
  }
  // The swap: one write hides the replaced version instead of the new one.
  const replaced = job.replaces;
  if (!(await held(() => store.updateHeldJob(job._id, owner, { phase: 'retire', hidden: [replaced], built })))) throw new JobStopped('lease-lost');
  job.phase = 'retire';
  job.hidden = [replaced];
  job.built = built;
}

/**
 * A PDF's text per page, extracted from its stored original in a worker. Progress says
 * "extracting page n of m" (written at most every PROGRESS_EVERY_MS). An unreadable PDF fails the document with a
 * message a person understands (extraction.ts); nothing has been indexed yet, so nothing half-ingested remains.
 */
async function extractPdf({ deps, job, checkpoint, stopped, onExtracted, readerSteps, timings }: JobRun, fileId: string): Promise<string[]> {
  const bytes = await deps.store.readFile(fileId);
  if (bytes === null) throw new Error(`the stored file of document ${job._id} is missing`);
  let lastProgress = 0;
  let progressWrite: Promise<unknown> = Promise.resolve();
  const onPage = (done: number, total: number) => {
    if (done < total && Date.now() - lastProgress < PROGRESS_EVERY_MS) return;
    lastProgress = Date.now();
    const progress = { embedded: 0, total: 0, phase: 'extracting' as const, pages: { done, total } };
    progressWrite = progressWrite.then(() => deps.store.setDocumentProgress(job._id, 'processing', progress, { ...timings })).catch(() => undefined);
  };
  let extracted;
  try {
    extracted = await deps.pdf!.extract(bytes, onPage, stopped, readerSteps);
  } catch (error) {
    // The last page's progress write may still be in flight: landing after the failure is recorded, it would set
    // the document back to "processing" for good (seen once under load: a scanned PDF stuck at "page 2 of 2").
    await progressWrite;
    // Stopped (its reader was killed for it): the job is released or gone, not failed.
    checkpoint();
    // Over its memory or time: what a hostile PDF looks like, worth an operator's eye (ordinary failures are not).
    if (error instanceof PdfExtractionError && (error.reason === 'too_large' || error.reason === 'timeout')) {
      deps.logger.warn({ documentId: job._id, reason: error.reason, detail: error.message }, 'a PDF hit a reading limit');
    }
    throw extractionFailure(error);
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
  return extracted.pages;
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
  const ready = await store.setDocumentReady(job._id, job.version, { filename: job.filename, title: job.title, ...built, ...liveMetadata(job) }, now);
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
async function cancel(deps: IngestDeps, job: IngestJobRecord, knowledgeBaseGone: boolean, newDocument = false): Promise<never> {
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

/** A fresh job record for a version (held by `owner` when a request runs it, otherwise free to claim). */
export function newJob(
  document: Pick<DocumentRecord, '_id' | 'knowledge_base_id'>,
  version: {
    version: number;
    content_id: string;
    filename: string;
    title: string;
    replaces: number | null;
    file_id?: string | null;
    /** The version's metadata (leave it out rather than pass undefined: the driver would store null). */
    metadata?: MetadataEntry[];
  },
  mode: 'sync' | 'async',
  owner: string | null,
  leaseMs: number,
): IngestJobRecord {
  const now = Date.now();
  return {
    _id: document._id,
    knowledge_base_id: document.knowledge_base_id,
    ...version,
    phase: 'build',
    hidden: [version.version],
    built: null,
    lease_owner: owner,
    lease_until: owner ? now + leaseMs : null,
    claims: 0,
    mode,
    attempts: owner ? 1 : 0,
    not_before: 0,
    created_at: new Date(now),
  };
}
