// Copying document versions' chunks from one index to another (a migration's fill and catch-up), and the query
// that picks those versions out of an index. A `_reindex` task, polled, with a deadline: its own file because the
// polling and its failure messages are most of what `kbqa index migrate` waits on.
import { chunkVersionQuery, documentVersionId } from './chunks.ts';
import type { SearchClient } from './client.ts';
import { MIGRATE_COMMAND } from './drift.ts';
import { reindexScript } from './reindexScript.ts';
import { CopyTimedOutError } from '../errors.ts';

export interface DocumentVersion {
  document_id: string;
  version: number;
}

const TASK_POLL_MS = 250;
/** How long one `_reindex` of a batch of versions may run before it is cancelled (a stuck task, a cluster in trouble). */
export const COPY_TIMEOUT_MS = 10 * 60_000;

/**
 * Copies these document versions' chunks from one index to another with `_reindex` (a task, polled: a big batch
 * outlasts a request timeout). Through the target's default pipeline, like any chunk write.
 */
export async function copyVersions(
  client: SearchClient,
  source: string,
  target: string,
  versions: DocumentVersion[],
  timeoutMs: number,
): Promise<number> {
  if (versions.length === 0) return 0;
  const script = reindexScript(source, target);
  const task = await client.request<{ task: string }>('POST', '/_reindex', {
    querystring: { wait_for_completion: false, refresh: false },
    body: {
      conflicts: 'proceed',
      source: { index: source, size: 500, query: versionsQuery(versions) },
      dest: { index: target },
      // Metadata layouts (v1 → v2) and sentence-vector forms (v2 → v3) are converted as they are copied.
      ...(script ? { script } : {}),
    },
  });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (Date.now() > deadline) {
      // Cancelled, not left running: a later pass copies these versions again (conflicts: proceed).
      await client.request('POST', `/_tasks/${task.task}/_cancel`, { acceptStatuses: [404], idempotent: true });
      throw new CopyTimedOutError(
        `_reindex ${source} → ${target} of ${versions.length} document version(s) did not finish within ${Math.round(timeoutMs / 1000)} s (task ${task.task}, cancelled): ` +
          `check the cluster's health (kbqa index status), then run ${MIGRATE_COMMAND} again`,
      );
    }
    const status = await client.request<{
      completed: boolean;
      response?: {
        created: number;
        updated: number;
        failures?: Array<{ cause?: { type?: string; reason?: string } }>;
      };
      error?: { type?: string; reason?: string };
    }>('GET', `/_tasks/${task.task}`);
    if (status.completed) {
      const failure = status.error ?? status.response?.failures?.[0]?.cause;
      if (failure)
        throw new Error(`_reindex ${source} → ${target} failed: ${failure.type ?? ''} ${failure.reason ?? ''}`.trim());
      return (status.response?.created ?? 0) + (status.response?.updated ?? 0);
    }
    await new Promise((resolve) => setTimeout(resolve, TASK_POLL_MS));
  }
}

/** Chunks of any of these document versions: one terms clause on the version id, one clause per legacy version 0. */
export function versionsQuery(versions: DocumentVersion[]): object {
  const ids = versions
    .filter((entry) => entry.version > 0)
    .map((entry) => documentVersionId(entry.document_id, entry.version));
  const legacy = versions
    .filter((entry) => entry.version === 0)
    .map((entry) => chunkVersionQuery(entry.document_id, 0));
  return {
    bool: {
      should: [...(ids.length > 0 ? [{ terms: { document_version_id: ids } }] : []), ...legacy],
      minimum_should_match: 1,
    },
  };
}
