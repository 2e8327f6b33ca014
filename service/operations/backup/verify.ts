// `kbqa backup` DIR checked before anything is restored: the manifest against its schema, every file it names
// against its size and SHA-256.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BackupError } from '../../errors.ts';
import { hashStream, mapInOrder, safeRelativePath } from './files.ts';
import { BACKUP_FORMAT_VERSION, MANIFEST, manifestSchema, type BackupFile, type BackupManifest } from './manifest.ts';

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
      throw new BackupError(
        `${dir} has no ${MANIFEST}: not a backup, or one that did not finish (the manifest is written last)`,
      );
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
    else if (found.bytes !== file.bytes)
      damaged.push(`${file.path}: ${found.bytes} bytes, the manifest says ${file.bytes}`);
    else if (found.sha256 !== file.sha256) damaged.push(`${file.path}: its SHA-256 differs from the manifest's`);
    return { ...file, path };
  };
  const { opensearch, mongo } = result.data;
  const manifest: BackupManifest = {
    ...result.data,
    opensearch: { ...opensearch, files: await mapInOrder(opensearch.files, (file) => checked(file, 'opensearch/')) },
    mongo: {
      ...mongo,
      collections: await mapInOrder(mongo.collections, (collection) => checked(collection, 'mongo/')),
    },
  };
  if (damaged.length > 0) {
    throw new BackupError(
      `${dir} is damaged (nothing was restored): ${damaged.slice(0, 5).join('; ')}${damaged.length > 5 ? ` and ${damaged.length - 5} more` : ''}`,
    );
  }
  return manifest;
}
