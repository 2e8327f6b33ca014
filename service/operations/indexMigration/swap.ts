// Moving the alias: what every move runs (migrate, use, rollback) once the target holds most of what it must —
// catch-up passes, the counts checked, ONE `_aliases` call, the catch-up after it — and the operator's moves:
// `kbqa index use INDEX` / `rollback` (back to a kept index) and `kbqa index drop-old` (the indices left behind).
import { IndexMigrationError } from '../../errors.ts';
import { MIGRATE_COMMAND, type ChunkIndexMeta, type SearchIndex } from '../../search/index.ts';
import type { Store } from '../../store/index.ts';
import { catchUpAfterSwap, finishCatchUp, heldBuild, stateAfterCatchUp } from './catchUp.ts';
import { difference, fill, fillable, unrebuildableError, type Difference } from './fill.ts';
import {
  finishCommand,
  MAX_PASSES,
  sameChunks,
  unitKey,
  type FillCounts,
  type FillPlan,
  type IndexMigrationDeps,
  type MigrateOptions,
} from './plan.ts';

/**
 * What every move of the alias runs (migrate, use, rollback), once the target holds most of what it must: catch-up
 * passes until one finds nothing to do, the counts checked, ONE _aliases call, then the catch-up after the swap.
 * `filling`: the target has fill settings (no refresh, no replicas) to restore first.
 */
export async function fillUntilFullThenSwap(
  deps: IndexMigrationDeps,
  plan: FillPlan,
  from: { indices: string[]; index: string | null; meta: ChunkIndexMeta | null },
  counts: FillCounts,
  options: MigrateOptions & { say: (line: string) => void },
  filling: boolean,
): Promise<{
  check: Awaited<ReturnType<typeof checkedCounts>>;
  after: Awaited<ReturnType<typeof catchUpAfterSwap>>;
  passes: number;
}> {
  const admin = deps.search.indices;
  const { target } = plan;
  const { say } = options;
  // Catch up with what ingestion did meanwhile, until a pass finds nothing to do.
  let passes = 0;
  for (;;) {
    const found = fillable(await difference(deps, plan), counts);
    const work = found.missing.length + found.stale.length;
    if (work === 0) break;
    if (++passes > MAX_PASSES) {
      throw new IndexMigrationError(
        `documents keep changing faster than ${target} catches up (${work} versions left after ${MAX_PASSES} passes): run ${MIGRATE_COMMAND} again at a quieter time`,
      );
    }
    say(`catch-up pass ${passes}: ${found.missing.length} version(s) to fill, ${found.stale.length} to remove`);
    await fill(deps, plan, found, counts, { onUnit: () => {}, done: () => 0 });
  }
  if (counts.unrebuildable.size > 0) throw unrebuildableError(counts);

  if (filling) {
    // Full: the template's refresh interval and the configured replicas back, then the counts.
    await admin.finishFilling(target);
    const health = await admin.waitForHealth(target);
    say(`${target} is ${health}; checking counts`);
  }
  const check = await checkedCounts(deps, plan, from.index, counts);
  passes += check.passes;

  await admin.swapAlias(from.indices, target);
  deps.search.forgetServingIndex();
  const swappedAt = new Date().toISOString();
  const targetMeta = (await admin.meta(target)) as ChunkIndexMeta;
  const migration = { ...targetMeta.migration, source: from.index, swapped_at: swappedAt };
  await admin.setMeta(target, { ...targetMeta, migration: { ...migration, state: 'swapped' } });
  if (from.index && from.meta)
    await admin.setMeta(from.index, { ...from.meta, migration: { ...from.meta.migration, state: 'kept' } });
  say(
    `alias ${admin.alias}: ${from.indices.join(', ') || '(none)'} → ${target} (one _aliases call)${from.index ? `; ${from.index} is kept until kbqa index drop-old` : ''}`,
  );
  await options.afterSwap?.();

  const after = await catchUpAfterSwap(deps, plan, options, say, counts);
  await admin.setMeta(target, {
    ...targetMeta,
    migration: { ...migration, state: stateAfterCatchUp(after), finished_at: new Date().toISOString() },
  });
  return { check, after, passes };
}

