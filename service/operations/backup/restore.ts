// `kbqa backup create DIR` / `kbqa backup restore DIR`: the chunk index as an OpenSearch snapshot, MongoDB (records,
// original texts, stored PDFs) as Extended JSON lines, and a manifest that names and checksums every file.
//
// The two halves are taken one after the other, not at one instant: the snapshot first, then the records. So the
// records may be newer than the chunks (a document ingested, replaced or deleted in between), never the reverse
// in a way that loses anything: chunks are derived data, rebuilt from the stored originals the records export
// carries. Restore therefore ends with a reconcile (`kbqa doctor --fix`'s machinery, operations/doctor.ts): chunks no
// record claims are removed, documents whose chunks are missing or of another version are rebuilt from their stored
// original, and the command returns only once the ingestion jobs that does are done.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, chown, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { join, posix, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import { BackupError } from '../../errors.ts';
import {
  CHUNKS_INGEST_PIPELINE,
  CHUNKS_TEMPLATE,
  HYBRID_EXPLAIN_SEARCH_PIPELINE,
  HYBRID_SEARCH_PIPELINE,
  type SearchIndex,
} from '../../search/index.ts';
import { chunkIndexVersion, chunkTemplateVersion } from '../../search/snapshots.ts';
import { chunkTemplateName } from '../../search/assets.ts';
import { BACKUP_COLLECTIONS, TRANSIENT_COLLECTIONS, type BackupIndex, type Store } from '../../store/index.ts';
import { runDoctor, formatDoctorReport, type DoctorReport } from '../doctor.ts';
import { reindexDocuments, type DocumentDeps } from '../../commands/documents.ts';

export const BACKUP_FORMAT = 'kbqa-backup';
export const BACKUP_FORMAT_VERSION = 1;
const MANIFEST = 'manifest.json';

