// How a job that cannot go on ends (settleFailure, called by the runner for every run that did not finish): what its
// document's `error` says, whether a retry can help and when, what a waiting request hears, and the clean-up of the
// chunks its version wrote.
import {
  ApiError,
  IngestionAbandonedError,
  NotFoundError,
  SearchIndexReadOnlyError,
  ServiceStoppingError,
  UpstreamUnavailableError,
  errorSummary,
} from '../errors.ts';
import type { IngestJobRecord } from '../store/index.ts';
import { JobCancelled, JobStopped, type HeldWrites, type IngestDeps } from './runContext.ts';

/** What a user reads in a failed document's `error`: actionable, never an internal detail. */
export function failureMessage(error: unknown, jobId: string): string {
  if ((error instanceof ApiError && error.status < 500) || error instanceof IngestionAbandonedError)
    return error.message;
  if (error instanceof UpstreamUnavailableError)
    return `${error.message.replace(/; retry later$/, '')}; retry the document (POST /api/v1/documents/${jobId}/retry)`;
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

export function isTransient(error: unknown): boolean {
  return error instanceof UpstreamUnavailableError;
}

/** Back-off before the next attempt after a transient failure: 2 s, 4 s, … up to 5 min. */
export function retryDelayMs(attempts: number): number {
  return Math.min(300_000, 1_000 * 2 ** Math.max(1, attempts));
}

export function stoppingError(documentId: string): ServiceStoppingError {
  return new ServiceStoppingError(
    `the service is shutting down; document ${documentId} is stored and another instance finishes it: follow GET /api/v1/documents/${documentId}`,
  );
}

/** What a request waiting on a cancelled job hears: its KB is gone (deleted meanwhile), or its document is. */
export async function goneError(
  deps: IngestDeps,
  job: IngestJobRecord,
  knowledgeBaseGone: boolean,
): Promise<NotFoundError> {
  if (knowledgeBaseGone || (await deps.store.findLiveKnowledgeBase(job.knowledge_base_id)) === null)
    return NotFoundError.knowledgeBase(job.knowledge_base_id);
  return new NotFoundError(`document ${job._id} not found`);
}

/** Removes the chunks this job's version wrote (best effort is not enough: failures go up). */
export async function removeVersionChunks(deps: IngestDeps, job: IngestJobRecord): Promise<void> {
  await deps.search.deleteChunksOfDocumentVersion(job._id, job.version);
}

/**
 * The same, for a holder that finds its job gone or taken: unless the document went live with this version meanwhile
 * (another process finished the job after this one's lease lapsed), whose chunks must stay.
 */
export async function removeVersionChunksUnlessLive(deps: IngestDeps, job: IngestJobRecord): Promise<void> {
  if ((await deps.store.findDocument(job._id))?.live_version === job.version) return;
  await removeVersionChunks(deps, job);
}

/**
 * A failure the job cannot get past. A request waiting on a NEW document gets all-or-nothing (as v1 promised):
 * the document is removed entirely and the request answers the error. Otherwise the failed version's chunks are
 * removed, and the document shows `failed` with the error until it is deleted or retried; a replaced version
 * stays live.
 */
export async function failJob(deps: IngestDeps, job: IngestJobRecord, error: unknown): Promise<void> {
  await removeVersionChunks(deps, job);
  if (job.mode === 'sync' && job.replaces === null) {
    await deps.store.deleteJob(job._id);
    await deps.store.deleteDocument(job._id);
    return;
  }
  await deps.store.setDocumentFailed(job._id, failureMessage(error, job._id), new Date(), !isPermanentFailure(error));
  await deps.store.deleteJob(job._id);
}

/** What settling a failed run needs of its runner. */
export interface Settlement {
  deps: IngestDeps;
  /** The runner holding the job. */
  owner: string;
  held: HeldWrites;
  /** The waiting request's answer, when a request waits on the job. */
  onFailed: ((error: unknown) => void) | undefined;
  /** The job waits queued without using up an attempt (a read-only index): its runner may claim it again. */
  onQueued: () => void;
}

/**
 * How a run that did not finish ends: a stopped job is released (shutdown) or left to its new holder, a cancelled
 * one answers its request, a read-only index keeps it queued, a transient failure is retried after a back-off, and
 * anything else fails the document (failJob). Never throws: when the stores fail too, the lease lapses instead.
 */
export async function settleFailure(run: Settlement, job: IngestJobRecord, error: unknown): Promise<void> {
  const { deps, owner, held, onFailed, onQueued } = run;
  const { store, logger } = deps;
  try {
    if (error instanceof JobStopped) {
      if (error.reason === 'shutdown') {
        // The waiting request hears "stored, another instance finishes it": async from now on (see releaseJob).
        await held(() => store.releaseJob(job._id, owner, Date.now(), { async: true }));
        onFailed?.(stoppingError(job._id));
      } else {
        // Someone else holds it now, or it was deleted (the deleter removed the document; remove what we wrote
        // since) — or another process finished it meanwhile: then the version is live and its chunks stay.
        if ((await store.findJob(job._id)) === null) await removeVersionChunksUnlessLive(deps, job);
        onFailed?.(await goneError(deps, job, false));
      }
      return;
    }
    if (error instanceof JobCancelled) {
      onFailed?.(await goneError(deps, job, error.knowledgeBaseGone));
      return;
    }
    if (!(error instanceof ApiError))
      logger.error({ err: errorSummary(error), documentId: job._id }, 'ingestion job failed');
    if (error instanceof SearchIndexReadOnlyError) {
      // A full disk is not the document's fault and may last hours. The job waits, queued, without using up an
      // attempt (the runner claims nothing while the block is on), keeping what it indexed: OpenSearch refuses
      // deletions under the block too, and the version stays hidden while its job exists; the next run writes the
      // same chunk ids again. A request waiting on it hears so (as at shutdown: the document is stored).
      deps.metrics?.countUpstreamError(error.upstream);
      // Only a version still being built is `queued`: after the swap (retire phase) it is live and the document
      // ready, and only the removal of the replaced version's chunks waits for the block.
      if (job.phase === 'build') await store.setDocumentProgress(job._id, 'queued', null);
      // A waiting request is told its document is stored and queued: async from now on, so a later transient
      // failure retries it instead of removing the document as all-or-nothing (failJob).
      await held(() =>
        store.releaseJob(job._id, owner, Date.now() + retryDelayMs(1), { unclaimed: true, async: true }),
      );
      onQueued();
      logger.warn(
        { err: errorSummary(error), documentId: job._id },
        'ingestion job waits: the search index is read-only',
      );
      onFailed?.(new SearchIndexReadOnlyError(error.block, job._id));
      return;
    }
    const retried = job.mode === 'async' && isTransient(error) && job.attempts < deps.config.ingestion.maxAttempts;
    if (error instanceof UpstreamUnavailableError && (retried || !onFailed))
      deps.metrics?.countUpstreamError(error.upstream);
    if (retried) {
      await store.setDocumentProgress(job._id, 'queued', null);
      await held(() => store.releaseJob(job._id, owner, Date.now() + retryDelayMs(job.attempts)));
      logger.warn(
        { err: errorSummary(error), documentId: job._id, attempts: job.attempts },
        'ingestion job will be retried',
      );
      return;
    }
    await failJob(deps, job, error);
    onFailed?.(error);
  } catch (settleError) {
    // The stores are failing too: the job keeps its record and lease, which lapses; the next holder settles it.
    logger.error(
      { err: errorSummary(settleError), documentId: job._id },
      'ingestion jobs: could not record the end of a job; its lease will lapse and it runs again',
    );
    onFailed?.(
      error instanceof JobStopped ? new ServiceStoppingError('the service is shutting down; retry the request') : error,
    );
  }
}