/**
 * The check before the swap, after a refresh: the target holds every live version of the store, complete, and
 * nothing else. Then two counts read independently of that diff: per KB, the distinct documents OpenSearch counts in
 * the target equal the store's live documents (plus at most the new ones in flight); and for a copy, every version
 * both indices hold has as many chunks in each (a version the old index lacks was rebuilt, counted apart). A
 * document changing between the reads is caught up and checked again (a few passes at most).
 */
async function checkedCounts(
  deps: IndexMigrationDeps,
  plan: FillPlan,
  from: string | null,
  counts: FillCounts,
): Promise<{ documents: number; chunks: { target: number; source: number | null; rebuilt: number }; passes: number }> {
  const admin = deps.search.indices;
  let mismatch = '';
  for (let pass = 0; pass < MAX_PASSES; pass += 1) {
    const found = fillable(await difference(deps, plan), counts);
    if (found.missing.length + found.stale.length > 0) {
      await fill(deps, plan, found, counts, { onUnit: () => {}, done: () => 0 });
      // A version that lost its original meanwhile: named now, not as count mismatches in every later check.
      if (counts.unrebuildable.size > 0) throw unrebuildableError(counts);
      continue;
    }
    const documents = await documentCounts(deps, plan, found);
    if (documents.mismatch) {
      mismatch = documents.mismatch;
      continue;
    }
    const chunks = await chunkCounts(admin, plan, from, found);
    if (chunks.mismatch) {
      mismatch = chunks.mismatch;
      continue;
    }
    return { documents: documents.live, chunks: chunks.totals, passes: pass };
  }
  throw new IndexMigrationError(
    mismatch
      ? `${mismatch}, after ${MAX_PASSES} checks: the alias was not moved; run ${MIGRATE_COMMAND} again`
      : `documents keep changing faster than ${plan.target} catches up: the alias was not moved; run ${MIGRATE_COMMAND} again`,
  );
}

/**
 * Per KB, the distinct documents OpenSearch counts in the target against the store's live documents (plus at most
 * the new ones in flight): how many live documents there are, or what differs.
 */
async function documentCounts(
  deps: IndexMigrationDeps,
  plan: FillPlan,
  found: Difference,
): Promise<{ live: number; mismatch: string | null }> {
  const expected = new Map<string, number>();
  const liveDocuments = new Set<string>();
  for (const unit of found.units) {
    if (liveDocuments.has(unit.document_id)) continue;
    liveDocuments.add(unit.document_id);
    expected.set(unit.knowledge_base_id, (expected.get(unit.knowledge_base_id) ?? 0) + 1);
  }
  const inFlight = new Map<string, number>();
  for (const job of await deps.store.listJobs(plan.scope)) {
    if (!liveDocuments.has(job._id))
      inFlight.set(job.knowledge_base_id, (inFlight.get(job.knowledge_base_id) ?? 0) + 1);
  }
  const held = await deps.search.indices.documentsPerKnowledgeBase(plan.target, plan.scope);
  const wrong = [...new Set([...expected.keys(), ...held.keys()])].filter((kb) => {
    const documents = held.get(kb) ?? 0;
    return documents < (expected.get(kb) ?? 0) || documents > (expected.get(kb) ?? 0) + (inFlight.get(kb) ?? 0);
  });
  if (wrong.length === 0) return { live: liveDocuments.size, mismatch: null };
  return {
    live: liveDocuments.size,
    mismatch: `${plan.target} holds ${wrong
      .map((kb) => `${held.get(kb) ?? 0} documents of KB ${kb}, the store ${expected.get(kb) ?? 0}`)
      .slice(0, 3)
      .join('; ')}`,
  };
}

/**
 * The chunks of the target's live versions; for a copy, also the source's, and every version both indices hold
 * must have as many chunks in each (a version the old index lacks was rebuilt, counted apart).
 */
