// Snapshots of the chunk indices for `kbqa backup` (operations/backup/): filesystem repositories under the nodes'
// path.repo, one per backup or restore, registered for the operation and removed after it. An admin path, never a
// request's: these calls may take minutes, so the slow ones are started and then polled, each poll well inside the
// client's request timeout.
import { SnapshotRepositoryError, UpstreamUnavailableError } from '../errors.ts';
import { CHUNKS_ALIAS, chunkTemplateName } from './assets.ts';
import type { OpenSearchFailure, SearchClient } from './client.ts';

const VERSIONED = /^kbqa-chunks-v(\d{1,6})-/;
const INDEX_NAME = /^[a-z0-9][a-z0-9._-]*$/;

/**
 * The template version of a chunk index of this alias's family, read from its name
 * (kbqa-chunks-v<N>[-<name>]-<embedder>, assets.ts chunkIndexName); null for any other name. A restore deletes an
 * empty index of such a name and restores over it, so a backup naming any other index is refused. The name cannot
 * tell kbqa-chunks-v1-<name>-<embedder> of kbqa-chunks-<name> from an embedder called <name>-<embedder> of
 * kbqa-chunks: enough here (both are kbqa's chunk indices), not for telling families apart (chunkIndices.ts reads _meta).
 */
export function chunkIndexVersion(index: string, alias: string): number | null {
  const version = Number(VERSIONED.exec(index)?.[1] ?? 0);
  if (version < 1 || !INDEX_NAME.test(index)) return null;
  const family = `${chunkTemplateName(version, alias)}-`;
  return index.startsWith(family) && index.length > family.length ? version : null;
}

/** The template version a template name of this alias's family says (kbqa-chunks-v<N>[-<name>]); null for another name. */
export function chunkTemplateVersion(template: string, alias: string): number | null {
  const version = Number(/^kbqa-chunks-v(\d{1,6})/.exec(template)?.[1] ?? 0);
  return version >= 1 && template === chunkTemplateName(version, alias) ? version : null;
}

export type SnapshotState = 'IN_PROGRESS' | 'SUCCESS' | 'FAILED' | 'PARTIAL' | 'INCOMPATIBLE';

export interface SnapshotStatus {
  state: SnapshotState;
  shards: { total: number; successful: number; failed: number };
  /** Each failed shard's index and reason, as OpenSearch words it. */
  failures: string[];
}

/** Health of some indices: red while a restored primary is still being recovered from the repository. */
export interface IndexHealth {
  status: 'green' | 'yellow' | 'red';
  activePrimaryShards: number;
  initializingShards: number;
  unassignedShards: number;
}

