// `kbqa backup create DIR` / `kbqa backup restore DIR`: the chunk index as an OpenSearch snapshot, MongoDB (records,
// original texts, stored PDFs) as Extended JSON lines, and a manifest that names and checksums every file.
//
// The two halves are taken one after the other, not at one instant: the snapshot first, then the records. So the
// records may be newer than the chunks (a document ingested, replaced or deleted in between), never the reverse
// in a way that loses anything: chunks are derived data, rebuilt from the stored originals the records export
// carries. Restore therefore ends with a reconcile (`kbqa doctor --fix`'s machinery, operations/doctor.ts): chunks no
// record claims are removed, documents whose chunks are missing or of another version are rebuilt from their stored
// original, and the command returns only once the ingestion jobs that does are done.
//
// This file is `kbqa backup restore DIR`; manifest.ts says what DIR holds, create.ts makes it, verify.ts checks it,
// reconcile.ts ends a restore, files.ts holds the file helpers.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BackupError } from '../../errors.ts';
import { CHUNKS_TEMPLATE } from '../../search/index.ts';
import { chunkTemplateVersion } from '../../search/snapshots.ts';
import type { BackupIndex } from '../../store/index.ts';
import { copyTree, messageOf, PRIVATE_DIR, PRIVATE_FILE, removeQuietly, stamp } from './files.ts';
import type { BackupManifest, RestoreDeps, RestoreOptions, RestoreSummary } from './manifest.ts';
import { reconcile, type ReconcileOutcome } from './reconcile.ts';
import { verifyBackup } from './verify.ts';

/** What a restore has written so far: what it takes back when it fails before the reconcile. */
interface RestoreWrites {
  /** Collections it imported into (each verified empty first: they are dropped). */
  collections: string[];
  /** Empty chunk indices it deleted (an API that started once made them; applying the assets makes them again). */
  deletedIndices: string[];
  /** Indices it asked OpenSearch to restore (none of them existed, or they were the empty ones it deleted). */
  restoredIndices: string[];
  /** What its own clean-up could not remove (a snapshot repository, its copy), in words. */
  leftBehind: string[];
}

/**
 * Restores a backup into an empty stack whose API is stopped: checks the backup and the target before writing
 * anything, imports the records, restores the chunk indices from the snapshot, applies the search assets, releases
 * the imported ingestion jobs, then reconciles the two halves. Up to the reconcile it is all or nothing: a failure
 * undoes what it wrote (RestoreWrites), so the target is empty again and the restore can be run again.
 */
export async function restoreBackup(
  deps: RestoreDeps,
  dir: string,
  options: RestoreOptions = {},
): Promise<RestoreSummary> {
  const progress = options.progress ?? (() => {});
  const manifest = await verifyBackup(dir);
  progress(
    `backup verified: ${manifest.mongo.collections.length} collection file(s), ${manifest.opensearch.files.length} snapshot file(s)`,
  );
  checkCompatible(deps, manifest, progress);
  await checkNoLiveApi(deps);
  const emptyIndices = await checkTargetEmpty(deps, manifest);

  const writes: RestoreWrites = { collections: [], deletedIndices: [], restoredIndices: [], leftBehind: [] };
  const collections: Record<string, number> = {};
  let chunksRestored = 0;
  let released = 0;
  try {
    for (const collection of manifest.mongo.collections) {
      writes.collections.push(collection.name);
      const input = createReadStream(join(dir, ...collection.path.split('/')));
      const lines = createInterface({ input, crlfDelay: Infinity });
      const imported = await deps.store.importCollection(collection.name, lines);
      if (imported !== collection.documents) {
        throw new BackupError(
          `${collection.path}: ${imported} record(s) imported, the manifest says ${collection.documents}`,
        );
      }
      await deps.store.createCollectionIndexes(collection.name, collection.indexes as BackupIndex[]);
      collections[collection.name] = imported;
      progress(`imported ${collection.name}: ${imported} record(s)`);
    }
    if (manifest.opensearch.snapshot !== null)
      chunksRestored = await restoreChunkIndices(deps, dir, manifest, emptyIndices, writes, options, progress);
    await options.afterChunkRestore?.();
    await deps.search.applyAssets();
    // Only now may anyone take the imported jobs: their chunks go to an index that exists.
    released = await deps.store.releaseRestoredJobs(Date.now());
  } catch (error) {
    throw await undoRestore(deps, writes, error, progress);
  }
  for (const left of writes.leftBehind) progress(`left behind: ${left}`);
  progress(
    `search assets applied, ${released} ingestion job(s) of the backup released; reconciling records and chunks`,
  );
  let outcome: ReconcileOutcome;
  try {
    outcome = await reconcile(deps, options, progress);
  } catch (error) {
    throw new BackupError(
      `the records and chunks are restored, but reconciling them failed: ${messageOf(error)}. ` +
        'Once the cause is fixed, start the API (it runs the queued ingestion jobs) and run `kbqa doctor --fix` until it finds nothing',
      { cause: error },
    );
  }
  return {
    backup_created_at: manifest.created_at,
    halves_apart_ms: Math.max(0, Date.parse(manifest.mongo.started_at) - Date.parse(manifest.opensearch.finished_at)),
    documents: collections.documents ?? 0,
    knowledge_bases: collections.knowledge_bases ?? 0,
    users: collections.users ?? 0,
    collections,
    chunks_restored: chunksRestored,
    chunks: await deps.search.countChunks(),
    ...outcome,
  };
}