async function chunkCounts(
  admin: SearchIndex['indices'],
  plan: FillPlan,
  from: string | null,
  found: Difference,
): Promise<{ totals: { target: number; source: number | null; rebuilt: number }; mismatch: string | null }> {
  let targetChunks = 0;
  let rebuiltChunks = 0;
  const sourceGroups =
    plan.source && from
      ? new Map(
          (await admin.versionGroups(from, plan.scope)).map((group) => [
            unitKey(group.document_id, group.document_version),
            group,
          ]),
        )
      : null;
  let sourceChunks: number | null = sourceGroups ? 0 : null;
  const differing: string[] = [];
  for (const unit of found.units) {
    const key = unitKey(unit.document_id, unit.version);
    const chunks = found.targetGroups.get(key)?.chunks ?? 0;
    targetChunks += chunks;
    if (!sourceGroups) continue;
    const source = sourceGroups.get(key);
    if (!source) {
      rebuiltChunks += chunks;
      continue;
    }
    sourceChunks! += source.chunks;
    if (source.chunks !== chunks) differing.push(`${key} ${chunks} vs ${source.chunks}`);
  }
  return {
    totals: { target: targetChunks, source: sourceChunks, rebuilt: rebuiltChunks },
    mismatch:
      differing.length > 0
        ? `${differing.length} version(s) have other chunk counts in ${plan.target} than in ${from} (${differing.slice(0, 3).join(', ')})`
        : null,
  };
}

/** The indices of this alias's family the alias does not point to (what drop-old would delete). */
export async function oldIndices(
  search: SearchIndex,
): Promise<Array<{ index: string; state: string | null; chunks: number }>> {
  const family = await search.indices.family();
  const old = family.filter((entry) => !entry.aliased);
  const stats = await search.indices.stats(old.map((entry) => entry.index));
  return old.map((entry) => ({
    index: entry.index,
    state: entry.meta?.migration.state ?? null,
    chunks: stats.find((row) => row.index === entry.index)?.chunks ?? 0,
  }));
}

/**
 * Deletes old indices of the family, refusing while one could still be written to: the live index's catch-up after
 * its swap is unfinished (state `swapped`), or (given the store) an ingestion that began before the swap still
 * builds its version (it may write the old index until it ends). A write to an index dropped all the same would
 * create it again from the template: the ingestion finds it and deletes it (jobs/buildVersion.ts, removeRecreatedIndex).
 */
export async function dropOldIndices(
  search: SearchIndex,
  indices: string[],
  store?: Pick<Store, 'listJobs'>,
): Promise<string[]> {
  const aliasedIndices = await search.indices.aliasIndices();
  const aliased = new Set(aliasedIndices.map((entry) => entry.index));
  for (const entry of aliasedIndices) {
    const meta = await search.indices.meta(entry.index);
    if (meta?.migration.state === 'swapped') {
      throw new IndexMigrationError(
        `${entry.index} is live but its catch-up after the swap is unfinished: run ${finishCommand(entry.index)} to finish it first; nothing dropped`,
      );
    }
    const swappedAt = meta?.migration.swapped_at ? Date.parse(meta.migration.swapped_at) : null;
    if (store && swappedAt !== null) {
      // Not a build whose holder died long ago (catchUpAfterSwap's rule): whoever takes it resolves the alias afresh.
      const now = Date.now();
      const building = (await store.listJobs()).filter(
        (job) => heldBuild(job, now) && new Date(job.created_at).getTime() <= swappedAt,
      );
      if (building.length > 0) {
        throw new IndexMigrationError(
          `${building.length} ingestion(s) that began before the alias moved to ${entry.index} are still running (they may write an old index): try again once they end; nothing dropped`,
        );
      }
    }
  }
  const dropped: string[] = [];
  for (const index of indices) {
    // Checked again just before: the alias may have moved since the list was shown.
    if (aliased.has(index))
      throw new IndexMigrationError(`${index} is behind the alias ${search.indices.alias} now: not dropped`);
    await search.indices.deleteIndex(index);
    dropped.push(index);
  }
  return dropped;
}

