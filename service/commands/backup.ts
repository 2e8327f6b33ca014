// `kbqa backup create DIR` / `kbqa backup restore DIR`: the chunk index as an OpenSearch snapshot, MongoDB (records,
// original texts, stored PDFs) as Extended JSON lines, and a manifest that names and checksums every file.
//
// The two halves are taken one after the other, not at one instant: the snapshot first, then the records. So the
// records may be newer than the chunks (a document ingested, replaced or deleted in between), never the reverse
// in a way that loses anything: chunks are derived data, rebuilt from the stored originals the records export
// carries. Restore therefore ends with a reconcile (`kbqa doctor --fix`'s machinery, commands/doctor.ts): chunks no
// record claims are removed, documents whose chunks are missing or of another version are rebuilt from their stored
// original, and the command returns only once the ingestion jobs that does are done.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, chown, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { join, normalize, posix, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Config } from '../config.ts';
import {
  CHUNKS_INGEST_PIPELINE,
  CHUNKS_TEMPLATE,
  HYBRID_EXPLAIN_SEARCH_PIPELINE,
  HYBRID_SEARCH_PIPELINE,
  type SearchIndex,
} from '../search/index.ts';
import { TRANSIENT_COLLECTIONS, type BackupIndex, type Store } from '../store/index.ts';
import { runDoctor, formatDoctorReport, type DoctorReport } from './doctor.ts';
import { reindexDocuments, type DocumentDeps } from './documents.ts';

export const BACKUP_FORMAT = 'kbqa-backup';
export const BACKUP_FORMAT_VERSION = 1;
const MANIFEST = 'manifest.json';

/** A backup that cannot be made or restored as asked (a non-empty target, a damaged backup, another embedder). */
export class BackupError extends Error {}

const fileSchema = z.object({
  /** Relative to the backup directory, with forward slashes. */
  path: z.string().min(1),
  bytes: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type BackupFile = z.infer<typeof fileSchema>;

const timestamp = z.string().datetime();

const manifestSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  format_version: z.literal(BACKUP_FORMAT_VERSION),
  /** When the backup was complete (the manifest is written last). */
  created_at: timestamp,
  opensearch: z.object({
    started_at: timestamp,
    finished_at: timestamp,
    alias: z.string(),
    index_template: z.string(),
    ingest_pipeline: z.string(),
    search_pipelines: z.array(z.string()),
    embedder: z.object({ name: z.string(), dimensions: z.number().int() }),
    /** Null when there was no chunk index to snapshot (a stack that never started the API). */
    snapshot: z.string().nullable(),
    indices: z.array(z.string()),
    /** The snapshot repository's files, copied into opensearch/. */
    files: z.array(fileSchema),
  }),
  mongo: z.object({
    started_at: timestamp,
    finished_at: timestamp,
    database: z.string(),
    /** Collections left out on purpose (store/backup.ts TRANSIENT_COLLECTIONS). */
    skipped: z.array(z.string()),
    collections: z.array(
      fileSchema.extend({
        name: z.string().min(1),
        documents: z.number().int().min(0),
        indexes: z.array(
          z.object({
            name: z.string(),
            key: z.record(z.string(), z.union([z.number(), z.string()])),
            unique: z.boolean().optional(),
            sparse: z.boolean().optional(),
          }),
        ),
      }),
    ),
  }),
});
export type BackupManifest = z.infer<typeof manifestSchema>;

export interface BackupDeps {
  store: Store;
  search: SearchIndex;
  config: { opensearch: Pick<Config['opensearch'], 'snapshotDir' | 'replicas'> };
  embedder: { modelName: string; dimensions: number };
}

export interface BackupOptions {
  /** Progress lines for a person (stderr in the CLI). */
  progress?: (line: string) => void;
  /** How often a snapshot or restore in progress is polled. */
  pollMs?: number;
  /** Runs between the two halves: for tests that make the halves disagree, as writes during a backup do. */
  afterSnapshot?: () => Promise<void>;
}

// Everything written into DIR is for its owner only: the export holds password hashes and API key digests.
const PRIVATE_FILE = 0o600;
const PRIVATE_DIR = 0o700;

const stamp = () => `${new Date().toISOString().replace(/[-:.]/g, '').toLowerCase()}-${randomBytes(3).toString('hex')}`;

