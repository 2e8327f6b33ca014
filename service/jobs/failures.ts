// How a job that cannot go on ends: what its document's `error` says, whether a retry can help and when, what a
// waiting request hears, and the clean-up of the chunks its version wrote.
import {
  ApiError,
  IngestionAbandonedError,
  NotFoundError,
  ServiceStoppingError,
  UpstreamUnavailableError,
} from '../errors.ts';
import type { IngestJobRecord } from '../store/index.ts';
import type { IngestDeps } from './runContext.ts';

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