export interface UseOutcome {
  /** 'moved': the alias moved to `to`; 'caught-up': it pointed there already, and its unfinished catch-up was finished. */
  outcome: 'moved' | 'caught-up';
  alias: string;
  from: string | null;
  to: string;
  copied: number;
  rebuilt: number;
  removed: number;
  left_in_flight: number;
  chunk_counts_updated: number;
  /** Versions without a stored original (see MigrationOutcome): `to` stays `swapped`. */
  unrebuildable: string[];
}

/**
 * Points the alias back to a kept index (default: the one the live index was migrated from) in one `_aliases`
 * call, then catches it up with what was ingested, replaced or deleted since it stopped being live. Naming the live
 * index when its catch-up after the swap is unfinished (`swapped`) finishes that catch-up.
 */
export async function useIndex(
  deps: IndexMigrationDeps,
  requested: string | null,
  options: MigrateOptions = {},
): Promise<UseOutcome> {
  const admin = deps.search.indices;
  const say = options.say ?? (() => {});
  const family = await admin.family();
  const live = family.filter((entry) => entry.aliased);
  if (live.length > 1)
    throw new IndexMigrationError(`the alias ${admin.alias} points to ${live.length} indices: name the one to use`);
  const current = live[0] ?? null;
  const targetName = requested ?? current?.meta?.migration.source ?? null;
  if (!targetName)
    throw new IndexMigrationError(
      `${current?.index ?? admin.alias} records no index it was migrated from: name one (kbqa index use INDEX; kbqa index status lists them)`,
    );
  const target = family.find((entry) => entry.index === targetName);
  if (!target)
    throw new IndexMigrationError(
      `${targetName} is not an index of the alias ${admin.alias} (kbqa index status lists them)`,
    );
  if (target.aliased) {
    if (!target.meta || target.meta.migration.state !== 'swapped')
      throw new IndexMigrationError(`the alias ${admin.alias} already points to ${targetName}`);
    const { result } = await finishCatchUp(deps, targetName, target.meta, options, say);
    const { copied, rebuilt, removed, left_in_flight, chunk_counts_updated, unrebuildable } = result;
    return {
      outcome: 'caught-up',
      alias: admin.alias,
      from: target.meta.migration.source,
      to: targetName,
      copied,
      rebuilt,
      removed,
      left_in_flight,
      chunk_counts_updated,
      unrebuildable,
    };
  }
  if (target.meta?.migration.state === 'filling')
    throw new IndexMigrationError(
      `${targetName} is a migration's unfinished target: run ${MIGRATE_COMMAND} to finish it, or drop it`,
    );
  if (!target.meta) throw new IndexMigrationError(`${targetName} records nothing of how it was built: not used`);
  const embedder = { modelName: target.meta.embedder.name, dimensions: target.meta.embedder.dimensions };
  const plan: FillPlan = {
    target: targetName,
    source:
      current && sameChunks(current.meta, { embedder: embedder.modelName, chunking: target.meta.chunking })
        ? current.index
        : null,
    embedder,
    scope: options.knowledgeBaseIds,
    splitTotals: new Map(),
  };
  // migrateIndex's sequence: caught up before the swap (what was ingested, replaced or deleted since it stopped
  // being live), counts checked, one _aliases call, the catch-up after it.
  await admin.ensureServiceFields(targetName);
  say(`catching ${targetName} up with the store before the alias moves`);
  const counts: FillCounts = { copied: 0, rebuilt: 0, removed: 0, unrebuildable: new Set() };
  const from = current
    ? { indices: live.map((entry) => entry.index), index: current.index, meta: current.meta }
    : { indices: [], index: null, meta: null };
  const { after } = await fillUntilFullThenSwap(deps, plan, from, counts, { ...options, say }, false);
  return {
    outcome: 'moved',
    alias: admin.alias,
    from: current?.index ?? null,
    to: targetName,
    copied: counts.copied + after.copied,
    rebuilt: counts.rebuilt + after.rebuilt,
    removed: counts.removed + after.removed,
    left_in_flight: after.left_in_flight,
    chunk_counts_updated: after.chunk_counts_updated,
    unrebuildable: after.unrebuildable,
  };
}