function repositoryProblem(error: unknown, repository: string): Error {
  const cause = error instanceof UpstreamUnavailableError ? (error.cause as OpenSearchFailure | undefined) : undefined;
  if (cause?.type === 'repository_exception' || cause?.type === 'repository_verification_exception') {
    return new SnapshotRepositoryError(
      `OpenSearch refused the snapshot repository ${repository}: ${cause.reason ?? cause.type}. ` +
        'Every node needs path.repo to include KBQA_OPENSEARCH_SNAPSHOT_DIR (the local stack sets it; restart a node started before it did)',
    );
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** Snapshot requests for the chunk indices behind `alias` (the deployment's chunk alias). */
export function snapshotRequests(client: SearchClient, alias: string = CHUNKS_ALIAS) {
  return { alias, ...snapshottedIndexRequests(client, alias), ...repositoryRequests(client) };
}

/** What a backup or restore asks about the indices themselves: which, how many chunks, how healthy. */
function snapshottedIndexRequests(client: SearchClient, alias: string) {
  return {
    /**
     * The concrete indices behind the chunk alias (none when the alias does not exist): what a backup snapshots.
     * Not the indices a migration keeps beside it (`kbqa index drop-old` deletes those): they serve nothing.
     */
    async chunkIndices(): Promise<string[]> {
      const aliases = await client.request<Record<string, unknown> | { status?: number }>('GET', `/_alias/${alias}`, {
        acceptStatuses: [404],
      });
      if (!aliases || (aliases as { status?: number }).status === 404) return [];
      return Object.keys(aliases)
        .filter((name) => name !== 'error' && name !== 'status')
        .sort();
    },

    /** Which of these indices exist, alias or not. */
    async existingIndices(indices: string[]): Promise<string[]> {
      if (indices.length === 0) return [];
      const found = await client.request<Record<string, unknown>>('GET', `/${indices.join(',')}/_settings/index.uuid`, {
        querystring: { ignore_unavailable: true, allow_no_indices: true },
      });
      return indices.filter((index) => index in found);
    },

    /** Documents (chunks) in one index, refreshed first so a count right after a restore or an ingest is exact. */
    async countIndex(index: string): Promise<number> {
      await client.request('POST', `/${index}/_refresh`);
      const response = await client.request<{ count: number }>('POST', `/${index}/_count`, {
        body: { query: { match_all: {} } },
      });
      return response.count;
    },

    async deleteIndex(index: string): Promise<void> {
      await client.request('DELETE', `/${index}`, { acceptStatuses: [404] });
    },

    /** Waits on the server up to `waitSeconds` for the indices to be at least yellow, then says where they are. */
    async indexHealth(indices: string[], waitSeconds = 5): Promise<IndexHealth> {
      const response = await client.request<{
        status: IndexHealth['status'];
        active_primary_shards: number;
        initializing_shards: number;
        unassigned_shards: number;
      }>('GET', `/_cluster/health/${indices.join(',')}`, {
        // 408 is how the health API says "not yet" when its wait times out; the body is the health all the same.
        acceptStatuses: [408],
        querystring: { wait_for_status: 'yellow', timeout: `${waitSeconds}s`, level: 'cluster' },
      });
      return {
        status: response.status,
        activePrimaryShards: response.active_primary_shards,
        initializingShards: response.initializing_shards,
        unassignedShards: response.unassigned_shards,
      };
    },
  };
}

/** The repository and its snapshots: register, snapshot, restore, remove (a restore's progress is indexHealth). */
function repositoryRequests(client: SearchClient) {
  return {
    /**
     * A filesystem repository. `location` is relative, so each node resolves it against its own (first) path.repo:
     * the kbqa command finds the same directory under KBQA_OPENSEARCH_SNAPSHOT_DIR.
     */
    async registerRepository(repository: string, location: string, options: { readonly: boolean }): Promise<void> {
      try {
        await client.request('PUT', `/_snapshot/${repository}`, {
          body: { type: 'fs', settings: { location, compress: true, readonly: options.readonly } },
        });
      } catch (error) {
        throw repositoryProblem(error, repository);
      }
    },

    async deleteRepository(repository: string): Promise<void> {
      await client.request('DELETE', `/_snapshot/${repository}`, { acceptStatuses: [404] });
    },

    /** Starts a snapshot of these indices only (no cluster state: templates and pipelines come from the assets). */
    async startSnapshot(repository: string, snapshot: string, indices: string[]): Promise<void> {
      try {
        await client.request('PUT', `/_snapshot/${repository}/${snapshot}`, {
          querystring: { wait_for_completion: false },
          body: { indices: indices.join(','), include_global_state: false, ignore_unavailable: false, partial: false },
        });
      } catch (error) {
        throw repositoryProblem(error, repository);
      }
    },

    async snapshotStatus(repository: string, snapshot: string): Promise<SnapshotStatus> {
      const response = await client.request<{
        snapshots: Array<{
          state: SnapshotState;
          shards?: { total: number; successful: number; failed: number };
          failures?: Array<{ index?: string; reason?: string }>;
        }>;
      }>('GET', `/_snapshot/${repository}/${snapshot}`);
      const found = response.snapshots[0];
      return {
        state: found.state,
        shards: found.shards ?? { total: 0, successful: 0, failed: 0 },
        failures: (found.failures ?? []).map((failure) => `${failure.index ?? '?'}: ${failure.reason ?? 'unknown'}`),
      };
    },

    /** Deletes a snapshot and whatever files only it used. */
    async deleteSnapshot(repository: string, snapshot: string): Promise<void> {
      await client.request('DELETE', `/_snapshot/${repository}/${snapshot}`, { acceptStatuses: [404] });
    },

    /**
     * Starts restoring these indices with their aliases (the chunk alias among them), under their own names, with
     * this cluster's replica count; poll indexHealth() until they are no longer red.
     */
    async startRestore(repository: string, snapshot: string, indices: string[], replicas: number): Promise<void> {
      try {
        await client.request('POST', `/_snapshot/${repository}/${snapshot}/_restore`, {
          querystring: { wait_for_completion: false },
          body: {
            indices: indices.join(','),
            include_global_state: false,
            include_aliases: true,
            partial: false,
            index_settings: { 'index.number_of_replicas': replicas },
          },
        });
      } catch (error) {
        throw repositoryProblem(error, repository);
      }
    },
  };
}

export type SnapshotRequests = ReturnType<typeof snapshotRequests>;