/**
 * Takes back what a failed restore wrote: the restored indices deleted, the empty chunk index it deleted made again,
 * the collections it imported into dropped. Returns the error to throw: the failure, and what (if anything) is left.
 */
async function undoRestore(
  deps: RestoreDeps,
  writes: RestoreWrites,
  error: unknown,
  progress: (line: string) => void,
): Promise<BackupError> {
  progress(`restore failed (${messageOf(error)}); undoing what it wrote`);
  const left = [...writes.leftBehind];
  for (const index of writes.restoredIndices) {
    await deps.search.snapshots
      .deleteIndex(index)
      .catch((failure: unknown) => left.push(`OpenSearch index ${index} (${messageOf(failure)})`));
  }
  // Not data, but the target had it: applying the assets makes it again (as the API does when it starts).
  const notBack =
    writes.deletedIndices.length > 0 &&
    (await deps.search.applyAssets().then(
      () => false,
      () => true,
    ))
      ? ` The empty chunk index ${writes.deletedIndices.join(', ')} it deleted is not back: the API makes it when it starts.`
      : '';
  for (const collection of [...writes.collections].reverse()) {
    await deps.store
      .dropCollection(collection)
      .catch((failure: unknown) => left.push(`records in MongoDB collection ${collection} (${messageOf(failure)})`));
  }
  const cause = messageOf(error);
  return new BackupError(
    left.length === 0
      ? `the restore failed: ${cause}. Nothing of the backup was left behind (the collections it imported into are dropped, the indices it restored deleted): ` +
          `once the cause is fixed, run the restore again.${notBack}`
      : `the restore failed: ${cause}. Undoing it left behind: ${left.join('; ')}. Remove those (drop the collections, delete the indices and repositories), ` +
          `then run the restore again.${notBack}`,
    { cause: error },
  );
}

/**
 * Refuses while a kbqa API answers where this configuration puts it (KBQA_HOST:KBQA_PORT): one running would take the
 * restored ingestion jobs and write chunks before their index is back. A cheap sign, not proof: API processes
 * elsewhere are not seen, which is why docs/operations.md says to stop them all.
 */
async function checkNoLiveApi(deps: RestoreDeps): Promise<void> {
  const { host, port } = deps.config;
  if (port === 0) return;
  const reachable = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  const url = `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}/healthz`;
  const answered = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
    async (response) =>
      response.ok && ((await response.json().catch(() => null)) as { status?: unknown } | null)?.status === 'ok',
    () => false,
  );
  if (answered) {
    throw new BackupError(
      `a kbqa API answers at ${url}: stop every API process of the target stack before restoring (a running one would take the restored ingestion jobs ` +
        'and write chunks before their index is back), run the restore, then start them again',
    );
  }
}

