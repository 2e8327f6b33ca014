// Job execution: one held job run to its end, its steps in order (build: buildVersion.ts, then retire: steps.ts) under its lease
// (lease.ts), and a run that did not finish settled (failures.ts). The runner claims the job and starts this.
import { IngestionAbandonedError } from '../errors.ts';
import type { PdfSteps } from '../extraction/pdf.ts';
import type { DocumentRecord, IngestionTimings, IngestJobRecord } from '../store/index.ts';
import { settleFailure } from './failures.ts';
import type { HeldLease } from './lease.ts';
import { JobCancelled, JobStopped, type IngestDeps, type JobRun, type Prepared } from './runContext.ts';
import { buildVersion } from './buildVersion.ts';
import { retireReplacedVersion } from './steps.ts';

/** A held job and what its runner hears of it. */
export interface Execution {
  deps: IngestDeps;
  job: IngestJobRecord;
  /** The runner holding the job. */
  owner: string;
  lease: HeldLease;
  prepared: Prepared | undefined;
  /** A waiting request's answers: the version is live, or the job failed (with the reason). */
  callbacks: { onLive?: (document: DocumentRecord) => void; onFailed?: (error: unknown) => void };
  onExtracted: () => void;
  /** The PDF reading steps of this job, given its timings to record the longest step in. */
  readerSteps: (timings: IngestionTimings) => PdfSteps;
  /** The job waits queued without using up an attempt (failures.ts settleFailure). */
  onQueued: () => void;
}

/** Runs a held job to its end: its steps, or a failure settled. Never throws. */
export async function runJob(execution: Execution): Promise<void> {
  const { deps, job, owner, lease, prepared, callbacks, onExtracted } = execution;
  const { checkpoint, held, leaseLapsed } = lease;
  try {
    // Its wait ends as it is taken (a PDF is claimed only with a reader free). A retry's includes its back-off.
    const timings: IngestionTimings = { queue_wait_ms: Date.now() - job.created_at.getTime() };
    await executeJob({
      deps,
      job,
      owner,
      checkpoint,
      stopped: lease.stopped,
      held,
      onLive: (document) => callbacks.onLive?.(document),
      onExtracted,
      readerSteps: execution.readerSteps(timings),
      timings,
      prepared,
    });
  } catch (error) {
    // Failed past its lease: another process may be running the job, so this one records nothing of it.
    const fenced = !(error instanceof JobStopped || error instanceof JobCancelled) && leaseLapsed();
    await settleFailure(
      { deps, owner, held, onFailed: callbacks.onFailed, onQueued: execution.onQueued },
      job,
      fenced ? new JobStopped('lease-lost') : error,
    );
  }
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