/** The file a collection is exported to (collection names may hold characters a file name should not). */
const collectionFile = (collection: string) => `mongo/${encodeURIComponent(collection)}.jsonl`;

/** DIR must not exist or be empty; returns whether this call created it. */
async function prepareBackupDirectory(dir: string): Promise<boolean> {
  let entries: string[] | null;
  try {
    entries = await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') entries = null;
    else if (code === 'ENOTDIR') throw new BackupError(`${dir} is a file: a backup goes into a new or empty directory`);
    else throw error;
  }
  if (entries !== null && entries.length > 0) throw new BackupError(`${dir} is not empty: a backup goes into a new or empty directory`);
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
  await chmod(dir, PRIVATE_DIR);
  return entries === null;
}

/** Streams `lines` into a new file (one per line), hashing as it writes. */
async function writeLines(dir: string, path: string, lines: AsyncIterable<string>): Promise<BackupFile & { lines: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  let count = 0;
  async function* encoded() {
    for await (const line of lines) {
      const data = Buffer.from(`${line}\n`);
      hash.update(data);
      bytes += data.length;
      count += 1;
      yield data;
    }
  }
  await pipeline(Readable.from(encoded()), createWriteStream(join(dir, path), { flags: 'wx', mode: PRIVATE_FILE }));
  return { path, bytes, sha256: hash.digest('hex'), lines: count };
}

/** Copies one file, hashing what it reads; the copy gets `mode`. */
async function copyHashed(source: string, target: string, mode: number): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  async function* hashed() {
    for await (const part of createReadStream(source)) {
      hash.update(part as Buffer);
      bytes += (part as Buffer).length;
      yield part as Buffer;
    }
  }
  await pipeline(Readable.from(hashed()), createWriteStream(target, { flags: 'wx', mode }));
  await chmod(target, mode);
  return { bytes, sha256: hash.digest('hex') };
}

/** Every file under `root`, as paths relative to it with forward slashes, sorted. */
async function listTree(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1).split(sep).join('/'))
    .sort();
}

interface TreeCopy {
  fileMode: number;
  dirMode: number;
  /** Give every copied file and directory this owner (root restoring into a directory OpenSearch's user reads). */
  owner?: { uid: number; gid: number };
}

async function copyTree(source: string, target: string, files: string[], options: TreeCopy): Promise<Array<{ path: string; bytes: number; sha256: string }>> {
  const copied = [];
  await mkdir(target, { recursive: true, mode: options.dirMode });
  if (options.owner) await chown(target, options.owner.uid, options.owner.gid);
  const made = new Set<string>();
  for (const file of files) {
    const parts = file.split('/');
    for (let depth = 1; depth < parts.length; depth += 1) {
      const directory = parts.slice(0, depth).join('/');
      if (made.has(directory)) continue;
      made.add(directory);
      await mkdir(join(target, directory), { mode: options.dirMode });
      if (options.owner) await chown(join(target, directory), options.owner.uid, options.owner.gid);
    }
    const destination = join(target, ...parts);
    copied.push({ path: file, ...(await copyHashed(join(source, ...parts), destination, options.fileMode)) });
    if (options.owner) await chown(destination, options.owner.uid, options.owner.gid);
  }
  return copied;
}

async function removeQuietly(path: string, progress: (line: string) => void): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
  } catch (error) {
    progress(`could not remove ${path} (${(error as Error).message}); remove it by hand`);
  }
}

