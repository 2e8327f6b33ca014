// A fresh job record for a version (newJob): what a request, an upload or the doctor writes to queue or run a job.
import type { DocumentRecord, IngestJobRecord, MetadataEntry } from '../store/index.ts';

/** A fresh job record for a version (held by `owner` when a request runs it, otherwise free to claim). */
export function newJob(
  document: Pick<DocumentRecord, '_id' | 'knowledge_base_id'>,
  version: {
    version: number;
    content_id: string;
    filename: string;
    title: string;
    replaces: number | null;
    file_id?: string | null;
    /** The version's metadata (leave it out rather than pass undefined: the driver would store null). */
    metadata?: MetadataEntry[];
  },
  mode: 'sync' | 'async',
  owner: string | null,
  leaseMs: number,
): IngestJobRecord {
  const now = Date.now();
  return {
    _id: document._id,
    knowledge_base_id: document.knowledge_base_id,
    ...version,
    phase: 'build',
    hidden: [version.version],
    built: null,
    lease_owner: owner,
    lease_until: owner ? now + leaseMs : null,
    claims: 0,
    mode,
    attempts: owner ? 1 : 0,
    not_before: 0,
    created_at: new Date(now),
  };
}