function checkCompatible(deps: RestoreDeps, manifest: BackupManifest, progress: (line: string) => void): void {
  const { embedder, index_template: template } = manifest.opensearch;
  // Older backups name kbqa-chunks-v1 whatever the alias.
  const version = template === CHUNKS_TEMPLATE ? 1 : chunkTemplateVersion(template, manifest.opensearch.alias);
  if (version === null) {
    throw new BackupError(
      `the backup's chunk index follows template ${template}, which this kbqa does not name (kbqa-chunks-v<N>[-<name>]): restore it with the kbqa version that made it, then upgrade`,
    );
  }
  // The index comes back with its own mappings and analysis; a version the files here do not have is drift, as after a rollback.
  const current = deps.search.indices.assets().version;
  if (version !== current) {
    progress(
      `the backup's index is of template version ${version}, this kbqa's files are at v${current}: it is restored as it is; kbqa index status shows the drift and kbqa index migrate resolves it`,
    );
  }
  if (manifest.opensearch.alias !== deps.search.snapshots.alias) {
    throw new BackupError(
      `the backup's chunks are behind the alias ${manifest.opensearch.alias}, this service's behind ${deps.search.snapshots.alias}: set KBQA_CHUNKS_ALIAS=${manifest.opensearch.alias} to restore it`,
    );
  }
  if (embedder.name !== deps.embedder.modelName || embedder.dimensions !== deps.embedder.dimensions) {
    throw new BackupError(
      `the backup's chunks were embedded by ${embedder.name} (${embedder.dimensions} dimensions), this service embeds with ${deps.embedder.modelName} (${deps.embedder.dimensions})`,
    );
  }
}

/**
 * Refuses a target that holds anything: records in any collection the backup restores, or chunks in the chunk
 * alias or an index of the backup's name. Indices that exist but are empty (an API started once on the new stack
 * creates its chunk index) are returned, to be deleted before the snapshot's come back under their names.
 */
async function checkTargetEmpty(deps: RestoreDeps, manifest: BackupManifest): Promise<string[]> {
  const problems: string[] = [];
  const nonEmpty = await deps.store.nonEmptyCollections(
    manifest.mongo.collections.map((collection) => collection.name),
  );
  if (nonEmpty.length > 0)
    problems.push(`MongoDB database ${deps.store.databaseName()} holds records in ${nonEmpty.join(', ')}`);
  const { snapshots } = deps.search;
  const existing = [
    ...new Set([
      ...(await snapshots.chunkIndices()),
      ...(await snapshots.existingIndices(manifest.opensearch.indices)),
    ]),
  ];
  const empty: string[] = [];
  for (const index of existing) {
    const chunks = await snapshots.countIndex(index);
    if (chunks > 0) problems.push(`OpenSearch index ${index} holds ${chunks} chunk(s)`);
    else empty.push(index);
  }
  if (problems.length > 0) {
    throw new BackupError(
      `the target is not empty (${problems.join('; ')}): restore into an empty stack, a new database and a cluster without the chunk index`,
    );
  }
  try {
    await stat(deps.config.opensearch.snapshotDir);
  } catch {
    throw new BackupError(
      `KBQA_OPENSEARCH_SNAPSHOT_DIR (${deps.config.opensearch.snapshotDir}) does not exist here: it must be the OpenSearch nodes' path.repo`,
    );
  }
  return empty;
}

/**
 * Copies the backup's snapshot repository under the snapshot directory, registers it read-only, restores the
 * indices (with the chunk alias) and waits until every primary is back. The repository goes again afterwards: the
 * restored data lives in the nodes' data paths. What it deleted, restored or could not clean up goes into `writes`.
 */
async function restoreChunkIndices(
  deps: RestoreDeps,
  dir: string,
  manifest: BackupManifest,
  emptyIndices: string[],
  writes: RestoreWrites,
  options: RestoreOptions,
  progress: (line: string) => void,
): Promise<number> {
  const { snapshots } = deps.search;
  const pollMs = options.pollMs ?? 500;
  const indices = manifest.opensearch.indices;
  for (const index of emptyIndices) {
    progress(`deleting the empty index ${index} (a snapshot's index comes back under its own name)`);
    await snapshots.deleteIndex(index);
    writes.deletedIndices.push(index);
  }
  const name = `kbqa-restore-${stamp()}`;
  const repositoryDir = join(deps.config.opensearch.snapshotDir, name);
  // OpenSearch's user must read the copy. As root, hand it to the snapshot directory's owner (the local stack's
  // search user); as that owner, private modes do; as anyone else, the modes OpenSearch gives its own snapshots.
  const snapshotDirOwner = await stat(deps.config.opensearch.snapshotDir);
  const uid = process.getuid?.() ?? snapshotDirOwner.uid;
  const owner =
    uid === 0 && snapshotDirOwner.uid !== 0 ? { uid: snapshotDirOwner.uid, gid: snapshotDirOwner.gid } : undefined;
  const sameUser = owner !== undefined || uid === snapshotDirOwner.uid;
  // verifyBackup normalized and checked these paths: each is inside opensearch/.
  const files = manifest.opensearch.files.map((file) => file.path.slice('opensearch/'.length));
  let registered = false;
  try {
    await copyTree(join(dir, 'opensearch'), repositoryDir, files, {
      fileMode: sameUser ? PRIVATE_FILE : 0o644,
      dirMode: sameUser ? PRIVATE_DIR : 0o755,
      ...(owner ? { owner } : {}),
    });
    registered = true;
    await snapshots.registerRepository(name, name, { readonly: true });
    progress(`restoring ${indices.join(', ')} from the snapshot`);
    // Before the request: one that times out may still have started the restore.
    writes.restoredIndices.push(...indices);
    await snapshots.startRestore(name, manifest.opensearch.snapshot!, indices, deps.config.opensearch.replicas);
    await waitForRecovery(deps, indices, options, pollMs, progress);
    let chunks = 0;
    for (const index of indices) chunks += await snapshots.countIndex(index);
    progress(`restored ${chunks} chunk(s)`);
    return chunks;
  } finally {
    if (registered) {
      await snapshots
        .deleteRepository(name)
        .catch((error: unknown) =>
          writes.leftBehind.push(
            `snapshot repository ${name}, registered (${messageOf(error)}): DELETE _snapshot/${name}`,
          ),
        );
    }
    if (!(await removeQuietly(repositoryDir, progress))) writes.leftBehind.push(`the repository copy ${repositoryDir}`);
  }
}

