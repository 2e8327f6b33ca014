// `kbqa backup create DIR`: the OpenSearch half (a snapshot of the live chunk index, copied into DIR), then the
// MongoDB half (every kbqa collection as Extended JSON lines), then the manifest (manifest.ts), written last.
import { mkdir, readdir, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BackupError } from '../../errors.ts';
import {
  CHUNKS_INGEST_PIPELINE,
  HYBRID_EXPLAIN_SEARCH_PIPELINE,
  HYBRID_SEARCH_PIPELINE,
  type SearchIndex,
} from '../../search/index.ts';
import { chunkIndexVersion } from '../../search/snapshots.ts';
import { chunkTemplateName } from '../../search/assets.ts';
import { TRANSIENT_COLLECTIONS, type Store } from '../../store/index.ts';
import {
  collectionFile,
  copyTree,
  listTree,
  prepareBackupDirectory,
  PRIVATE_DIR,
  PRIVATE_FILE,
  removeQuietly,
  stamp,
  writeLines,
} from './files.ts';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  MANIFEST,
  type BackupDeps,
  type BackupManifest,
  type BackupOptions,
} from './manifest.ts';

async function waitForSnapshot(
  search: SearchIndex,
  repository: string,
  snapshot: string,
  pollMs: number,
  progress: (line: string) => void,
) {
  let lastReport = Date.now();
  for (;;) {
    const status = await search.snapshots.snapshotStatus(repository, snapshot);
    if (status.state === 'SUCCESS') return;
    if (status.state !== 'IN_PROGRESS') {
      throw new BackupError(`the snapshot ended ${status.state}: ${status.failures.join('; ') || 'no reason given'}`);
    }
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      progress(`snapshot: ${status.shards.successful}/${status.shards.total} shard(s) done`);
    }
    await sleep(pollMs);
  }
}

/**
 * Makes a backup in `dir` (absent or empty): the OpenSearch half, then the MongoDB half, then the manifest. The
 * snapshot repository lives under KBQA_OPENSEARCH_SNAPSHOT_DIR only while the backup runs; its files are copied into
 * DIR/opensearch/ so DIR is all a restore needs. On failure nothing is left in DIR (a backup without a manifest is
 * refused by restore anyway).
 */
export async function createBackup(
  deps: BackupDeps,
  dir: string,
  options: BackupOptions = {},
): Promise<BackupManifest> {
  const progress = options.progress ?? (() => {});
  const pollMs = options.pollMs ?? 500;
  const created = await prepareBackupDirectory(dir);
  try {
    await mkdir(join(dir, 'opensearch'), { mode: PRIVATE_DIR });
    await mkdir(join(dir, 'mongo'), { mode: PRIVATE_DIR });
    const opensearch = await backupChunkIndices(deps, dir, pollMs, progress);
    await options.afterSnapshot?.();
    const mongo = await exportCollections(deps.store, dir, progress);
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      format_version: BACKUP_FORMAT_VERSION,
      created_at: new Date().toISOString(),
      opensearch,
      mongo,
    };
    // Written last, and renamed into place: a manifest means a complete backup.
    await writeFile(join(dir, `${MANIFEST}.partial`), `${JSON.stringify(manifest, null, 2)}\n`, {
      mode: PRIVATE_FILE,
      flag: 'wx',
    });
    await rename(join(dir, `${MANIFEST}.partial`), join(dir, MANIFEST));
    return manifest;
  } catch (error) {
    if (created) await removeQuietly(dir, progress);
    else for (const entry of await readdir(dir)) await removeQuietly(join(dir, entry), progress);
    throw error;
  }
}