async function waitForSnapshot(search: SearchIndex, repository: string, snapshot: string, pollMs: number, progress: (line: string) => void) {
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
export async function createBackup(deps: BackupDeps, dir: string, options: BackupOptions = {}): Promise<BackupManifest> {
  const progress = options.progress ?? (() => {});
  const pollMs = options.pollMs ?? 500;
  const created = await prepareBackupDirectory(dir);
  try {
    await mkdir(join(dir, 'opensearch'), { mode: PRIVATE_DIR });
    await mkdir(join(dir, 'mongo'), { mode: PRIVATE_DIR });
    const opensearch = await backupChunkIndices(deps, dir, pollMs, progress);
    await options.afterSnapshot?.();
    const mongo = await exportCollections(deps.store, dir, progress);
    const manifest: BackupManifest = { format: BACKUP_FORMAT, format_version: BACKUP_FORMAT_VERSION, created_at: new Date().toISOString(), opensearch, mongo };
    // Written last, and renamed into place: a manifest means a complete backup.
    await writeFile(join(dir, `${MANIFEST}.partial`), `${JSON.stringify(manifest, null, 2)}\n`, { mode: PRIVATE_FILE, flag: 'wx' });
    await rename(join(dir, `${MANIFEST}.partial`), join(dir, MANIFEST));
    return manifest;
  } catch (error) {
    if (created) await removeQuietly(dir, progress);
    else for (const entry of await readdir(dir)) await removeQuietly(join(dir, entry), progress);
    throw error;
  }
}

async function backupChunkIndices(deps: BackupDeps, dir: string, pollMs: number, progress: (line: string) => void): Promise<BackupManifest['opensearch']> {
  const { search } = deps;
  const startedAt = new Date().toISOString();
  const indices = await search.snapshots.chunkIndices();
  const described = {
    alias: search.snapshots.alias,
    index_template: CHUNKS_TEMPLATE,
    ingest_pipeline: CHUNKS_INGEST_PIPELINE,
    search_pipelines: [HYBRID_SEARCH_PIPELINE, HYBRID_EXPLAIN_SEARCH_PIPELINE],
    embedder: { name: deps.embedder.modelName, dimensions: deps.embedder.dimensions },
    indices,
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
    const files = await copyTree(repositoryDir, join(dir, 'opensearch'), await listTree(repositoryDir), { fileMode: PRIVATE_FILE, dirMode: PRIVATE_DIR });
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

async function exportCollections(store: Store, dir: string, progress: (line: string) => void): Promise<BackupManifest['mongo']> {
  const startedAt = new Date().toISOString();
  const collections: BackupManifest['mongo']['collections'] = [];
  for (const name of await store.listBackupCollections()) {
    const indexes = await store.listCollectionIndexes(name);
    const written = await writeLines(dir, collectionFile(name), store.exportCollection(name));
    collections.push({ name, path: written.path, bytes: written.bytes, sha256: written.sha256, documents: written.lines, indexes });
    progress(`exported ${name}: ${written.lines} record(s)`);
  }
  return { started_at: startedAt, finished_at: new Date().toISOString(), database: store.databaseName(), skipped: [...TRANSIENT_COLLECTIONS], collections };
}

export interface RestoreDeps extends BackupDeps {
  config: BackupDeps['config'] & { ingestion: Pick<Config['ingestion'], 'leaseMs'> };
  /** The ingestion machinery (models, a job runner): loaded only when the reconcile has something to rebuild. */
  documentDeps: () => Promise<DocumentDeps>;
}

export interface RestoreSummary {
  /** When the backup was made, and how far apart its halves were taken (ms from snapshot end to export start). */
  backup_created_at: string;
  halves_apart_ms: number;
  documents: number;
  knowledge_bases: number;
  users: number;
  /** Records per collection restored into MongoDB. */
  collections: Record<string, number>;
  /** Chunks the snapshot brought back, and chunks in the index once reconciled. */
  chunks_restored: number;
  chunks: number;
  /** The reconcile: documents rebuilt from their stored originals, documents queued with no job queued again… */
  documents_rebuilt: number;
  documents_requeued: number;
  /** …ingestion jobs of the backup (work in flight when it was made) and of the reconcile run to their end… */
  jobs_run: number;
  /** …chunks no record claims (a document deleted or replaced between the halves) removed, with their documents. */
  chunks_removed: number;
  documents_with_chunks_removed: number;
  /** …and records the reconcile removed (contents, jobs, documents whose document or KB record is gone). */
  records_removed: number;
  not_rebuildable: string[];
  /** Every document's chunks match its record and no job is left: what the service then serves is consistent. */
  consistent: boolean;
  /** When not consistent: what `kbqa doctor` still finds. */
  remaining: string | null;
}

/** Reads and checks the manifest, then every file it names against its size and SHA-256. */
export async function verifyBackup(dir: string): Promise<BackupManifest> {
  let text: string;
  try {
    text = await readFile(join(dir, MANIFEST), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new BackupError(`${dir} has no ${MANIFEST}: not a backup, or one that did not finish (the manifest is written last)`);
    }
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BackupError(`${join(dir, MANIFEST)} is not JSON`);
  }
  const result = manifestSchema.safeParse(parsed);
  if (!result.success) {
    const version = (parsed as { format_version?: unknown } | null)?.format_version;
    const issue = result.error.issues[0];
    throw new BackupError(
      version !== undefined && version !== BACKUP_FORMAT_VERSION
        ? `${dir} is a backup of format version ${String(version)}; this kbqa reads version ${BACKUP_FORMAT_VERSION}`
        : `${join(dir, MANIFEST)} is not a kbqa backup manifest: ${issue.path.join('.')}: ${issue.message}`,
    );
  }
  const manifest = result.data;
  const damaged: string[] = [];
  const files = [...manifest.opensearch.files.map((file) => ({ ...file, folder: 'opensearch/' })), ...manifest.mongo.collections.map((file) => ({ ...file, folder: 'mongo/' }))];
  for (const file of files) {
    const path = safeRelativePath(file.path);
    if (path === null || !file.path.startsWith(file.folder)) {
      damaged.push(`${file.path}: not a path inside the backup's ${file.folder}`);
      continue;
    }
    const found = await hashFile(join(dir, path)).catch(() => null);
    if (found === null) damaged.push(`${file.path}: missing`);
    else if (found.bytes !== file.bytes) damaged.push(`${file.path}: ${found.bytes} bytes, the manifest says ${file.bytes}`);
    else if (found.sha256 !== file.sha256) damaged.push(`${file.path}: its SHA-256 differs from the manifest's`);
  }
  if (damaged.length > 0) {
    throw new BackupError(`${dir} is damaged (nothing was restored): ${damaged.slice(0, 5).join('; ')}${damaged.length > 5 ? ` and ${damaged.length - 5} more` : ''}`);
  }
  return manifest;
}

/** A manifest path as a relative path inside the backup, or null for one that would leave it. */
function safeRelativePath(path: string): string | null {
  const normalized = posix.normalize(path);
  if (normalized.startsWith('/') || normalized.startsWith('../') || normalized === '..' || normalized.includes('\\')) return null;
  return normalize(normalized);
}

async function hashFile(path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const part of createReadStream(path)) {
    hash.update(part as Buffer);
    bytes += (part as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

/**
 * Restores a backup into an empty stack: checks the backup and the target before writing anything, imports the
 * records, restores the chunk indices from the snapshot, applies the search assets, then reconciles the two halves.
 */
export async function restoreBackup(deps: RestoreDeps, dir: string, options: BackupOptions = {}): Promise<RestoreSummary> {
  const progress = options.progress ?? (() => {});
  const pollMs = options.pollMs ?? 500;
  const manifest = await verifyBackup(dir);
  progress(`backup verified: ${manifest.mongo.collections.length} collection file(s), ${manifest.opensearch.files.length} snapshot file(s)`);
  checkCompatible(deps, manifest);
  const emptyIndices = await checkTargetEmpty(deps, manifest);

  const collections: Record<string, number> = {};
  for (const collection of manifest.mongo.collections) {
    const input = createReadStream(join(dir, safeRelativePath(collection.path)!));
    const lines = createInterface({ input, crlfDelay: Infinity });
    const imported = await deps.store.importCollection(collection.name, lines);
    if (imported !== collection.documents) {
      throw new BackupError(`${collection.path}: ${imported} record(s) imported, the manifest says ${collection.documents}`);
    }
    await deps.store.createCollectionIndexes(collection.name, collection.indexes as BackupIndex[]);
    collections[collection.name] = imported;
    progress(`imported ${collection.name}: ${imported} record(s)`);
  }

  const chunksRestored = manifest.opensearch.snapshot === null ? 0 : await restoreChunkIndices(deps, dir, manifest, emptyIndices, pollMs, progress);
  await deps.search.applyAssets();
  progress(`search assets applied; reconciling records and chunks`);
  const outcome = await reconcile(deps, progress);
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

function checkCompatible(deps: RestoreDeps, manifest: BackupManifest): void {
  const { embedder, index_template: template } = manifest.opensearch;
  if (template !== CHUNKS_TEMPLATE) {
    throw new BackupError(`the backup's chunk index follows template ${template}, this kbqa ${CHUNKS_TEMPLATE}: restore it with the kbqa version that made it, then upgrade`);
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
  const nonEmpty = await deps.store.nonEmptyCollections(manifest.mongo.collections.map((collection) => collection.name));
  if (nonEmpty.length > 0) problems.push(`MongoDB database ${deps.store.databaseName()} holds records in ${nonEmpty.join(', ')}`);
  const { snapshots } = deps.search;
  const existing = [...new Set([...(await snapshots.chunkIndices()), ...(await snapshots.existingIndices(manifest.opensearch.indices))])];
  const empty: string[] = [];
  for (const index of existing) {
    const chunks = await snapshots.countIndex(index);
    if (chunks > 0) problems.push(`OpenSearch index ${index} holds ${chunks} chunk(s)`);
    else empty.push(index);
  }
  if (problems.length > 0) {
    throw new BackupError(`the target is not empty (${problems.join('; ')}): restore into an empty stack, a new database and a cluster without the chunk index`);
  }
  try {
    await stat(deps.config.opensearch.snapshotDir);
  } catch {
    throw new BackupError(`KBQA_OPENSEARCH_SNAPSHOT_DIR (${deps.config.opensearch.snapshotDir}) does not exist here: it must be the OpenSearch nodes' path.repo`);
  }
  return empty;
}

/**
 * Copies the backup's snapshot repository under the snapshot directory, registers it read-only, restores the
 * indices (with the chunk alias) and waits until every primary is back. The repository goes again afterwards: the
 * restored data lives in the nodes' data paths.
 */
async function restoreChunkIndices(
  deps: RestoreDeps,
  dir: string,
  manifest: BackupManifest,
  emptyIndices: string[],
  pollMs: number,
  progress: (line: string) => void,
): Promise<number> {
  const { snapshots } = deps.search;
  const indices = manifest.opensearch.indices;
  for (const index of emptyIndices) {
    progress(`deleting the empty index ${index} (a snapshot's index comes back under its own name)`);
    await snapshots.deleteIndex(index);
  }
  const name = `kbqa-restore-${stamp()}`;
  const repositoryDir = join(deps.config.opensearch.snapshotDir, name);
  // OpenSearch's user must read the copy. As root, hand it to the snapshot directory's owner (the local stack's
  // search user); as that owner, private modes do; as anyone else, the modes OpenSearch gives its own snapshots.
  const snapshotDirOwner = await stat(deps.config.opensearch.snapshotDir);
  const uid = process.getuid?.() ?? snapshotDirOwner.uid;
  const owner = uid === 0 && snapshotDirOwner.uid !== 0 ? { uid: snapshotDirOwner.uid, gid: snapshotDirOwner.gid } : undefined;
  const sameUser = owner !== undefined || uid === snapshotDirOwner.uid;
  const files = manifest.opensearch.files.map((file) => file.path.slice('opensearch/'.length));
  try {
    await copyTree(join(dir, 'opensearch'), repositoryDir, files, {
      fileMode: sameUser ? PRIVATE_FILE : 0o644,
      dirMode: sameUser ? PRIVATE_DIR : 0o755,
      ...(owner ? { owner } : {}),
    });
    await snapshots.registerRepository(name, name, { readonly: true });
    progress(`restoring ${indices.join(', ')} from the snapshot`);
    await snapshots.startRestore(name, manifest.opensearch.snapshot!, indices, deps.config.opensearch.replicas);
    let lastReport = Date.now();
    for (;;) {
      const health = await snapshots.indexHealth(indices);
      if (health.status !== 'red' && health.initializingShards === 0) break;
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        progress(`restore: ${health.activePrimaryShards} primary shard(s) back, ${health.initializingShards} recovering`);
      }
      await sleep(pollMs);
    }
    let chunks = 0;
    for (const index of indices) chunks += await snapshots.countIndex(index);
    progress(`restored ${chunks} chunk(s)`);
    return chunks;
  } finally {
    await snapshots.deleteRepository(name).catch(() => undefined);
    await removeQuietly(repositoryDir, progress);
  }
}

type ReconcileOutcome = Pick<
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
async function reconcile(deps: RestoreDeps, progress: (line: string) => void): Promise<ReconcileOutcome> {
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
          const rebuilt = await reindexDocuments(await loadDocumentDeps(), ids, tenths('rebuilt', progress));
          return [...rebuilt.failed, ...rebuilt.skipped];
        },
      },
    );
    count(outcome, report, notRebuildable);
    const jobs = await deps.store.listJobs();
    if (report.clean && jobs.length === 0) break;
    if (jobs.length > 0) outcome.jobs_run += await runJobs(await loadDocumentDeps(), progress);
  }
  outcome.not_rebuildable = [...notRebuildable];
  const final = await runDoctor({ store: deps.store, search: deps.search }, { graceMs: 0 });
  const left = await deps.store.listJobs();
  outcome.consistent = final.clean && left.length === 0;
  if (!outcome.consistent) {
    outcome.remaining = `${formatDoctorReport(final)}${left.length > 0 ? `\ningestion jobs still queued: ${left.length}` : ''}`;
  }
  return outcome;
}

/** A progress line per tenth done (restores can rebuild thousands of documents). */
function tenths(label: string, progress: (line: string) => void): (finished: number, total: number) => void {
  let last = -1;
  return (finished, total) => {
    const tenth = total === 0 ? 10 : Math.floor((finished / total) * 10);
    if (tenth === last) return;
    last = tenth;
    progress(`${label}: ${finished}/${total}`);
  };
}

function count(outcome: ReconcileOutcome, report: DoctorReport, notRebuildable: Set<string>): void {
  const fixed = report.fixed;
  if (!fixed) return;
  outcome.documents_rebuilt += fixed.documents_rebuilt;
  outcome.documents_requeued += fixed.documents_requeued;
  outcome.documents_with_chunks_removed += fixed.chunks_removed_for_documents;
  // Nothing else writes during a restore, so what the doctor found is what it removed.
  outcome.chunks_removed +=
    report.orphan_chunks.reduce((sum, orphan) => sum + orphan.chunks, 0) + report.stale_chunk_versions.reduce((sum, stale) => sum + stale.chunks, 0);
  outcome.records_removed += fixed.contents_removed + fixed.jobs_removed + fixed.documents_removed;
  for (const id of fixed.not_rebuildable) notRebuildable.add(id);
}

/** Runs every queued ingestion job in this process until none is left; returns how many there were. */
async function runJobs(deps: DocumentDeps, progress: (line: string) => void, pollMs = 500): Promise<number> {
  const seen = new Set<string>();
  let lastReport = 0;
  for (;;) {
    const jobs = await deps.store.listJobs();
    if (jobs.length === 0) return seen.size;
    for (const job of jobs) {
      if (seen.has(job._id)) continue;
      seen.add(job._id);
      // The runner of the kbqa command takes only the jobs it is handed (API processes may share the store).
      deps.jobs.nudge(job._id);
    }
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      progress(`ingestion jobs: ${jobs.length} left`);
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
  if (summary.not_rebuildable.length > 0) lines.push(`not rebuildable (no stored original): ${summary.not_rebuildable.join(', ')}`);
  lines.push(
    summary.consistent
      ? 'consistent: every document\'s chunks match its record'
      : `NOT consistent; \`kbqa doctor\` finds:\n${summary.remaining ?? ''}`,
  );
  return lines.join('\n');
}

/** The manifest as a line a person reads. */
export function formatBackupManifest(dir: string, manifest: BackupManifest): string {
  const records = manifest.mongo.collections.reduce((sum, collection) => sum + collection.documents, 0);
  const documents = manifest.mongo.collections.find((collection) => collection.name === 'documents')?.documents ?? 0;
  const bytes = [...manifest.opensearch.files, ...manifest.mongo.collections].reduce((sum, file) => sum + file.bytes, 0);
  return (
    `backup written to ${dir}: ${documents} document(s), ${records} record(s) in ${manifest.mongo.collections.length} collection(s), ` +
    `snapshot of ${manifest.opensearch.indices.join(', ') || 'no index'}; ${bytes} bytes; skipped ${manifest.mongo.skipped.join(', ')} (transient)`
  );
}
