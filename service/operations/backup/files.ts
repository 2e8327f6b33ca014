// The file helpers of a backup: DIR and every file in it private to its owner, every file written, copied and
// verified through one SHA-256 stream, manifest paths checked to stay inside DIR.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, chown, mkdir, readdir, rm } from 'node:fs/promises';
import { join, posix, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BackupError } from '../../errors.ts';
import type { BackupFile } from './manifest.ts';

// Everything written into DIR is for its owner only: the export holds password hashes and API key digests.
export const PRIVATE_FILE = 0o600;

export const PRIVATE_DIR = 0o700;

export const stamp = () =>
  `${new Date().toISOString().replace(/[-:.]/g, '').toLowerCase()}-${randomBytes(3).toString('hex')}`;

/** The file a collection is exported to (collection names may hold characters a file name should not). */
export const collectionFile = (collection: string) => `mongo/${encodeURIComponent(collection)}.jsonl`;

/** DIR must not exist or be empty; returns whether this call created it. */
export async function prepareBackupDirectory(dir: string): Promise<boolean> {
  let entries: string[] | null;
  try {
    entries = await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') entries = null;
    else if (code === 'ENOTDIR') throw new BackupError(`${dir} is a file: a backup goes into a new or empty directory`);
    else throw error;
  }
  if (entries !== null && entries.length > 0)
    throw new BackupError(`${dir} is not empty: a backup goes into a new or empty directory`);
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
  await chmod(dir, PRIVATE_DIR);
  return entries === null;
}

/**
 * Streams `parts` through SHA-256 into `target` (a new file, given `mode`), or only through the hash: their size
 * and hash. Every file of a backup is written, copied and verified through this one.
 */
export async function hashStream(
  parts: AsyncIterable<Buffer>,
  target?: { path: string; mode: number },
): Promise<{ bytes: number; sha256: string }> {
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
export async function writeLines(
  dir: string,
  path: string,
  lines: AsyncIterable<string>,
): Promise<BackupFile & { lines: number }> {
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
export async function listTree(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) =>
      join(entry.parentPath, entry.name)
        .slice(root.length + 1)
        .split(sep)
        .join('/'),
    )
    .sort();
}

interface TreeCopy {
  fileMode: number;
  dirMode: number;
  /** Give every copied file and directory this owner (root restoring into a directory OpenSearch's user reads). */
  owner?: { uid: number; gid: number };
}

export async function copyTree(
  source: string,
  target: string,
  files: string[],
  options: TreeCopy,
): Promise<Array<{ path: string; bytes: number; sha256: string }>> {
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
    copied.push({
      path: file,
      ...(await hashStream(createReadStream(join(source, ...parts)), { path: destination, mode: options.fileMode })),
    });
    if (options.owner) await chown(destination, options.owner.uid, options.owner.gid);
  }
  return copied;
}

/** Whether `path` is gone; a progress line when it could not be removed. */
export async function removeQuietly(path: string, progress: (line: string) => void): Promise<boolean> {
  try {
    await rm(path, { recursive: true, force: true });
    return true;
  } catch (error) {
    progress(`could not remove ${path} (${(error as Error).message}); remove it by hand`);
    return false;
  }
}

export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export async function mapInOrder<T, U>(items: T[], map: (item: T) => Promise<U>): Promise<U[]> {
  const mapped: U[] = [];
  for (const item of items) mapped.push(await map(item));
  return mapped;
}

/**
 * A manifest path, normalized (forward slashes), when it names a file inside `folder` of the backup; else null (one
 * that would leave it, or the folder itself). The check is on the normalized path, the one a restore then uses.
 */
export function safeRelativePath(path: string, folder: string): string | null {
  if (path.includes('\\')) return null;
  const normalized = posix.normalize(path);
  if (!normalized.startsWith(folder) || normalized.length === folder.length || normalized.endsWith('/')) return null;
  return normalized;
}
