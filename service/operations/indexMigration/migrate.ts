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
import type { Config } from '../../config.ts';
import { IndexMigrationError } from '../../errors.ts';
import { createPdfExtractor } from '../../extraction/pdf.ts';
import { splitPages } from '../../extraction/pdfPages.ts';
import type { Rag } from '../../rag/index.ts';
import { INDEX_DRIFT_KINDS, MIGRATE_COMMAND, resolvingCommand, type ChunkIndexMeta, type Drift, type SearchIndex } from '../../search/index.ts';
import { configuredChunking, sameChunking, sameSplit } from '../../search/chunkIndices.ts';
import type { ChunkGroup } from '../../search/chunks.ts';
import { chunkMetadata } from '../../search/metadataFilter.ts';
import { SERVING_INDEX_TTL_MS } from '../../search/servingIndex.ts';
import { metadataObject, type Store } from '../../store/index.ts';
import { chunkDocuments } from '../../jobs/records.ts';


export interface IndexMigrationDeps {
  store: Store;
  search: SearchIndex;
  /** Splits and embeds for a re-embedding fill (the configured embedder and chunking). */
  rag: Pick<Rag, 'embedder' | 'split' | 'embedSegments'>;
  config: Pick<Config, 'chunking' | 'pdf' | 'limits'>;
}

type Embedder = { modelName: string; dimensions: number };

interface Unit {
  document_id: string;
  knowledge_base_id: string;
  version: number;
}

const unitKey = (documentId: string, version: number) => `${documentId}:${version}`;

// ---------------------------------------------------------------------------------------------------------------
// status

export interface IndexStatusEntry {
  index: string;
  /** The alias points to it. */
  live: boolean;
  template_version: number | null;
  embedder: string | null;
  dimensions: number | null;
  chunking: ChunkIndexMeta['chunking'];
  migration_state: ChunkIndexMeta['migration']['state'] | null;
  created_at: string | null;
  documents: number;
  chunks: number;
  segments: number;
  store_bytes: number;
  health: string;
}

export interface IndexStatus {
  alias: string;
  assets_dir: string;
  template: { file: string; version: number };
  configured_embedder: Embedder;
  live: string | null;
  /** What `kbqa index migrate` would build (or the live index, when it is that already). */
  target: string;
  indices: IndexStatusEntry[];
  pipelines: { ingest: string | null; search: string[] };
  drift: Drift[];
  /** The command that resolves the drift; null when there is none. */
  command: string | null;
}

export async function indexStatus(deps: { search: SearchIndex; embedder: Embedder }): Promise<IndexStatus> {
  const admin = deps.search.indices;
  const assets = admin.assets();
  const family = await admin.family();
  const stats = await admin.stats(family.map((entry) => entry.index));
  const live = family.find((entry) => entry.aliased)?.index ?? null;
  const drift = await admin.drift(live, deps.embedder);
  const target = admin.indexNameFor(assets.version, deps.embedder.modelName);
  return {
    alias: admin.alias,
    assets_dir: assets.dir,
    template: { file: assets.templateFile, version: assets.version },
    configured_embedder: { modelName: deps.embedder.modelName, dimensions: deps.embedder.dimensions },
    live,
    target,
    indices: family.map((entry) => {
      const found = stats.find((row) => row.index === entry.index);
      return {
        index: entry.index,
        live: entry.aliased,
        template_version: entry.meta?.template_version ?? null,
        embedder: entry.meta?.embedder.name ?? null,
        dimensions: entry.meta?.embedder.dimensions ?? null,
        chunking: entry.meta?.chunking ?? null,
        migration_state: entry.meta?.migration.state ?? null,
        created_at: entry.meta?.created_at ?? null,
        documents: found?.documents ?? 0,
        chunks: found?.chunks ?? 0,
        segments: found?.segments ?? 0,
        store_bytes: found?.store_bytes ?? 0,
        health: found?.health ?? 'missing',
      };
    }),
    pipelines: await admin.pipelinesInForce(live),
    drift,
    // The same command /readyz names (search/indexAdmin.ts resolvingCommand).
    command: resolvingCommand(drift, live, target, assets),
  };
}

function bytes(count: number): string {
  if (count < 1024) return `${count} B`;
  if (count < 1024 ** 2) return `${(count / 1024).toFixed(1)} KiB`;
  if (count < 1024 ** 3) return `${(count / 1024 ** 2).toFixed(1)} MiB`;
  return `${(count / 1024 ** 3).toFixed(2)} GiB`;
}