/**
 * Polls until the restored indices are no longer red and no shard is recovering. Fails when a shard stays unassigned
 * with none recovering (OpenSearch gave up on it: a recovery failed its retries) or recovery outlasts its deadline.
 */
async function waitForRecovery(
  deps: RestoreDeps,
  indices: string[],
  options: RestoreOptions,
  pollMs: number,
  progress: (line: string) => void,
) {
  const recoveryTimeoutMs = options.recoveryTimeoutMs ?? 2 * 3_600_000;
  const unassignedTimeoutMs = options.unassignedTimeoutMs ?? 60_000;
  const started = Date.now();
  let stuckSince: number | null = null;
  let lastReport = started;
  for (;;) {
    const health = await deps.search.snapshots.indexHealth(indices);
    if (health.status !== 'red' && health.initializingShards === 0) return;
    const now = Date.now();
    const state = `${health.activePrimaryShards} primary shard(s) back, ${health.initializingShards} recovering, ${health.unassignedShards} unassigned`;
    stuckSince = health.status === 'red' && health.initializingShards === 0 ? (stuckSince ?? now) : null;
    if (stuckSince !== null && now - stuckSince > unassignedTimeoutMs) {
      throw new BackupError(
        `the restore of ${indices.join(', ')} stopped: ${state} for ${Math.round((now - stuckSince) / 1000)} s, none recovering ` +
          '(OpenSearch gave up on a shard; GET _cluster/allocation/explain says why)',
      );
    }
    if (now - started > recoveryTimeoutMs) {
      throw new BackupError(
        `the restore of ${indices.join(', ')} did not finish within ${Math.round(recoveryTimeoutMs / 60_000)} min (${state})`,
      );
    }
    if (now - lastReport > 10_000) {
      lastReport = now;
      progress(`restore: ${state}`);
    }
    await sleep(pollMs);
  }
}

/** The summary as lines a person reads. */
export function formatRestoreSummary(summary: RestoreSummary): string {
  const lines = [
    `restored ${summary.documents} document(s) in ${summary.knowledge_bases} knowledge base(s) of ${summary.users} user(s), and ${summary.chunks_restored} chunk(s) ` +
      `(backup of ${summary.backup_created_at}; its halves ${Math.round(summary.halves_apart_ms / 1000)} s apart)`,
    `reconciled: rebuilt ${summary.documents_rebuilt} document(s) from their stored originals, queued ${summary.documents_requeued} again, ` +
      `ran ${summary.jobs_run} ingestion job(s), removed ${summary.chunks_removed} chunk(s) of ${summary.documents_with_chunks_removed} document(s) no record claims ` +
      `and ${summary.records_removed} stray record(s)`,
    `the chunk index holds ${summary.chunks} chunk(s)`,
  ];
  if (summary.not_rebuildable.length > 0)
    lines.push(`not rebuildable (no stored original): ${summary.not_rebuildable.join(', ')}`);
  lines.push(
    summary.consistent
      ? "consistent: every document's chunks match its record"
      : `NOT consistent; \`kbqa doctor\` finds:\n${summary.remaining ?? ''}`,
  );
  return lines.join('\n');
}
