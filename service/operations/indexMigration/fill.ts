// Filling a target index: the diff that drives fills, catch-ups and resumes (the store's live versions against the
// target's chunk groups), and the fill itself: `_reindex` from a source index, or a rebuild from the stored originals.
import { IndexMigrationError } from '../../errors.ts';
import { createPdfExtractor } from '../../extraction/pdf.ts';
import { splitPages } from '../../extraction/pdfPages.ts';
import { MIGRATE_COMMAND } from '../../search/index.ts';
import type { ChunkGroup } from '../../search/chunks.ts';
import { chunkMetadata } from '../../search/metadataFilter.ts';
import { metadataObject, type Store } from '../../store/index.ts';
import { chunkDocuments } from '../../jobs/records.ts';
import { unitKey, type FillCounts, type FillPlan, type IndexMigrationDeps, type Unit } from './plan.ts';

/** The store's live documents: a version served (live_version) in a KB whose record exists (soft-deleted too: restorable). */
async function liveUnits(store: Store, scope: string[] | undefined): Promise<Unit[]> {
  const documents = await store.listDocumentSummaries(scope);
  const knowledgeBases = new Set(await store.listAllKnowledgeBaseIds());
  return documents
    .filter((document) => document.live_version !== null && knowledgeBases.has(document.knowledge_base_id))
    .map((document) => ({
      document_id: document._id,
      knowledge_base_id: document.knowledge_base_id,
      version: document.live_version as number,
    }));
}

export interface Difference {
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
export async function difference(
  deps: IndexMigrationDeps,
  plan: Pick<FillPlan, 'target' | 'source' | 'scope'>,
): Promise<Difference> {
  const admin = deps.search.indices;
  const { target, source, scope } = plan;
  const units = await liveUnits(deps.store, scope);
  const jobs = await deps.store.listJobs(scope);
  await admin.refresh(target);
  if (source) await admin.refresh(source);
  const targetGroups = new Map(
    (await admin.versionGroups(target, scope)).map((group) => [
      unitKey(group.document_id, group.document_version),
      group,
    ]),
  );
  const sourceGroups = source
    ? new Map(
        (await admin.versionGroups(source, scope)).map((group) => [
          unitKey(group.document_id, group.document_version),
          group,
        ]),
      )
    : null;
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

/** Document versions copied by one `_reindex`. */
const COPY_BATCH = 100;

/** Versions rebuilt at once (each waits on the model pool). */
const REBUILD_CONCURRENCY = 4;

/** Segments embedded per model call, as ingestion does. */
const SEGMENTS_PER_STEP = 32;

/** Control-flow signal: a fill told to stop early (`stopAfter`) stops; caught by migrateIndex, which says how far it got. */
export class FillStopped extends Error {}

/** Fills the target with these versions; stops (FillStopped) after `stopAfter` of them when given. */
export async function fill(
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
    const sourceGroups = new Set(
      (await admin.versionGroups(plan.source, plan.scope)).map((group) =>
        unitKey(group.document_id, group.document_version),
      ),
    );
    const inSource = difference.missing.filter((unit) => sourceGroups.has(unitKey(unit.document_id, unit.version)));
    // A version the old index lacks (an ingestion that has not reached it, a repair `kbqa doctor` would make) is rebuilt.
    toRebuild = difference.missing.filter((unit) => !sourceGroups.has(unitKey(unit.document_id, unit.version)));
    for (let start = 0; start < inSource.length; start += COPY_BATCH) {
      if (stopHere()) throw new FillStopped();
      const batch = inSource
        .slice(start, start + COPY_BATCH)
        .slice(0, progress.stopAfter !== undefined ? progress.stopAfter - progress.done() : undefined);
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
async function rebuildVersion(
  deps: IndexMigrationDeps,
  plan: FillPlan,
  unit: Unit,
): Promise<'rebuilt' | 'changed' | 'no-original'> {
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
      const { pages, scanned } = await extractor.extract(bytes, () => {});
      split = await splitPages(pages, (text) => rag.split(text, document.filename), scanned);
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

export function unrebuildableError(counts: FillCounts): IndexMigrationError {
  const versions = [...counts.unrebuildable];
  return new IndexMigrationError(
    `${versions.length} document version(s) have no stored original to rebuild from (${versions.slice(0, 5).join(', ')}${versions.length > 5 ? ', …' : ''}): ` +
      `run kbqa doctor --fix, then ${MIGRATE_COMMAND} again; the alias was not moved`,
  );
}

/** The units of a difference that can be filled (those without a stored original are out, named once). */
export function fillable(found: Difference, counts: FillCounts): Difference {
  const out = (unit: Unit) => !counts.unrebuildable.has(unitKey(unit.document_id, unit.version));
  return { ...found, missing: found.missing.filter(out), incomplete: found.incomplete.filter(out) };
}