export function formatIndexStatus(status: IndexStatus): string {
  const lines = [
    `alias ${status.alias} → ${status.live ?? '(none: the API creates the index when it starts)'}`,
    `current template: ${status.template.file} (v${status.template.version}) in ${status.assets_dir}; configured embedder ${status.configured_embedder.modelName} (${status.configured_embedder.dimensions})`,
    '',
    'indices of this alias:',
  ];
  for (const entry of status.indices) {
    lines.push(
      `  ${entry.live ? '*' : ' '} ${entry.index}  v${entry.template_version ?? '?'}  ${entry.embedder ?? '?'}  ` +
        `${entry.documents} documents, ${entry.chunks} chunks, ${entry.segments} segments, ${bytes(entry.store_bytes)}  ${entry.health}  ${entry.migration_state ?? ''}`.trimEnd(),
    );
  }
  if (status.indices.length === 0) lines.push('  (none)');
  lines.push('', `pipelines in force: ingest ${status.pipelines.ingest ?? '(none)'}; search ${status.pipelines.search.join(', ')}`, '');
  if (status.drift.length === 0) {
    lines.push('no drift: the cluster runs what the files say');
  } else {
    lines.push('drift:');
    const byAsset = new Map<string, Drift[]>();
    for (const entry of status.drift) byAsset.set(entry.asset, [...(byAsset.get(entry.asset) ?? []), entry]);
    for (const [asset, entries] of byAsset) {
      lines.push(`  ${asset}:`);
      for (const entry of entries) lines.push(`    ${entry.kind}: ${entry.detail}`);
    }
    lines.push(
      '',
      status.live === status.target
        ? `to resolve: ${status.command}`
        : `to resolve: ${status.command} (builds ${status.target} beside ${status.live ?? 'the live index'}, fills it, swaps the alias once it is full)`,
    );
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// the diff that drives fills, catch-ups and resumes

/** The store's live documents: a version served (live_version) in a KB whose record exists (soft-deleted too: restorable). */
async function liveUnits(store: Store, scope: string[] | undefined): Promise<Unit[]> {
  const documents = await store.listDocumentSummaries(scope);
  const knowledgeBases = new Set(await store.listAllKnowledgeBaseIds());
  return documents
    .filter((document) => document.live_version !== null && knowledgeBases.has(document.knowledge_base_id))
    .map((document) => ({ document_id: document._id, knowledge_base_id: document.knowledge_base_id, version: document.live_version as number }));
}

interface Difference {
  units: Unit[];
  /** Live versions the target lacks, or holds incompletely. */
  missing: Unit[];
  /** Of those, the ones with some chunks in the target already (removed before being filled again). */
  incomplete: Unit[];
  /** Groups in the target of no live version (deleted or superseded documents), none of them in flight. */
  stale: Array<{ document_id: string; version: number }>;
  targetGroups: Map<string, ChunkGroup>;
}

/**
 * The store's live versions against the target's chunk groups. Read store first, index last (the reverse of the
 * order ingestion writes), as `kbqa doctor` does: what is written meanwhile is seen where it is harmless. A group is
 * complete when it has as many chunks as the source index's group (a `_reindex` copy), else when it has chunk 0
 * (a rebuild writes it last).
 */
async function difference(deps: IndexMigrationDeps, plan: Pick<FillPlan, 'target' | 'source' | 'scope'>): Promise<Difference> {
  const admin = deps.search.indices;
  const { target, source, scope } = plan;
  const units = await liveUnits(deps.store, scope);
  const jobs = await deps.store.listJobs(scope);
  await admin.refresh(target);
  if (source) await admin.refresh(source);
  const targetGroups = new Map((await admin.versionGroups(target, scope)).map((group) => [unitKey(group.document_id, group.document_version), group]));
  const sourceGroups = source ? new Map((await admin.versionGroups(source, scope)).map((group) => [unitKey(group.document_id, group.document_version), group])) : null;
  const missing: Unit[] = [];
  const incomplete: Unit[] = [];
  const live = new Set<string>();
  for (const unit of units) {
    const key = unitKey(unit.document_id, unit.version);
    live.add(key);
    const group = targetGroups.get(key);
    const expected = sourceGroups?.get(key);
    const complete = group !== undefined && (expected ? group.chunks === expected.chunks : group.has_first_chunk);
    if (complete) continue;
    missing.push(unit);
    if (group) incomplete.push(unit);
  }
  const jobsById = new Map(jobs.map((job) => [job._id, job]));
  const stale: Difference['stale'] = [];
  for (const [key, group] of targetGroups) {
    if (live.has(key)) continue;
    // Never a version still in flight: one a job builds or retires (doctor.ts's rule).
    const job = jobsById.get(group.document_id);
    if (job && (job.version === group.document_version || job.replaces === group.document_version)) continue;
    stale.push({ document_id: group.document_id, version: group.document_version });
  }
  return { units, missing, incomplete, stale, targetGroups };
}

// ---------------------------------------------------------------------------------------------------------------
// filling

export interface FillPlan {
  target: string;
  /** Where `_reindex` copies from; null: every version is rebuilt from the stored originals. */
  source: string | null;
  embedder: Embedder;
  /** Only these KBs' documents (tests sharing one database); default every document. */
  scope?: string[];
  /**
   * What this run's rebuilds found, per version (unitKey): the splitter's total (a record's total_chunks), written to
   * the records with the chunk counts once the target is served (recordChunkCounts).
   */
  splitTotals: Map<string, number>;
}

export interface FillCounts {
  copied: number;
  rebuilt: number;
  removed: number;
  /**
   * Versions (unitKey) that could not be rebuilt (no stored original): kept out of every later pass, named once;
   * the migration stops before the swap.
   */
  unrebuildable: Set<string>;
}

/** Document versions copied by one `_reindex`. */
const COPY_BATCH = 100;
/** Versions rebuilt at once (each waits on the model pool). */
const REBUILD_CONCURRENCY = 4;
/** Segments embedded per model call, as ingestion does. */
const SEGMENTS_PER_STEP = 32;

class FillStopped extends Error {}

/** Fills the target with these versions; stops (FillStopped) after `stopAfter` of them when given. */
async function fill(
  deps: IndexMigrationDeps,
  plan: FillPlan,
  difference: Pick<Difference, 'missing' | 'incomplete' | 'stale'>,
  counts: FillCounts,
  progress: { onUnit: () => void; stopAfter?: number; done: () => number },
): Promise<void> {
  const admin = deps.search.indices;
  if (difference.incomplete.length > 0) await admin.deleteVersions(plan.target, difference.incomplete.map(toVersion));
  if (difference.stale.length > 0) counts.removed += await admin.deleteVersions(plan.target, difference.stale);
  const stopHere = () => progress.stopAfter !== undefined && progress.done() >= progress.stopAfter;
  let toRebuild = difference.missing;
  if (plan.source) {
    const sourceGroups = new Set((await admin.versionGroups(plan.source, plan.scope)).map((group) => unitKey(group.document_id, group.document_version)));
    const inSource = difference.missing.filter((unit) => sourceGroups.has(unitKey(unit.document_id, unit.version)));
    // A version the old index lacks (an ingestion that has not reached it, a repair `kbqa doctor` would make) is rebuilt.
    toRebuild = difference.missing.filter((unit) => !sourceGroups.has(unitKey(unit.document_id, unit.version)));
    for (let start = 0; start < inSource.length; start += COPY_BATCH) {
      if (stopHere()) throw new FillStopped();
      const batch = inSource.slice(start, start + COPY_BATCH).slice(0, progress.stopAfter !== undefined ? progress.stopAfter - progress.done() : undefined);
      await admin.copyVersions(plan.source, plan.target, batch.map(toVersion));
      counts.copied += batch.length;
      for (let index = 0; index < batch.length; index += 1) progress.onUnit();
    }
  }
  const queue = [...toRebuild];
  const worker = async () => {
    for (let unit = queue.shift(); unit; unit = queue.shift()) {
      if (stopHere()) throw new FillStopped();
      const rebuilt = await rebuildVersion(deps, plan, unit);
      if (rebuilt === 'no-original') counts.unrebuildable.add(unitKey(unit.document_id, unit.version));
      else if (rebuilt === 'rebuilt') counts.rebuilt += 1;
      progress.onUnit();
    }
  };
  await Promise.all(Array.from({ length: REBUILD_CONCURRENCY }, worker));
}

const toVersion = (unit: Unit) => ({ document_id: unit.document_id, version: unit.version });

/**
 * One document version's chunks rebuilt from its stored original with the current splitter and the target's
 * embedder (ingestion's own steps: split, embed in steps, chunkDocuments), written to the target index itself,
 * chunk 0 last so that its presence says the version is complete.
 */
async function rebuildVersion(deps: IndexMigrationDeps, plan: FillPlan, unit: Unit): Promise<'rebuilt' | 'changed' | 'no-original'> {
  const { store, rag } = deps;
  const document = await store.findDocument(unit.document_id);
  // Replaced or deleted meanwhile: the next catch-up pass sees what it became.
  if (!document || document.live_version !== unit.version) return 'changed';
  let split;
  if (document.kind === 'pdf') {
    const bytes = document.file_id ? await store.readFile(document.file_id) : null;
    if (bytes === null) return 'no-original';
    const extractor = createPdfExtractor(deps.config.pdf);
    try {
      const { pages } = await extractor.extract(bytes, () => {});
      split = await splitPages(pages, (text) => rag.split(text, document.filename));
    } finally {
      await extractor.close();
    }
  } else {
    const content = await store.findDocumentContent(document._id);
    if (content === null) return 'no-original';
    split = await rag.split(content, document.filename);
  }
  const record = { ...document, chunkMetadata: chunkMetadata(metadataObject(document.metadata)) };
  const chunks = [];
  for (let start = 0; start < split.segments.length; start += SEGMENTS_PER_STEP) {
    const step = split.segments.slice(start, start + SEGMENTS_PER_STEP);
    // The target's embedder (the configured one for a migration; the kept index's for a rollback's catch-up).
    const embeddings = await rag.embedSegments(document.title, step, plan.embedder.modelName);
    chunks.push(...chunkDocuments(record, unit.version, step, embeddings, plan.embedder.modelName, start));
  }
  plan.splitTotals.set(unitKey(unit.document_id, unit.version), split.total);
  if (chunks.length === 0) return 'rebuilt';
  await deps.search.indices.writeChunks(plan.target, chunks.slice(1));
  await deps.search.indices.writeChunks(plan.target, chunks.slice(0, 1));
  return 'rebuilt';
}

// ---------------------------------------------------------------------------------------------------------------
// migrate

export interface MigrateOptions {
  /** Progress of the first fill (versions done of versions to do). */
  onProgress?: (done: number, total: number) => void;
  /** A line of what is happening (stderr in the CLI). */
  say?: (line: string) => void;
  /** Stops the fill after this many versions (as a crash would): a re-run resumes. For tests. */
  stopAfterVersions?: number;
  /** After the swap, how long before the catch-up pass: longer than the serving-index cache of every API process. */
  catchUpDelayMs?: number;
  /** How long the catch-up after the swap waits for ingestions running at the swap (they may write the old index). */
  inFlightWaitMs?: number;
  /** Called once the alias is swapped (tests: what a poller saw). */
  afterSwap?: () => void | Promise<void>;
  /**
   * Only these KBs' documents count (tests: each has its own alias but they share one database). A real deployment
   * has its own database: everything in it belongs to its alias.
   */
  knowledgeBaseIds?: string[];
}

export interface MigrationOutcome {
  outcome: 'up-to-date' | 'migrated' | 'caught-up' | 'stopped';
  alias: string;
  from: string | null;
  to: string;
  /** 'reindex': copied from the old index; 'rebuild': re-chunked and re-embedded from the stored originals. */
  fill: 'reindex' | 'rebuild' | null;
  /** Distinct documents and chunks in the target when the alias moved (and, for a copy, in the source). */
  documents: number;
  /**
   * Chunks of live versions in the target; for a copy, those the old index holds of the versions both hold (equal
   * to the target's of the same versions), and `rebuilt`, the target's of versions the old index lacked.
   */
  chunks: { target: number; source: number | null; rebuilt?: number };
  copied: number;
  rebuilt: number;
  removed: number;
  catch_up_passes: number;
  /** Ingestions still running when the catch-up after the swap gave up waiting: run the command again. */
  left_in_flight: number;
  /** Document records whose chunk counts were set to their version's in the new index (a re-chunking changes them). */
  chunk_counts_updated: number;
  /**
   * Versions (unitKey) the catch-up after the swap found no stored original for: the index stays `swapped` (drop-old
   * refuses) until `kbqa doctor --fix` and `kbqa index use <it>` finish it.
   */
  unrebuildable: string[];
}

/** Catch-up passes before the swap: each is shorter than the last while ingestion is moderate. */
const MAX_PASSES = 8;
/** A build whose lease lapsed longer ago than this has no holder left: the catch-up after a swap does not wait for it. */
const LAPSED_LEASE_GRACE_MS = 30_000;

/**
 * A build some process may still run: held, its lease current or lapsed lately (a holder renewing late under load
 * still writes). One lapsed for long has no holder left, and whoever takes the job resolves the alias afresh.
 */
function heldBuild(job: { phase: string; lease_owner: string | null; lease_until: number | null }, now: number): boolean {
  return job.phase === 'build' && job.lease_owner !== null && (job.lease_until ?? 0) >= now - LAPSED_LEASE_GRACE_MS;
}

/** The command that finishes a live index's catch-up after its swap (whatever template version it is). */
const finishCommand = (index: string) => `kbqa index use ${index}`;

/** `swapped` while the catch-up after the swap left something undone (ingestions still running, versions without an original). */
function stateAfterCatchUp(after: { left_in_flight: number; unrebuildable: string[] }): 'swapped' | 'live' {
  return after.left_in_flight > 0 || after.unrebuildable.length > 0 ? 'swapped' : 'live';
}

/** Whether two indices' chunks are interchangeable: the same embedder and the same chunking. */
function sameChunks(a: ChunkIndexMeta | null, b: { embedder: string; chunking: ChunkIndexMeta['chunking'] }): boolean {
  if (!a || a.embedder.name !== b.embedder || !a.chunking || !b.chunking) return false;
  return sameChunking(a.chunking, b.chunking);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function migrateIndex(deps: IndexMigrationDeps, options: MigrateOptions = {}): Promise<MigrationOutcome> {
  const admin = deps.search.indices;
  const say = options.say ?? (() => {});
  const embedder: Embedder = deps.rag.embedder;
  const assets = admin.assets();
  const aliased = await admin.aliasIndices();
  if (aliased.length > 1) {
    throw new IndexMigrationError(`the alias ${admin.alias} points to ${aliased.length} indices (${aliased.map((entry) => entry.index).join(', ')}): point it to one (kbqa index use INDEX) first`);
  }
  if (aliased.length === 0) throw new IndexMigrationError(`the alias ${admin.alias} does not exist: start the API once (it creates the current index)`);
  const live = aliased[0].index;
  const liveMeta = (await admin.meta(live)) ?? null;
  const target = admin.indexNameFor(assets.version, embedder.modelName);
  const chunking = configuredChunking(deps.config.chunking);
  const base = { alias: admin.alias, from: live, to: target, copied: 0, rebuilt: 0, removed: 0, catch_up_passes: 0, left_in_flight: 0, chunk_counts_updated: 0, unrebuildable: [] };

  if (target === live) {
    // A migration that swapped but did not finish its catch-up (a crash, ingestions still running): finish it.
    if (liveMeta && liveMeta.migration.state !== 'live' && liveMeta.migration.state !== 'kept') {
      const { plan, result } = await finishCatchUp(deps, live, liveMeta, options, say);
      const documents = await difference(deps, { ...plan, source: null });
      return { ...base, ...result, outcome: 'caught-up', from: liveMeta.migration.source, fill: plan.source ? 'reindex' : 'rebuild', documents: new Set([...documents.targetGroups.values()].map((group) => group.document_id)).size, chunks: { target: await admin.countChunks(live), source: null } };
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
    return { ...base, outcome: 'up-to-date', fill: null, documents: 0, chunks: { target: await admin.countChunks(live), source: null } };
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
    throw new IndexMigrationError(`${target} exists but records nothing of how it was built (no _meta: made by hand, or by a write its template let create it): look at it, delete it (DELETE /${target}), then run ${MIGRATE_COMMAND} again`);
  }
  if (existing !== undefined) {
    // An interrupted migration (or an index rolled back from): what it holds is diffed, not trusted, but only if it
    // was built from what the files and the configuration say now.
    const differs = (await admin.indexDrift(target, embedder)).filter((entry) => INDEX_DRIFT_KINDS.has(entry.kind));
    if (differs.length > 0 && existing.migration.state === 'filling') {
      say(`${target} was being filled from another template or configuration (${differs.map((entry) => entry.kind).join(', ')}): deleting it and starting again`);
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
    say(`created ${target} beside ${live}; filling it by ${fillKind === 'reindex' ? '_reindex from the live index' : 're-chunking and re-embedding the stored originals'}`);
  } else {
    await admin.setMeta(target, { ...existing, migration: { state: 'filling', source: live, started_at: existing.migration.started_at ?? startedAt } });
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

  const { check, after, passes } = await fillUntilFullThenSwap(deps, plan, { indices: [live], index: live, meta: liveMeta }, counts, { ...options, say }, true);
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

/**
 * The catch-up after a swap, finished for a live index left `swapped` (a crash, ingestions still running then,
 * versions without an original): what `kbqa index migrate` does for the current version, `kbqa index use` for any.
 * Its source is the index it was swapped from, when that is still there with interchangeable chunks; else the stored
 * originals.
 */
async function finishCatchUp(
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
    source: source && sameChunks(sourceMeta, { embedder: liveMeta.embedder.name, chunking: liveMeta.chunking }) ? source : null,
    embedder: { modelName: liveMeta.embedder.name, dimensions: liveMeta.embedder.dimensions },
    scope: options.knowledgeBaseIds,
    splitTotals: new Map(),
  };
  say(`${live} is live; catching up with what ${source ? `reached ${source} after the swap` : 'changed in the store since the swap'}`);
  const result = await catchUpAfterSwap(deps, plan, options, say);
  await admin.setMeta(live, { ...liveMeta, migration: { ...liveMeta.migration, state: stateAfterCatchUp(result), finished_at: new Date().toISOString() } });
  return { plan, result };
}

function unrebuildableError(counts: FillCounts): IndexMigrationError {
  const versions = [...counts.unrebuildable];
  return new IndexMigrationError(
    `${versions.length} document version(s) have no stored original to rebuild from (${versions.slice(0, 5).join(', ')}${versions.length > 5 ? ', …' : ''}): ` +
      `run kbqa doctor --fix, then ${MIGRATE_COMMAND} again; the alias was not moved`,
  );
}

/** The units of a difference that can be filled (those without a stored original are out, named once). */
function fillable(found: Difference, counts: FillCounts): Difference {
  const out = (unit: Unit) => !counts.unrebuildable.has(unitKey(unit.document_id, unit.version));
  return { ...found, missing: found.missing.filter(out), incomplete: found.incomplete.filter(out) };
}

/**
 * What every move of the alias runs (migrate, use, rollback), once the target holds most of what it must: catch-up
 * passes until one finds nothing to do, the counts checked, ONE _aliases call, then the catch-up after the swap.
 * `filling`: the target has fill settings (no refresh, no replicas) to restore first.
 */
async function fillUntilFullThenSwap(
  deps: IndexMigrationDeps,
  plan: FillPlan,
  from: { indices: string[]; index: string | null; meta: ChunkIndexMeta | null },
  counts: FillCounts,
  options: MigrateOptions & { say: (line: string) => void },
  filling: boolean,
): Promise<{ check: Awaited<ReturnType<typeof checkedCounts>>; after: Awaited<ReturnType<typeof catchUpAfterSwap>>; passes: number }> {
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
      throw new IndexMigrationError(`documents keep changing faster than ${target} catches up (${work} versions left after ${MAX_PASSES} passes): run ${MIGRATE_COMMAND} again at a quieter time`);
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
  if (from.index && from.meta) await admin.setMeta(from.index, { ...from.meta, migration: { ...from.meta.migration, state: 'kept' } });
  say(`alias ${admin.alias}: ${from.indices.join(', ') || '(none)'} → ${target} (one _aliases call)${from.index ? `; ${from.index} is kept until kbqa index drop-old` : ''}`);
  await options.afterSwap?.();

  const after = await catchUpAfterSwap(deps, plan, options, say, counts);
  await admin.setMeta(target, { ...targetMeta, migration: { ...migration, state: stateAfterCatchUp(after), finished_at: new Date().toISOString() } });
  return { check, after, passes };
}

/** The assets' pipelines and template as the files say (start-up's PUTs, not its index creation). */
async function installAssets(deps: IndexMigrationDeps): Promise<void> {
  await deps.search.indices.installAssets();
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
    const expected = new Map<string, number>();
    const liveDocuments = new Set<string>();
    for (const unit of found.units) {
      if (liveDocuments.has(unit.document_id)) continue;
      liveDocuments.add(unit.document_id);
      expected.set(unit.knowledge_base_id, (expected.get(unit.knowledge_base_id) ?? 0) + 1);
    }
    const inFlight = new Map<string, number>();
    for (const job of await deps.store.listJobs(plan.scope)) {
      if (!liveDocuments.has(job._id)) inFlight.set(job.knowledge_base_id, (inFlight.get(job.knowledge_base_id) ?? 0) + 1);
    }
    const held = await admin.documentsPerKnowledgeBase(plan.target, plan.scope);
    const wrong = [...new Set([...expected.keys(), ...held.keys()])].filter((kb) => {
      const documents = held.get(kb) ?? 0;
      return documents < (expected.get(kb) ?? 0) || documents > (expected.get(kb) ?? 0) + (inFlight.get(kb) ?? 0);
    });
    if (wrong.length > 0) {
      mismatch = `${plan.target} holds ${wrong.map((kb) => `${held.get(kb) ?? 0} documents of KB ${kb}, the store ${expected.get(kb) ?? 0}`).slice(0, 3).join('; ')}`;
      continue;
    }
    let targetChunks = 0;
    let rebuiltChunks = 0;
    const sourceGroups = plan.source && from ? new Map((await admin.versionGroups(from, plan.scope)).map((group) => [unitKey(group.document_id, group.document_version), group])) : null;
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
    if (differing.length > 0) {
      mismatch = `${differing.length} version(s) have other chunk counts in ${plan.target} than in ${from} (${differing.slice(0, 3).join(', ')})`;
      continue;
    }
    return { documents: liveDocuments.size, chunks: { target: targetChunks, source: sourceChunks, rebuilt: rebuiltChunks }, passes: pass };
  }
  throw new IndexMigrationError(
    mismatch
      ? `${mismatch}, after ${MAX_PASSES} checks: the alias was not moved; run ${MIGRATE_COMMAND} again`
      : `documents keep changing faster than ${plan.target} catches up: the alias was not moved; run ${MIGRATE_COMMAND} again`,
  );
}

/**
 * After a swap: every API process stops resolving the old index within the serving-index cache's lifetime; an
 * ingestion building a version since before may still write there until it ends (it writes the new index too
 * before going live, jobs/steps.ts; one that went live just before that check is what this catches up). Then
 * catch-up passes copy (or rebuild) what only the old index got, and remove what was deleted or replaced meanwhile,
 * until one finds nothing to do.
 */
async function catchUpAfterSwap(
  deps: IndexMigrationDeps,
  plan: FillPlan,
  options: MigrateOptions,
  say: (line: string) => void,
  before?: FillCounts,
): Promise<Pick<MigrationOutcome, 'copied' | 'rebuilt' | 'removed' | 'catch_up_passes' | 'left_in_flight' | 'chunk_counts_updated' | 'unrebuildable'>> {
  await sleep(options.catchUpDelayMs ?? SERVING_INDEX_TTL_MS * 2 + 1_000);
  const now = Date.now();
  const running = (await deps.store.listJobs(plan.scope)).filter((job) => heldBuild(job, now));
  const deadline = Date.now() + (options.inFlightWaitMs ?? 120_000);
  let left = running;
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(500);
    const still = await Promise.all(left.map(async (job) => ({ job, current: await deps.store.findJob(job._id) })));
    left = still.filter(({ job, current }) => current !== null && current.version === job.version && current.phase === 'build').map(({ job }) => job);
  }
  if (left.length > 0) say(`${left.length} ingestion(s) still running after the swap: run ${finishCommand(plan.target)} once they end, to catch up with them`);
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
    say(`catch-up after the swap, pass ${passes}: ${found.missing.length} version(s) to fill, ${found.stale.length} to remove`);
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
  return { copied: counts.copied, rebuilt: counts.rebuilt, removed: counts.removed, catch_up_passes: passes, left_in_flight: left.length, chunk_counts_updated: updated, unrebuildable };
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
  const groups = new Map((await deps.search.indices.versionGroups(plan.target, plan.scope)).map((group) => [unitKey(group.document_id, group.document_version), group]));
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
    const total = !splitLikeTarget ? undefined : (plan.splitTotals.get(key) ?? (group.chunks !== document.chunks ? await textSplitTotal(deps, document) : undefined));
    if (group.chunks === document.chunks && (total === undefined || total === document.total_chunks)) continue;
    // The total unknown (a PDF, another chunking): at least the chunks the record now says it has.
    const counts = { chunks: group.chunks, total_chunks: total ?? Math.max(document.total_chunks, group.chunks) };
    if (await deps.store.setLiveChunkCounts(document._id, document.live_version, counts)) updated += 1;
  }
  return updated;
}

/** The splitter's total for a text document's stored original; undefined for a PDF (re-extracting is not worth a count). */
async function textSplitTotal(deps: IndexMigrationDeps, document: { _id: string; filename: string }): Promise<number | undefined> {
  const record = await deps.store.findDocument(document._id);
  if (!record || record.kind === 'pdf') return undefined;
  const content = await deps.store.findDocumentContent(document._id);
  return content === null ? undefined : (await deps.rag.split(content, document.filename)).total;
}

// ---------------------------------------------------------------------------------------------------------------
// drop-old, use / rollback

/** The indices of this alias's family the alias does not point to (what drop-old would delete). */
export async function oldIndices(search: SearchIndex): Promise<Array<{ index: string; state: string | null; chunks: number }>> {
  const family = await search.indices.family();
  const old = family.filter((entry) => !entry.aliased);
  const stats = await search.indices.stats(old.map((entry) => entry.index));
  return old.map((entry) => ({ index: entry.index, state: entry.meta?.migration.state ?? null, chunks: stats.find((row) => row.index === entry.index)?.chunks ?? 0 }));
}

/**
 * Deletes old indices of the family, refusing while one could still be written to: the live index's catch-up after
 * its swap is unfinished (state `swapped`), or (given the store) an ingestion that began before the swap still
 * builds its version (it may write the old index until it ends). A write to an index dropped all the same would
 * create it again from the template: the ingestion finds it and deletes it (jobs/steps.ts, removeRecreatedIndex).
 */
export async function dropOldIndices(search: SearchIndex, indices: string[], store?: Pick<Store, 'listJobs'>): Promise<string[]> {
  const aliasedIndices = await search.indices.aliasIndices();
  const aliased = new Set(aliasedIndices.map((entry) => entry.index));
  for (const entry of aliasedIndices) {
    const meta = await search.indices.meta(entry.index);
    if (meta?.migration.state === 'swapped') {
      throw new IndexMigrationError(`${entry.index} is live but its catch-up after the swap is unfinished: run ${finishCommand(entry.index)} to finish it first; nothing dropped`);
    }
    const swappedAt = meta?.migration.swapped_at ? Date.parse(meta.migration.swapped_at) : null;
    if (store && swappedAt !== null) {
      // Not a build whose holder died long ago (catchUpAfterSwap's rule): whoever takes it resolves the alias afresh.
      const now = Date.now();
      const building = (await store.listJobs()).filter((job) => heldBuild(job, now) && new Date(job.created_at).getTime() <= swappedAt);
      if (building.length > 0) {
        throw new IndexMigrationError(`${building.length} ingestion(s) that began before the alias moved to ${entry.index} are still running (they may write an old index): try again once they end; nothing dropped`);
      }
    }
  }
  const dropped: string[] = [];
  for (const index of indices) {
    // Checked again just before: the alias may have moved since the list was shown.
    if (aliased.has(index)) throw new IndexMigrationError(`${index} is behind the alias ${search.indices.alias} now: not dropped`);
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
export async function useIndex(deps: IndexMigrationDeps, requested: string | null, options: MigrateOptions = {}): Promise<UseOutcome> {
  const admin = deps.search.indices;
  const say = options.say ?? (() => {});
  const family = await admin.family();
  const live = family.filter((entry) => entry.aliased);
  if (live.length > 1) throw new IndexMigrationError(`the alias ${admin.alias} points to ${live.length} indices: name the one to use`);
  const current = live[0] ?? null;
  const targetName = requested ?? current?.meta?.migration.source ?? null;
  if (!targetName) throw new IndexMigrationError(`${current?.index ?? admin.alias} records no index it was migrated from: name one (kbqa index use INDEX; kbqa index status lists them)`);
  const target = family.find((entry) => entry.index === targetName);
  if (!target) throw new IndexMigrationError(`${targetName} is not an index of the alias ${admin.alias} (kbqa index status lists them)`);
  if (target.aliased) {
    if (!target.meta || target.meta.migration.state !== 'swapped') throw new IndexMigrationError(`the alias ${admin.alias} already points to ${targetName}`);
    const { result } = await finishCatchUp(deps, targetName, target.meta, options, say);
    const { copied, rebuilt, removed, left_in_flight, chunk_counts_updated, unrebuildable } = result;
    return { outcome: 'caught-up', alias: admin.alias, from: target.meta.migration.source, to: targetName, copied, rebuilt, removed, left_in_flight, chunk_counts_updated, unrebuildable };
  }
  if (target.meta?.migration.state === 'filling') throw new IndexMigrationError(`${targetName} is a migration's unfinished target: run ${MIGRATE_COMMAND} to finish it, or drop it`);
  if (!target.meta) throw new IndexMigrationError(`${targetName} records nothing of how it was built: not used`);
  const embedder = { modelName: target.meta.embedder.name, dimensions: target.meta.embedder.dimensions };
  const plan: FillPlan = {
    target: targetName,
    source: current && sameChunks(current.meta, { embedder: embedder.modelName, chunking: target.meta.chunking }) ? current.index : null,
    embedder,
    scope: options.knowledgeBaseIds,
    splitTotals: new Map(),
  };
  // migrateIndex's sequence: caught up before the swap (what was ingested, replaced or deleted since it stopped
  // being live), counts checked, one _aliases call, the catch-up after it.
  await admin.ensureServiceFields(targetName);
  say(`catching ${targetName} up with the store before the alias moves`);
  const counts: FillCounts = { copied: 0, rebuilt: 0, removed: 0, unrebuildable: new Set() };
  const from = current ? { indices: live.map((entry) => entry.index), index: current.index, meta: current.meta } : { indices: [], index: null, meta: null };
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