const fileSchema = z.object({
  /** Relative to the backup directory, with forward slashes. */
  path: z.string().min(1),
  bytes: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type BackupFile = z.infer<typeof fileSchema>;

const timestamp = z.string().datetime();

/** KBQA_CHUNKS_ALIAS's form (config.ts). */
const chunkAliasSchema = z.string().regex(/^kbqa-chunks(?:-[a-z0-9]+)*$/, 'not a kbqa chunk alias (kbqa-chunks[-<name>])');

const manifestSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  format_version: z.literal(BACKUP_FORMAT_VERSION),
  /** When the backup was complete (the manifest is written last). */
  created_at: timestamp,
  opensearch: z.object({
    started_at: timestamp,
    finished_at: timestamp,
    alias: chunkAliasSchema,
    /** The template version of the snapshot's index (kbqa-chunks-v<N>[-<name>]); kbqa-chunks-v1 in older backups, whatever the alias. */
    index_template: z.string(),
    ingest_pipeline: z.string(),
    search_pipelines: z.array(z.string()),
    /** The embedder the snapshot's index was built with (its _meta; older backups: the configured one). */
    embedder: z.object({ name: z.string(), dimensions: z.number().int() }),
    /** Null when there was no chunk index to snapshot (a stack that never started the API). */
    snapshot: z.string().nullable(),
    /**
     * The indices the alias pointed to (one: start-up and migrations keep it so), each a chunk index of the alias's
     * family (kbqa-chunks-v<N>[-<name>]-<embedder>): a restore deletes an empty index of such a name and restores
     * over it, so a manifest naming any other index is refused.
     */
    indices: z.array(z.string()),
    /** Indices of the family the alias did not point to (kept by a migration until drop-old): not in the backup. */
    left_out: z.array(z.string()).optional(),
    /** The snapshot repository's files, copied into opensearch/. */
    files: z.array(fileSchema),
  })
    .superRefine((opensearch, context) => {
      opensearch.indices.forEach((index, position) => {
        if (chunkIndexVersion(index, opensearch.alias) === null) {
          context.addIssue({ code: 'custom', path: ['indices', position], message: `not a kbqa chunk index of ${opensearch.alias} (${chunkTemplateName(1, opensearch.alias)}-…, or another version)` });
        }
      });
    }),
  mongo: z.object({
    started_at: timestamp,
    finished_at: timestamp,
    database: z.string(),
    /** Collections left out on purpose (store/backup.ts TRANSIENT_COLLECTIONS). */
    skipped: z.array(z.string()),
    collections: z.array(
      fileSchema.extend({
        /** Only kbqa's collections, never a transient one (sessions): a restore writes into each. */
        name: z.enum(BACKUP_COLLECTIONS),
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
})
  .refine((manifest) => new Set(manifest.mongo.collections.map((collection) => collection.name)).size === manifest.mongo.collections.length, {
    error: 'a collection is listed twice',
    path: ['mongo', 'collections'],
  })
  .refine((manifest) => (manifest.opensearch.snapshot === null) === (manifest.opensearch.indices.length === 0), {
    error: 'a snapshot names its indices, and indices come with a snapshot',
    path: ['opensearch', 'indices'],
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

export interface RestoreOptions extends Omit<BackupOptions, 'afterSnapshot'> {
  /** Progress of rebuilding documents (`finished` of `total`): the CLI's progress bar; none by default. */
  rebuildProgress?: (label: string) => (finished: number, total: number) => void;
  /** How long the restored indices may take to recover, and a shard may stay unassigned with none recovering. */
  recoveryTimeoutMs?: number;
  unassignedTimeoutMs?: number;
  /** How long the reconcile's ingestion jobs may go without one of them finishing (a write block on the index). */
  jobsStallTimeoutMs?: number;
  /** Runs once the chunk indices are restored, before the reconcile: for tests of a restore failing there. */
  afterChunkRestore?: () => Promise<void>;
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

/**
 * Streams `parts` through SHA-256 into `target` (a new file, given `mode`), or only through the hash: their size
 * and hash. Every file of a backup is written, copied and verified through this one.
 */
async function hashStream(parts: AsyncIterable<Buffer>, target?: { path: string; mode: number }): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  async function* hashed() {
    for await (const part of parts) {
      hash.update(part);
      bytes += part.length;
      yield part;
    }
  }
  if (target) {
    await pipeline(Readable.from(hashed()), createWriteStream(target.path, { flags: 'wx', mode: target.mode }));
    await chmod(target.path, target.mode);
  } else {
    for await (const part of hashed()) void part;
  }
  return { bytes, sha256: hash.digest('hex') };
}

/** Streams `lines` into a new file (one per line), hashing as it writes. */
async function writeLines(dir: string, path: string, lines: AsyncIterable<string>): Promise<BackupFile & { lines: number }> {
  let count = 0;
  async function* encoded() {
    for await (const line of lines) {
      count += 1;
      yield Buffer.from(`${line}\n`);
    }
  }
  const written = await hashStream(encoded(), { path: join(dir, path), mode: PRIVATE_FILE });
  return { path, ...written, lines: count };
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
    copied.push({ path: file, ...(await hashStream(createReadStream(join(source, ...parts)), { path: destination, mode: options.fileMode })) });
    if (options.owner) await chown(destination, options.owner.uid, options.owner.gid);
  }
  return copied;
}

/** Whether `path` is gone; a progress line when it could not be removed. */
async function removeQuietly(path: string, progress: (line: string) => void): Promise<boolean> {
  try {
    await rm(path, { recursive: true, force: true });
    return true;
  } catch (error) {
    progress(`could not remove ${path} (${(error as Error).message}); remove it by hand`);
    return false;
  }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

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
  const { alias } = search.snapshots;
  // Only what the alias points to: an index a migration keeps beside it serves nothing (and `kbqa index rollback`
  // to it after a restore would be to an index the records no longer match).
  const indices = await search.snapshots.chunkIndices();
  const leftOut = (await search.indices.family()).filter((entry) => !entry.aliased).map((entry) => entry.index);
  if (leftOut.length > 0) progress(`not in the backup: ${leftOut.join(', ')} (kept beside the alias by a migration; only the live index is snapshotted)`);
  const versions = indices.map((index) => chunkIndexVersion(index, alias));
  const foreign = indices.filter((_, position) => versions[position] === null);
  if (foreign.length > 0) throw new BackupError(`the alias ${alias} points to ${foreign.join(', ')}, not named as a kbqa chunk index of it: not backed up`);
  // The live index's own record of what built it; an index older than that record was built by the configured embedder.
  const meta = indices.length > 0 ? await search.indices.meta(indices[0]) : null;
  const described = {
    alias,
    index_template: chunkTemplateName(versions[0] ?? 1, alias),
    ingest_pipeline: CHUNKS_INGEST_PIPELINE,
    search_pipelines: [HYBRID_SEARCH_PIPELINE, HYBRID_EXPLAIN_SEARCH_PIPELINE],
    embedder: meta && meta.embedder.dimensions > 0 ? meta.embedder : { name: deps.embedder.modelName, dimensions: deps.embedder.dimensions },
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
  const { collections: names, others } = await store.listBackupCollections();
  if (others.length > 0) progress(`left out, not kbqa's: ${others.join(', ')}`);
  for (const name of names) {
    const indexes = await store.listCollectionIndexes(name);
    const written = await writeLines(dir, collectionFile(name), store.exportCollection(name));
    collections.push({ name, path: written.path, bytes: written.bytes, sha256: written.sha256, documents: written.lines, indexes });
    progress(`exported ${name}: ${written.lines} record(s)`);
  }
  return { started_at: startedAt, finished_at: new Date().toISOString(), database: store.databaseName(), skipped: [...TRANSIENT_COLLECTIONS], collections };
}

export interface RestoreDeps extends BackupDeps {
  /** host and port: where this configuration's API would answer (restore refuses while one does). */
  config: BackupDeps['config'] & Pick<Config, 'host' | 'port'> & { ingestion: Pick<Config['ingestion'], 'leaseMs'> };
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

/**
 * Reads and checks the manifest, then every file it names against its size and SHA-256. Returns the manifest with
 * every file's path normalized (`opensearch/./a` → `opensearch/a`): the path that was checked is the one used.
 */
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
  const damaged: string[] = [];
  /** The file's normalized path, checked to be inside `folder` and to match the manifest's size and hash. */
  const checked = async <File extends BackupFile>(file: File, folder: 'opensearch/' | 'mongo/'): Promise<File> => {
    const path = safeRelativePath(file.path, folder);
    if (path === null) {
      damaged.push(`${file.path}: not a path inside the backup's ${folder}`);
      return file;
    }
    const found = await hashStream(createReadStream(join(dir, ...path.split('/')))).catch(() => null);
    if (found === null) damaged.push(`${file.path}: missing`);
    else if (found.bytes !== file.bytes) damaged.push(`${file.path}: ${found.bytes} bytes, the manifest says ${file.bytes}`);
    else if (found.sha256 !== file.sha256) damaged.push(`${file.path}: its SHA-256 differs from the manifest's`);
    return { ...file, path };
  };
  const { opensearch, mongo } = result.data;
  const manifest: BackupManifest = {
    ...result.data,
    opensearch: { ...opensearch, files: await mapInOrder(opensearch.files, (file) => checked(file, 'opensearch/')) },
    mongo: { ...mongo, collections: await mapInOrder(mongo.collections, (collection) => checked(collection, 'mongo/')) },
  };
  if (damaged.length > 0) {
    throw new BackupError(`${dir} is damaged (nothing was restored): ${damaged.slice(0, 5).join('; ')}${damaged.length > 5 ? ` and ${damaged.length - 5} more` : ''}`);
  }
  return manifest;
}

async function mapInOrder<T, U>(items: T[], map: (item: T) => Promise<U>): Promise<U[]> {
  const mapped: U[] = [];
  for (const item of items) mapped.push(await map(item));
  return mapped;
}

/**
 * A manifest path, normalized (forward slashes), when it names a file inside `folder` of the backup; else null (one
 * that would leave it, or the folder itself). The check is on the normalized path, the one a restore then uses.
 */
function safeRelativePath(path: string, folder: string): string | null {
  if (path.includes('\\')) return null;
  const normalized = posix.normalize(path);
  if (!normalized.startsWith(folder) || normalized.length === folder.length || normalized.endsWith('/')) return null;
  return normalized;
}

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
export async function restoreBackup(deps: RestoreDeps, dir: string, options: RestoreOptions = {}): Promise<RestoreSummary> {
  const progress = options.progress ?? (() => {});
  const manifest = await verifyBackup(dir);
  progress(`backup verified: ${manifest.mongo.collections.length} collection file(s), ${manifest.opensearch.files.length} snapshot file(s)`);
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
        throw new BackupError(`${collection.path}: ${imported} record(s) imported, the manifest says ${collection.documents}`);
      }
      await deps.store.createCollectionIndexes(collection.name, collection.indexes as BackupIndex[]);
      collections[collection.name] = imported;
      progress(`imported ${collection.name}: ${imported} record(s)`);
    }
    if (manifest.opensearch.snapshot !== null) chunksRestored = await restoreChunkIndices(deps, dir, manifest, emptyIndices, writes, options, progress);
    await options.afterChunkRestore?.();
    await deps.search.applyAssets();
    // Only now may anyone take the imported jobs: their chunks go to an index that exists.
    released = await deps.store.releaseRestoredJobs(Date.now());
  } catch (error) {
    throw await undoRestore(deps, writes, error, progress);
  }
  for (const left of writes.leftBehind) progress(`left behind: ${left}`);
  progress(`search assets applied, ${released} ingestion job(s) of the backup released; reconciling records and chunks`);
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
async function undoRestore(deps: RestoreDeps, writes: RestoreWrites, error: unknown, progress: (line: string) => void): Promise<BackupError> {
  progress(`restore failed (${messageOf(error)}); undoing what it wrote`);
  const left = [...writes.leftBehind];
  for (const index of writes.restoredIndices) {
    await deps.search.snapshots.deleteIndex(index).catch((failure: unknown) => left.push(`OpenSearch index ${index} (${messageOf(failure)})`));
  }
  // Not data, but the target had it: applying the assets makes it again (as the API does when it starts).
  const notBack =
    writes.deletedIndices.length > 0 && (await deps.search.applyAssets().then(() => false, () => true))
      ? ` The empty chunk index ${writes.deletedIndices.join(', ')} it deleted is not back: the API makes it when it starts.`
      : '';
  for (const collection of [...writes.collections].reverse()) {
    await deps.store.dropCollection(collection).catch((failure: unknown) => left.push(`records in MongoDB collection ${collection} (${messageOf(failure)})`));
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
    async (response) => response.ok && ((await response.json().catch(() => null)) as { status?: unknown } | null)?.status === 'ok',
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
    throw new BackupError(`the backup's chunk index follows template ${template}, which this kbqa does not name (kbqa-chunks-v<N>[-<name>]): restore it with the kbqa version that made it, then upgrade`);
  }
  // The index comes back with its own mappings and analysis; a version the files here do not have is drift, as after a rollback.
  const current = deps.search.indices.assets().version;
  if (version !== current) {
    progress(`the backup's index is of template version ${version}, this kbqa's files are at v${current}: it is restored as it is; kbqa index status shows the drift and kbqa index migrate resolves it`);
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
  const owner = uid === 0 && snapshotDirOwner.uid !== 0 ? { uid: snapshotDirOwner.uid, gid: snapshotDirOwner.gid } : undefined;
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
      await snapshots.deleteRepository(name).catch((error: unknown) =>
        writes.leftBehind.push(`snapshot repository ${name}, registered (${messageOf(error)}): DELETE _snapshot/${name}`),
      );
    }
    if (!(await removeQuietly(repositoryDir, progress))) writes.leftBehind.push(`the repository copy ${repositoryDir}`);
  }
}

/**
 * Polls until the restored indices are no longer red and no shard is recovering. Fails when a shard stays unassigned
 * with none recovering (OpenSearch gave up on it: a recovery failed its retries) or recovery outlasts its deadline.
 */
async function waitForRecovery(deps: RestoreDeps, indices: string[], options: RestoreOptions, pollMs: number, progress: (line: string) => void) {
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
      throw new BackupError(`the restore of ${indices.join(', ')} did not finish within ${Math.round(recoveryTimeoutMs / 60_000)} min (${state})`);
    }
    if (now - lastReport > 10_000) {
      lastReport = now;
      progress(`restore: ${state}`);
    }
    await sleep(pollMs);
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
async function reconcile(deps: RestoreDeps, options: RestoreOptions, progress: (line: string) => void): Promise<ReconcileOutcome> {
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
    report.orphan_chunks.reduce((sum, orphan) => sum + orphan.chunks, 0) + report.stale_chunk_versions.reduce((sum, stale) => sum + stale.chunks, 0);
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
    `snapshot of ${manifest.opensearch.indices.join(', ') || 'no index'}` +
    `${manifest.opensearch.left_out?.length ? ` (not of ${manifest.opensearch.left_out.join(', ')}, kept beside the alias by a migration)` : ''}; ` +
    `${bytes} bytes; skipped ${manifest.mongo.skipped.join(', ')} (transient)`
  );
}
