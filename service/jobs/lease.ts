// Lease keeping for one job this process holds: the renewals, the fence (the holder stops itself once its lease may
// have lapsed, rather than trusting its writes), the holder's writes to its job record one at a time, and the stop.
import { errorSummary } from '../errors.ts';
import type { IngestJobRecord } from '../store/index.ts';
import { JobStopped, type HeldWrites, type IngestDeps, type StopReason } from './runContext.ts';

/** A held job's lease, kept until end(). */
export interface HeldLease {
  /** Stops the job between two steps, for the first reason given. */
  stopWith: (reason: StopReason) => void;
  /** Aborted when the job is stopped. */
  stopped: AbortSignal;
  /** Past the lease this process last wrote: another may hold the job now. */
  leaseLapsed: () => boolean;
  /** Throws JobStopped once stopped or past the lease: called between two steps. */
  checkpoint: () => void;
  held: HeldWrites;
  /** Stops renewing (the job is over). */
  end: () => void;
}

/** Starts keeping the lease of `job`, claimed (or written) by `owner` until `job.lease_until`. */
export function keepLease(deps: IngestDeps, job: IngestJobRecord, owner: string): HeldLease {
  const { leaseMs } = deps.config.ingestion;
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
  const renewEvery = Math.max(250, Math.floor(leaseMs / 3));
  let renewing = false;
  const renewal = setInterval(() => {
    if (renewing) return;
    renewing = true;
    let sentAt = 0;
    held(() => {
      sentAt = Date.now();
      return deps.store.renewLease(job._id, owner, sentAt, sentAt + leaseMs);
    })
      .then(
        (stillHeld) => {
          if (!stillHeld) stopWith('lease-lost');
          else leaseValidUntil = Math.max(leaseValidUntil, sentAt + leaseMs);
        },
        (error: unknown) =>
          deps.logger.warn(
            { err: errorSummary(error), documentId: job._id },
            'ingestion jobs: could not renew a lease',
          ),
      )
      .finally(() => (renewing = false));
  }, renewEvery);
  renewal.unref();
  return { stopWith, stopped: stopped.signal, leaseLapsed, checkpoint, held, end: () => clearInterval(renewal) };
}
