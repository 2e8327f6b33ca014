// Is the chunk index refusing writes? A node whose disk reaches the flood-stage watermark makes OpenSearch set
// index.blocks.read_only_allow_delete on every index with a shard there; an operator may set read_only or write.
// Ingestion asks before it starts (a request is refused with 503 instead of embedding a document it cannot store;
// the job runner claims nothing), and so do deletions (OpenSearch 3 refuses them under the block as well, after
// retrying for a minute) — one GET _settings a second at most, however many ask: the answer is cached.
import { SearchIndexReadOnlyError } from '../errors.ts';
import type { SearchClient } from './client.ts';

/** The index settings that stop documents being written. */
const WRITE_BLOCKS = ['index.blocks.read_only_allow_delete', 'index.blocks.read_only', 'index.blocks.write'];

export interface WriteBlockCheck {
  /** The block set on an index behind the alias (its setting's name), or null: none, or OpenSearch did not answer. */
  current(): Promise<string | null>;
  /** Throws SearchIndexReadOnlyError while a block is set. */
  assertWritable(): Promise<void>;
}

export function startWriteBlockCheck(client: SearchClient, alias: string, maxAgeMs = 1_000): WriteBlockCheck {
  let checkedAt = Number.NEGATIVE_INFINITY;
  let known: string | null = null;
  let inFlight: Promise<string | null> | null = null;

  async function read(): Promise<string | null> {
    try {
      const indices = await client.request<Record<string, { settings?: Record<string, string> }>>(
        'GET',
        `/${alias}/_settings/index.blocks.*`,
        {
          querystring: { flat_settings: true },
        },
      );
      for (const { settings } of Object.values(indices)) {
        const block = WRITE_BLOCKS.find((name) => settings?.[name] === 'true');
        if (block) return block;
      }
      return null;
    } catch {
      // OpenSearch unreachable: ingestion finds out for itself, with the error that says so.
      return null;
    }
  }

  async function current(): Promise<string | null> {
    if (Date.now() - checkedAt < maxAgeMs) return known;
    inFlight ??= read().then((block) => {
      known = block;
      checkedAt = Date.now();
      inFlight = null;
      return block;
    });
    return inFlight;
  }

  return {
    current,
    async assertWritable() {
      const block = await current();
      if (block) throw new SearchIndexReadOnlyError(block);
    },
  };
}