async function backupChunkIndices(
  deps: BackupDeps,
  dir: string,
  pollMs: number,
  progress: (line: string) => void,
): Promise<BackupManifest['opensearch']> {
  const { search } = deps;
  const startedAt = new Date().toISOString();
  const { alias } = search.snapshots;
  // Only what the alias points to: an index a migration keeps beside it serves nothing (and `kbqa index rollback`
  // to it after a restore would be to an index the records no longer match).
  const indices = await search.snapshots.chunkIndices();
  const leftOut = (await search.indices.family()).filter((entry) => !entry.aliased).map((entry) => entry.index);
  if (leftOut.length > 0)
    progress(
      `not in the backup: ${leftOut.join(', ')} (kept beside the alias by a migration; only the live index is snapshotted)`,
    );
  const versions = indices.map((index) => chunkIndexVersion(index, alias));
  const foreign = indices.filter((_, position) => versions[position] === null);
  if (foreign.length > 0)
    throw new BackupError(
      `the alias ${alias} points to ${foreign.join(', ')}, not named as a kbqa chunk index of it: not backed up`,
    );
  // The live index's own record of what built it; an index older than that record was built by the configured embedder.
  const meta = indices.length > 0 ? await search.indices.meta(indices[0]) : null;
  const described = {
    alias,
    index_template: chunkTemplateName(versions[0] ?? 1, alias),
    ingest_pipeline: CHUNKS_INGEST_PIPELINE,
    search_pipelines: [HYBRID_SEARCH_PIPELINE, HYBRID_EXPLAIN_SEARCH_PIPELINE],
    embedder:
      meta && meta.embedder.dimensions > 0
        ? meta.embedder
        : { name: deps.embedder.modelName, dimensions: deps.embedder.dimensions },
    indices,
    left_out: leftOut,
  };
  if (indices.length === 0) {
    progress(`no chunk index behind ${search.snapshots.alias}: the OpenSearch half is empty`);
    return { started_at: startedAt, finished_at: new Date().toISOString(), ...described, snapshot: null, files: [] };
  }
  // One repository per backup: its directory then holds exactly this snapshot's files.
  const name = `kbqa-backup-${stamp()}`;
  const snapshot = 'chunks';
  const repositoryDir = join(deps.config.opensearch.snapshotDir, name);
  progress(`snapshot of ${indices.join(', ')} into repository ${name}`);
  await search.snapshots.registerRepository(name, name, { readonly: false });
  try {
    await search.snapshots.startSnapshot(name, snapshot, indices);
    await waitForSnapshot(search, name, snapshot, pollMs, progress);
    const exists = await stat(repositoryDir).then(
      (found) => found.isDirectory(),
      () => false,
    );
    if (!exists) {
      throw new BackupError(
        `OpenSearch wrote the snapshot under its path.repo, but ${repositoryDir} does not exist on this machine: ` +
          'KBQA_OPENSEARCH_SNAPSHOT_DIR must be that directory (the same path, or a shared mount of it)',
      );
    }
    const files = await copyTree(repositoryDir, join(dir, 'opensearch'), await listTree(repositoryDir), {
      fileMode: PRIVATE_FILE,
      dirMode: PRIVATE_DIR,
    });
    progress(`snapshot copied: ${files.length} file(s), ${files.reduce((sum, file) => sum + file.bytes, 0)} bytes`);
    return {
      started_at: startedAt,
      finished_at: new Date().toISOString(),
      ...described,
      snapshot,
      files: files.map((file) => ({ ...file, path: `opensearch/${file.path}` })),
    };
  } finally {
    // The copy in DIR is the backup; the repository was only the way to it.
    await search.snapshots.deleteSnapshot(name, snapshot).catch(() => undefined);
    await search.snapshots.deleteRepository(name).catch(() => undefined);
    await removeQuietly(repositoryDir, progress);
  }
}

async function exportCollections(
  store: Store,
  dir: string,
  progress: (line: string) => void,
): Promise<BackupManifest['mongo']> {
  const startedAt = new Date().toISOString();
  const collections: BackupManifest['mongo']['collections'] = [];
  const { collections: names, others } = await store.listBackupCollections();
  if (others.length > 0) progress(`left out, not kbqa's: ${others.join(', ')}`);
  for (const name of names) {
    const indexes = await store.listCollectionIndexes(name);
    const written = await writeLines(dir, collectionFile(name), store.exportCollection(name));
    collections.push({
      name,
      path: written.path,
      bytes: written.bytes,
      sha256: written.sha256,
      documents: written.lines,
      indexes,
    });
    progress(`exported ${name}: ${written.lines} record(s)`);
  }
  return {
    started_at: startedAt,
    finished_at: new Date().toISOString(),
    database: store.databaseName(),
    skipped: [...TRANSIENT_COLLECTIONS],
    collections,
  };
}
