// The end of a restore: records and chunks made to agree (`kbqa doctor --fix`'s machinery, operations/doctor.ts),
// documents rebuilt from their stored originals, and the ingestion jobs that takes run here to their end.
import { setTimeout as sleep } from 'node:timers/promises';
import { BackupError } from '../../errors.ts';
import { reindexDocuments, type DocumentDeps } from '../../commands/documents.ts';
import { runDoctor, formatDoctorReport, type DoctorReport } from '../doctor.ts';
import type { RestoreDeps, RestoreOptions, RestoreSummary } from './manifest.ts';

export type ReconcileOutcome = Pick<
  RestoreSummary,
  | 'documents_rebuilt'
  | 'documents_requeued'
  | 'jobs_run'
  | 'chunks_removed'
  | 'documents_with_chunks_removed'
  | 'records_removed'
  | 'not_rebuildable'
  | 'consistent'
  | 'remaining'
>;

/** Rounds of doctor --fix and running the jobs it (or the backup) left, until the doctor finds nothing. */
const RECONCILE_ROUNDS = 4;

/**
 * Makes records and chunks agree, the way `kbqa doctor --fix` would with no grace period (nothing else writes to a
 * stack being restored): chunks no record claims go, documents whose live chunks are missing or incomplete are
 * rebuilt from their stored originals, documents left queued get their job again. Then the jobs are run to their
 * end here, and the doctor runs again: a job finishing (a replacement going live whose chunks the snapshot did not
 * have) can show what the first round could not see.
 */
export async function reconcile(
  deps: RestoreDeps,
  options: RestoreOptions,
  progress: (line: string) => void,
): Promise<ReconcileOutcome> {
  const outcome: ReconcileOutcome = {
    documents_rebuilt: 0,
    documents_requeued: 0,
    jobs_run: 0,
    chunks_removed: 0,
    documents_with_chunks_removed: 0,
    records_removed: 0,
    not_rebuildable: [],
    consistent: false,
    remaining: null,
  };
  let documentDeps: DocumentDeps | null = null;
  const loadDocumentDeps = async () => (documentDeps ??= await deps.documentDeps());
  const notRebuildable = new Set<string>();
  for (let round = 0; round < RECONCILE_ROUNDS; round += 1) {
    const report = await runDoctor(
      { store: deps.store, search: deps.search },
      {
        fix: true,
        graceMs: 0,
        leaseMs: deps.config.ingestion.leaseMs,
        rebuild: async (ids) => {
          progress(`rebuilding ${ids.length} document(s) from their stored originals`);
          const rebuilt = await reindexDocuments(await loadDocumentDeps(), ids, options.rebuildProgress?.('rebuilt'));
          return [...rebuilt.failed, ...rebuilt.skipped];
        },
      },
    );
    count(outcome, report, notRebuildable);
    const jobs = await deps.store.countIngestJobs();
    if (report.clean && jobs === 0) break;
    if (jobs > 0) outcome.jobs_run += await runJobs(await loadDocumentDeps(), options, progress);
  }
  outcome.not_rebuildable = [...notRebuildable];
  const final = await runDoctor({ store: deps.store, search: deps.search }, { graceMs: 0 });
  const left = await deps.store.countIngestJobs();
  outcome.consistent = final.clean && left === 0;
  if (!outcome.consistent) {
    outcome.remaining = `${formatDoctorReport(final)}${left > 0 ? `\ningestion jobs still queued: ${left}` : ''}`;
  }
  return outcome;
}

function count(outcome: ReconcileOutcome, report: DoctorReport, notRebuildable: Set<string>): void {
  const fixed = report.fixed;
  if (!fixed) return;
  outcome.documents_rebuilt += fixed.documents_rebuilt;
  outcome.documents_requeued += fixed.documents_requeued;
  outcome.documents_with_chunks_removed += fixed.chunks_removed_for_documents;
  // Nothing else writes during a restore, so what the doctor found is what it removed.
  outcome.chunks_removed +=
    report.orphan_chunks.reduce((sum, orphan) => sum + orphan.chunks, 0) +
    report.stale_chunk_versions.reduce((sum, stale) => sum + stale.chunks, 0);
  outcome.records_removed += fixed.contents_removed + fixed.jobs_removed + fixed.documents_removed;
  for (const id of fixed.not_rebuildable) notRebuildable.add(id);
}

/**
 * Runs every queued ingestion job in this process until none is left; returns how many it was handed. Polls a count
 * (the ids are read only to hand new jobs to the runner); fails when no job finishes for `jobsStallTimeoutMs`, as
 * while a write block is on the chunk index (jobs then wait, and would forever).
 */
async function runJobs(deps: DocumentDeps, options: RestoreOptions, progress: (line: string) => void): Promise<number> {
  const pollMs = options.pollMs ?? 500;
  const stallMs = options.jobsStallTimeoutMs ?? 15 * 60_000;
  const handed = new Set<string>();
  let fewest = Infinity;
  let progressAt = Date.now();
  let listedAt = 0;
  for (;;) {
    const left = await deps.store.countIngestJobs();
    if (left === 0) return handed.size;
    const now = Date.now();
    if (left < fewest) {
      fewest = left;
      progressAt = now;
    } else if (now - progressAt > stallMs) {
      throw new BackupError(
        `no ingestion job finished in ${Math.round(stallMs / 60_000)} min (${left} left): is the chunk index write-blocked (a node's disk at the ` +
          'flood-stage watermark)? `kbqa doctor` and the API log say more',
      );
    }
    if (now - listedAt > 10_000) {
      listedAt = now;
      // The runner of the kbqa command takes only the jobs it is handed (API processes may share the store).
      for (const id of await deps.store.listIngestJobIds()) {
        if (handed.has(id)) continue;
        handed.add(id);
        deps.jobs.nudge(id);
      }
      progress(`ingestion jobs: ${left} left`);
    }
    await sleep(pollMs);
  }
}
