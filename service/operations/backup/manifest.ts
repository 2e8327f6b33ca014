// What a backup is: the manifest that names and checksums every file of DIR (written last by create.ts, checked by
// verify.ts), and what the backup commands take and give (deps, options, the restore's summary).
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { SearchIndex } from '../../search/index.ts';
import { chunkIndexVersion } from '../../search/snapshots.ts';
import { chunkTemplateName } from '../../search/assets.ts';
import { BACKUP_COLLECTIONS, type Store } from '../../store/index.ts';
import type { DocumentDeps } from '../../commands/documents.ts';

export const BACKUP_FORMAT = 'kbqa-backup';

export const BACKUP_FORMAT_VERSION = 1;

export const MANIFEST = 'manifest.json';

const fileSchema = z.object({
  /** Relative to the backup directory, with forward slashes. */
  path: z.string().min(1),
  bytes: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

export type BackupFile = z.infer<typeof fileSchema>;

const timestamp = z.string().datetime();

/** KBQA_CHUNKS_ALIAS's form (config.ts). */
const chunkAliasSchema = z
  .string()
  .regex(/^kbqa-chunks(?:-[a-z0-9]+)*$/, 'not a kbqa chunk alias (kbqa-chunks[-<name>])');

export const manifestSchema = z
  .object({
    format: z.literal(BACKUP_FORMAT),
    format_version: z.literal(BACKUP_FORMAT_VERSION),
    /** When the backup was complete (the manifest is written last). */
    created_at: timestamp,
    opensearch: z
      .object({
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
            context.addIssue({
              code: 'custom',
              path: ['indices', position],
              message: `not a kbqa chunk index of ${opensearch.alias} (${chunkTemplateName(1, opensearch.alias)}-…, or another version)`,
            });
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
  .refine(
    (manifest) =>
      new Set(manifest.mongo.collections.map((collection) => collection.name)).size ===
      manifest.mongo.collections.length,
    {
      error: 'a collection is listed twice',
      path: ['mongo', 'collections'],
    },
  )
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

/** The manifest as a line a person reads. */
export function formatBackupManifest(dir: string, manifest: BackupManifest): string {
  const records = manifest.mongo.collections.reduce((sum, collection) => sum + collection.documents, 0);
  const documents = manifest.mongo.collections.find((collection) => collection.name === 'documents')?.documents ?? 0;
  const bytes = [...manifest.opensearch.files, ...manifest.mongo.collections].reduce(
    (sum, file) => sum + file.bytes,
    0,
  );
  return (
    `backup written to ${dir}: ${documents} document(s), ${records} record(s) in ${manifest.mongo.collections.length} collection(s), ` +
    `snapshot of ${manifest.opensearch.indices.join(', ') || 'no index'}` +
    `${manifest.opensearch.left_out?.length ? ` (not of ${manifest.opensearch.left_out.join(', ')}, kept beside the alias by a migration)` : ''}; ` +
    `${bytes} bytes; skipped ${manifest.mongo.skipped.join(', ')} (transient)`
  );
}
