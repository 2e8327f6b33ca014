// `kbqa index status | migrate | drop-old | rollback`: zero-downtime chunk index migrations (Kibana/Backstage style:
// a versioned index behind an alias, filled beside the live one, one atomic alias swap).
//
// The unit of work is a document version (document id, live version). A migration builds the target index (the
// current template version × the configured embedder) beside the live one, fills it — by `_reindex` from the live
// index when only the mapping or analysis changed, else by re-chunking and re-embedding the stored originals — and
// catches up with what ingestion changed meanwhile, by diffing the store's live documents against the target's chunk
// groups. That diff is also how a crashed migration resumes: run it again. Then the counts are checked, the alias
// swapped in one `_aliases` call, and, once every process has stopped writing to the old index (the serving-index
// cache, ingestions in flight), one more catch-up pass. The old index is kept until `kbqa index drop-old`.
//
// This file is `kbqa index migrate`; its phases: status.ts, fill.ts, swap.ts, catchUp.ts (plan.ts: what they share).
import { IndexMigrationError } from '../../errors.ts';
import { INDEX_DRIFT_KINDS, MIGRATE_COMMAND } from '../../search/index.ts';
import { configuredChunking } from '../../search/chunkIndices.ts';
import { finishCatchUp } from './catchUp.ts';
import { difference, fill, FillStopped, unrebuildableError } from './fill.ts';
import {
  sameChunks,
  type Embedder,
  type FillCounts,
  type FillPlan,
  type IndexMigrationDeps,
  type MigrateOptions,
  type MigrationOutcome,
} from './plan.ts';
import { fillUntilFullThenSwap } from './swap.ts';

