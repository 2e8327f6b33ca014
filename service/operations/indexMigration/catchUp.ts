// The catch-up after a swap: once every process has stopped writing to the old index (the serving-index cache,
// ingestions in flight), passes copy or rebuild what only the old index got until one finds nothing to do; then the
// records get their chunk counts as the new index holds them. Also how an unfinished catch-up is finished.
import { IndexMigrationError } from '../../errors.ts';
import { isFileKind } from '../../extraction/fileKinds.ts';
import type { ChunkIndexMeta } from '../../search/index.ts';
import { configuredChunking, sameSplit } from '../../search/chunkIndices.ts';
import { SERVING_INDEX_TTL_MS } from '../../search/servingIndex.ts';
import { difference, fill, fillable } from './fill.ts';
import {
  finishCommand,
  MAX_PASSES,
  sameChunks,
  unitKey,
  type FillCounts,
  type FillPlan,
  type IndexMigrationDeps,
  type MigrateOptions,
  type MigrationOutcome,
} from './plan.ts';

/** A build whose lease lapsed longer ago than this has no holder left: the catch-up after a swap does not wait for it. */
const LAPSED_LEASE_GRACE_MS = 30_000;

/**
 * A build some process may still run: held, its lease current or lapsed lately (a holder renewing late under load
 * still writes). One lapsed for long has no holder left, and whoever takes the job resolves the alias afresh.
 */
export function heldBuild(
  job: { phase: string; lease_owner: string | null; lease_until: number | null },
  now: number,
): boolean {
  return job.phase === 'build' && job.lease_owner !== null && (job.lease_until ?? 0) >= now - LAPSED_LEASE_GRACE_MS;
}

/** `swapped` while the catch-up after the swap left something undone (ingestions still running, versions without an original). */
export function stateAfterCatchUp(after: { left_in_flight: number; unrebuildable: string[] }): 'swapped' | 'live' {
  return after.left_in_flight > 0 || after.unrebuildable.length > 0 ? 'swapped' : 'live';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The catch-up after a swap, finished for a live index left `swapped` (a crash, ingestions still running then,
 * versions without an original): what `kbqa index migrate` does for the current version, `kbqa index use` for any.
 * Its source is the index it was swapped from, when that is still there with interchangeable chunks; else the stored
 * originals.
 */
export async function finishCatchUp(
  deps: IndexMigrationDeps,
  live: string,
  liveMeta: ChunkIndexMeta,
  options: MigrateOptions,
  say: (line: string) => void,
): Promise<{ plan: FillPlan; result: Awaited<ReturnType<typeof catchUpAfterSwap>> }> {
  const admin = deps.search.indices;
  const source = liveMeta.migration.source;
  const sourceMeta = source ? ((await admin.meta(source)) ?? null) : null;
  const plan: FillPlan = {
    target: live,
    source:
      source && sameChunks(sourceMeta, { embedder: liveMeta.embedder.name, chunking: liveMeta.chunking })
        ? source
        : null,
    embedder: { modelName: liveMeta.embedder.name, dimensions: liveMeta.embedder.dimensions },
    scope: options.knowledgeBaseIds,
    splitTotals: new Map(),
  };
  say(
    `${live} is live; catching up with what ${source ? `reached ${source} after the swap` : 'changed in the store since the swap'}`,
  );
  const result = await catchUpAfterSwap(deps, plan, options, say);
  await admin.setMeta(live, {
    ...liveMeta,
    migration: { ...liveMeta.migration, state: stateAfterCatchUp(result), finished_at: new Date().toISOString() },
  });
  return { plan, result };
}

/**
 * After a swap: every API process stops resolving the old index within the serving-index cache's lifetime; an
 * ingestion building a version since before may still write there until it ends (it writes the new index too
 * before going live, jobs/buildVersion.ts; one that went live just before that check is what this catches up). Then
 * catch-up passes copy (or rebuild) what only the old index got, and remove what was deleted or replaced meanwhile,
 * until one finds nothing to do.
 */
export async function catchUpAfterSwap(
  deps: IndexMigrationDeps,
  plan: FillPlan,
  options: MigrateOptions,
  say: (line: string) => void,
  before?: FillCounts,
): Promise<
  Pick<
    MigrationOutcome,
    'copied' | 'rebuilt' | 'removed' | 'catch_up_passes' | 'left_in_flight' | 'chunk_counts_updated' | 'unrebuildable'
  >
> {
  await sleep(options.catchUpDelayMs ?? SERVING_INDEX_TTL_MS * 2 + 1_000);
  const now = Date.now();
  const running = (await deps.store.listJobs(plan.scope)).filter((job) => heldBuild(job, now));
  const deadline = Date.now() + (options.inFlightWaitMs ?? 120_000);
  let left = running;
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(500);
    const still = await Promise.all(left.map(async (job) => ({ job, current: await deps.store.findJob(job._id) })));
    left = still
      .filter(({ job, current }) => current !== null && current.version === job.version && current.phase === 'build')
      .map(({ job }) => job);
  }
  if (left.length > 0)
    say(
      `${left.length} ingestion(s) still running after the swap: run ${finishCommand(plan.target)} once they end, to catch up with them`,
    );
  const counts: FillCounts = { copied: 0, rebuilt: 0, removed: 0, unrebuildable: before?.unrebuildable ?? new Set() };
  // Up to MAX_PASSES fills, each followed by a fresh diff: only work left after the last one is an error.
  let passes = 0;
  for (;;) {
    const found = fillable(await difference(deps, plan), counts);
    const work = found.missing.length + found.stale.length;
    if (work === 0) break;
    if (passes === MAX_PASSES) {
      // The target stays `swapped` (drop-old refuses while it is): a re-run finishes the catch-up.
      throw new IndexMigrationError(
        `the alias points to ${plan.target} now, but documents kept changing faster than its catch-up (${work} versions left after ${MAX_PASSES} passes): run ${finishCommand(plan.target)} to finish it`,
      );
    }
    passes += 1;
    say(
      `catch-up after the swap, pass ${passes}: ${found.missing.length} version(s) to fill, ${found.stale.length} to remove`,
    );
    await fill(deps, plan, found, counts, { onUnit: () => {}, done: () => 0 });
    await deps.search.indices.refresh(plan.target);
  }
  const unrebuildable = [...counts.unrebuildable];
  if (unrebuildable.length > 0) {
    say(
      `${unrebuildable.length} document version(s) have no stored original to rebuild from (${unrebuildable.slice(0, 5).join(', ')}${unrebuildable.length > 5 ? ', …' : ''}): ` +
        `${plan.target} stays unfinished; run kbqa doctor --fix, then ${finishCommand(plan.target)}`,
    );
  }
  const updated = await recordChunkCounts(deps, plan);
  if (updated > 0) say(`chunk counts of ${updated} document(s) recorded as ${plan.target} holds them`);
  return {
    copied: counts.copied,
    rebuilt: counts.rebuilt,
    removed: counts.removed,
    catch_up_passes: passes,
    left_in_flight: left.length,
    chunk_counts_updated: updated,
    unrebuildable,
  };
}

