// The job engine of one process (IngestRunner): claims jobs in the fair order (scheduling.ts), hands the PDF reader
// between PDFs, grants requests their turns (turns.ts) and starts each job it holds: execution.ts runs its steps
// under its lease (lease.ts) and settles how a run that did not finish ends (failures.ts).
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.ts';
import { errorSummary } from '../errors.ts';
import type { DocumentRecord, IngestionTimings, IngestJobRecord } from '../store/index.ts';
import {
  createPdfExtractor,
  type PdfExtractor,
  type PdfLimits,
  type PdfPoolStats,
  type PdfSteps,
} from '../extraction/pdf.ts';
import { isClaimable, type ScheduledJob } from '../store/ingestJobs.ts';
import { stoppingError } from './failures.ts';
import type { IngestDeps, Prepared, StopReason } from './runContext.ts';
import { keepLease } from './lease.ts';
import { claimOrder, documentsAhead, knowledgeBaseOwners, needsPdfReader } from './scheduling.ts';
import { runJob } from './execution.ts';
import { RequestTurns, type HeldTurn } from './turns.ts';

export type { HeldTurn } from './turns.ts';

/** PDFs read at once by the extractor the runner starts (each in a process of its own, extraction/pdf.ts). */
const PDF_READERS = 1;

/** An extractor whose worker pool starts on first use: most processes never see a PDF. */
function lazyPdfExtractor(limits: PdfLimits): PdfExtractor {
  let extractor: PdfExtractor | null = null;
  return {
    extract: (bytes, onPage, stop, steps, file) =>
      (extractor ??= createPdfExtractor(limits, { workers: PDF_READERS })).extract(bytes, onPage, stop, steps, file),
    close: async () => {
      await extractor?.close();
    },
    stats: () => extractor?.stats?.() ?? null,
  };
}

interface Running {
  stop: (reason: StopReason) => void;
  done: Promise<void>;
  /** Whose job it is (the KB's owner), for the per-user cap of requests' own jobs. */
  owner: string;
  /** A request's own job, counted by its turn (not as a claimed job). */
  held: boolean;
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
  /** Requests' turns to run their own job here, counted with the jobs claimed. */
  readonly #turns = new RequestTurns({
    slots: () => {
      let claimed = 0;
      for (const [id, running] of this.#running) if (!running.held && !this.#reading.has(id)) claimed += 1;
      return claimed;
    },
    ofOwner: (owner) => {
      let claimed = 0;
      for (const running of this.#running.values()) if (!running.held && running.owner === owner) claimed += 1;
      return claimed;
    },
    limits: () => this.settings,
    lastSlotFreed: () => {
      if (!this.#stopping) this.#schedule(0);
    },
  });
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
    this.#ownPdf = deps.pdf ? null : lazyPdfExtractor({ ...deps.config.pdf, documents: deps.config.documents });
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
    const held = jobs.filter(
      (job) =>
        needsPdfReader(job) &&
        job.lease_until !== null &&
        !isClaimable(job, now, this.settings.leaseMs) &&
        !paused.has(job._id),
    );
    const documents = await Promise.all(held.map((job) => store.findDocument(job._id)));
    const reading = documents.filter(
      (document) => document !== null && document.progress?.phase !== 'embedding',
    ).length;
    const share = { perUser: this.settings.maxJobsPerUser, perKnowledgeBase: this.settings.maxJobsPerKnowledgeBase };
    return documentsAhead(jobs, this.#knowledgeBaseOwners.ownerOf, now, this.settings.leaseMs, share, reading);
  }

  /** Read-only, for metrics: the PDF worker pool's use, or null while it has not been started. */
  pdfPoolStats(): PdfPoolStats | null {
    return this.#deps.pdf?.stats?.() ?? null;
  }

  /**
   * Waits until a request of `owner` may run its own job here, under the caps queued jobs are claimed under: this
   * process's `concurrency` slots (text jobs running, claimed or a request's) and `maxJobsPerUser` of the owner's jobs
   * running here. Waiting requests are served in arrival order, skipping an owner at its cap; a slot freed goes to
   * them before the next claim. The request writes its job once granted (so its lease never runs out while it waits)
   * and hands the turn to runHeld.
   */
  heldTurn(owner: string): Promise<HeldTurn> {
    return this.#turns.take(owner);
  }

  /**
   * A job this process already holds (its lease was written with the job): runs it now, resolving once its version
   * is live (the retire step goes on in the background) and rejecting with the reason it failed. With its request's
   * turn (heldTurn), which ends when the job does.
   */
  async runHeld(job: IngestJobRecord, prepared?: Prepared, turn?: HeldTurn): Promise<DocumentRecord> {
    if (this.#stopping) {
      // Written just as SIGTERM came: give the job back at once, for whichever process runs next. The request is
      // told its document is stored and finished elsewhere: queued from now on (async), not all-or-nothing.
      await this.#deps.store.releaseJob(job._id, this.owner, Date.now(), { unclaimed: true, async: true });
      throw stoppingError(job._id);
    }
    return new Promise<DocumentRecord>((resolve, reject) => {
      this.#launch(job, { onLive: resolve, onFailed: reject }, prepared, turn);
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
      // Requests waiting for a turn go first: a slot they could take is not claimed.
      const slotsFree = () => this.#turns.slotsFree();
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
      const mine = this.#own
        ? jobs.filter((job) => this.#own!.has(job._id) || !isClaimable(job, now, this.settings.leaseMs))
        : jobs;
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
      for (
        let next = this.#pdfsWaiting.shift();
        next && this.#readersFree() > 0 && !this.#stopping;
        next = this.#pdfsWaiting.shift()
      ) {
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
    turn?: HeldTurn,
  ): void {
    const lease = keepLease(this.#deps, job, this.owner);
    const fromQueue = prepared === undefined && callbacks.onLive === undefined;
    const done = (async () => {
      try {
        await runJob({
          deps: this.#deps,
          job,
          owner: this.owner,
          lease,
          prepared,
          callbacks,
          onExtracted: () => {
            // The reader is free: the next PDF may be claimed now, and this job counts in the slots from here on.
            if (this.#reading.delete(job._id) && !this.#stopping) this.#schedule(0);
          },
          readerSteps: (timings) => this.#readerSteps(job._id, lease.stopped, timings),
          onQueued: () => this.#own?.add(job._id),
        });
      } finally {
        lease.end();
        this.#running.delete(job._id);
        this.#reading.delete(job._id);
        turn?.end();
        if (this.#own && (await this.#deps.store.findJob(job._id).catch(() => null)) === null)
          this.#own.delete(job._id);
        // A queued job's slot is free: look for the next one now. (A request's own job took no slot.)
        if (!this.#stopping && fromQueue) this.#schedule(0);
      }
    })();
    const owner = turn?.owner ?? this.#knowledgeBaseOwners.ownerOf(job.knowledge_base_id);
    this.#running.set(job._id, { stop: lease.stopWith, done, owner, held: turn !== undefined });
  }
}