export async function migrateIndex(deps: IndexMigrationDeps, options: MigrateOptions = {}): Promise<MigrationOutcome> {
  const admin = deps.search.indices;
  const say = options.say ?? (() => {});
  const embedder: Embedder = deps.rag.embedder;
  const assets = admin.assets();
  const aliased = await admin.aliasIndices();
  if (aliased.length > 1) {
    throw new IndexMigrationError(
      `the alias ${admin.alias} points to ${aliased.length} indices (${aliased.map((entry) => entry.index).join(', ')}): point it to one (kbqa index use INDEX) first`,
    );
  }
  if (aliased.length === 0)
    throw new IndexMigrationError(
      `the alias ${admin.alias} does not exist: start the API once (it creates the current index)`,
    );
  const live = aliased[0].index;
  const liveMeta = (await admin.meta(live)) ?? null;
  const target = admin.indexNameFor(assets.version, embedder.modelName);
  const chunking = configuredChunking(deps.config.chunking);
  const base = {
    alias: admin.alias,
    from: live,
    to: target,
    copied: 0,
    rebuilt: 0,
    removed: 0,
    catch_up_passes: 0,
    left_in_flight: 0,
    chunk_counts_updated: 0,
    unrebuildable: [],
  };

  if (target === live) {
    // A migration that swapped but did not finish its catch-up (a crash, ingestions still running): finish it.
    if (liveMeta && liveMeta.migration.state !== 'live' && liveMeta.migration.state !== 'kept') {
      const { plan, result } = await finishCatchUp(deps, live, liveMeta, options, say);
      const documents = await difference(deps, { ...plan, source: null });
      return {
        ...base,
        ...result,
        outcome: 'caught-up',
        from: liveMeta.migration.source,
        fill: plan.source ? 'reindex' : 'rebuild',
        documents: new Set([...documents.targetGroups.values()].map((group) => group.document_id)).size,
        chunks: { target: await admin.countChunks(live), source: null },
      };
    }
    const drift = (await admin.drift(live, embedder)).filter((entry) => INDEX_DRIFT_KINDS.has(entry.kind));
    if (drift.length > 0) {
      // Only the configuration's chunking differing is no edit of the file: the new chunks still need an index of
      // their own, and index names carry the template version, not the chunking.
      const cause = drift.every((entry) => entry.kind === 'chunking')
        ? `the configured chunking differs from the one ${live} was cut with (${drift.map((entry) => entry.detail).join('; ')})`
        : `${live} is built from ${assets.templateFile}, which was edited in place since (${drift.map((entry) => entry.kind).join(', ')})`;
      throw new IndexMigrationError(
        `${cause}: a live index's analysis and chunks cannot change; copy the file to the next version (kbqa-chunks.v${assets.version + 1}.json) and run ${MIGRATE_COMMAND}`,
      );
    }
    await installAssets(deps);
    say(`${live} is the current template version (v${assets.version}) for ${embedder.modelName}: nothing to migrate`);
    return {
      ...base,
      outcome: 'up-to-date',
      fill: null,
      documents: 0,
      chunks: { target: await admin.countChunks(live), source: null },
    };
  }

  // The files' pipelines and template first: the target's default pipeline must exist before a chunk reaches it.
  await installAssets(deps);
  const plan: FillPlan = {
    target,
    source: sameChunks(liveMeta, { embedder: embedder.modelName, chunking }) ? live : null,
    embedder,
    scope: options.knowledgeBaseIds,
    splitTotals: new Map(),
  };
  const fillKind = plan.source ? 'reindex' : 'rebuild';
  let existing = await admin.meta(target);
  const startedAt = new Date().toISOString();
  if (existing === null) {
    // An index of the target's name that records nothing of how it was built (made by hand, or by a stray write
    // from its template): neither trusted nor deleted here.
    throw new IndexMigrationError(
      `${target} exists but records nothing of how it was built (no _meta: made by hand, or by a write its template let create it): look at it, delete it (DELETE /${target}), then run ${MIGRATE_COMMAND} again`,
    );
  }
  if (existing !== undefined) {
    // An interrupted migration (or an index rolled back from): what it holds is diffed, not trusted, but only if it
    // was built from what the files and the configuration say now.
    const differs = (await admin.indexDrift(target, embedder)).filter((entry) => INDEX_DRIFT_KINDS.has(entry.kind));
    if (differs.length > 0 && existing.migration.state === 'filling') {
      say(
        `${target} was being filled from another template or configuration (${differs.map((entry) => entry.kind).join(', ')}): deleting it and starting again`,
      );
      await admin.deleteIndex(target);
      existing = undefined;
    } else if (differs.length > 0) {
      throw new IndexMigrationError(
        `${target} (${existing.migration.state}) differs from ${assets.templateFile} as configured (${differs.map((entry) => entry.kind).join(', ')}): the file was edited in place; ` +
          `copy it to the next version (kbqa-chunks.v${assets.version + 1}.json) and run ${MIGRATE_COMMAND}`,
      );
    }
  }
  if (existing === undefined) {
    await admin.createFillingIndex(target, embedder, { state: 'filling', source: live, started_at: startedAt });
    say(
      `created ${target} beside ${live}; filling it by ${fillKind === 'reindex' ? '_reindex from the live index' : 're-chunking and re-embedding the stored originals'}`,
    );
  } else {
    await admin.setMeta(target, {
      ...existing,
      migration: { state: 'filling', source: live, started_at: existing.migration.started_at ?? startedAt },
    });
    await admin.setIndexFilling(target);
    say(`resuming ${target} (it exists): filling what it lacks by ${fillKind}`);
  }

  const counts: FillCounts = { copied: 0, rebuilt: 0, removed: 0, unrebuildable: new Set() };
  const first = await difference(deps, plan);
  let done = 0;
  const total = first.missing.length;
  options.onProgress?.(0, total);
  try {
    await fill(deps, plan, first, counts, {
      onUnit: () => {
        done += 1;
        options.onProgress?.(done, total);
      },
      stopAfter: options.stopAfterVersions,
      done: () => done,
    });
  } catch (error) {
    if (!(error instanceof FillStopped)) throw error;
    say(`stopped after ${done} of ${total} document versions; run ${MIGRATE_COMMAND} again to continue`);
    return {
      ...base,
      copied: counts.copied,
      rebuilt: counts.rebuilt,
      removed: counts.removed,
      outcome: 'stopped',
      fill: fillKind,
      documents: 0,
      chunks: { target: await admin.countChunks(target), source: null },
    };
  }
  // Named at once: no catch-up pass can rebuild them.
  if (counts.unrebuildable.size > 0) throw unrebuildableError(counts);

  const { check, after, passes } = await fillUntilFullThenSwap(
    deps,
    plan,
    { indices: [live], index: live, meta: liveMeta },
    counts,
    { ...options, say },
    true,
  );
  return {
    ...base,
    outcome: 'migrated',
    fill: fillKind,
    documents: check.documents,
    chunks: check.chunks,
    copied: counts.copied + after.copied,
    rebuilt: counts.rebuilt + after.rebuilt,
    removed: counts.removed + after.removed,
    catch_up_passes: passes + after.catch_up_passes,
    left_in_flight: after.left_in_flight,
    chunk_counts_updated: after.chunk_counts_updated,
    unrebuildable: after.unrebuildable,
  };
}

/** The assets' pipelines and template as the files say (start-up's PUTs, not its index creation). */
async function installAssets(deps: IndexMigrationDeps): Promise<void> {
  await deps.search.indices.installAssets();
}