/**
 * Once the target is served: each live document's record gets its version's chunk count in the target (and, for a
 * version this run rebuilt, the splitter's total), where they differ. A re-chunking changes them, and `kbqa doctor`
 * compares the record with what the alias serves. Written after the swap, not during the fill: until then the
 * record describes the old index, which is the one served. Each write is by _id and version (no transaction): a
 * document replaced or deleted since the read keeps what its own ingestion wrote.
 */
async function recordChunkCounts(deps: IndexMigrationDeps, plan: FillPlan): Promise<number> {
  const documents = await deps.store.listDocumentSummaries(plan.scope);
  await deps.search.indices.refresh(plan.target);
  const groups = new Map(
    (await deps.search.indices.versionGroups(plan.target, plan.scope)).map((group) => [
      unitKey(group.document_id, group.document_version),
      group,
    ]),
  );
  // Totals come from the configured splitter: right only for an index cut that way (not a rollback to an older chunking).
  const meta = await deps.search.indices.meta(plan.target);
  const splitLikeTarget = meta?.chunking ? sameSplit(meta.chunking, configuredChunking(deps.config.chunking)) : false;
  let updated = 0;
  for (const document of documents) {
    if (document.live_version === null) continue;
    const key = unitKey(document._id, document.live_version);
    // Not in the target: a version still in flight, whose job writes its own counts when it goes live.
    const group = groups.get(key);
    if (!group) continue;
    // A version rebuilt by an earlier, interrupted run: its text split again (no embedding) for the total.
    const total = !splitLikeTarget
      ? undefined
      : (plan.splitTotals.get(key) ??
        (group.chunks !== document.chunks ? await textSplitTotal(deps, document) : undefined));
    if (group.chunks === document.chunks && (total === undefined || total === document.total_chunks)) continue;
    // The total unknown (a PDF, another chunking): at least the chunks the record now says it has.
    const counts = { chunks: group.chunks, total_chunks: total ?? Math.max(document.total_chunks, group.chunks) };
    if (await deps.store.setLiveChunkCounts(document._id, document.live_version, counts)) updated += 1;
  }
  return updated;
}

/** The splitter's total for a text document's stored original; undefined for a PDF (re-extracting is not worth a count). */
async function textSplitTotal(
  deps: IndexMigrationDeps,
  document: { _id: string; filename: string },
): Promise<number | undefined> {
  const record = await deps.store.findDocument(document._id);
  if (!record || isFileKind(record.kind)) return undefined;
  const content = await deps.store.findDocumentContent(document._id);
  return content === null ? undefined : (await deps.rag.split(content, document.filename)).total;
}
