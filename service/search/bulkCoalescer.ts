// Group bulk writes. Concurrent ingestions each write a few chunks at a time (a short document makes two or three);
// one `_bulk` request per write costs OpenSearch a request's parsing, an ingest-pipeline pass and a translog sync
// for a handful of documents. While one bulk is in flight, every write that arrives waits and goes out with the
// others in the next one (byte-bounded like any bulk), and each caller learns the fate of its own chunks only.
import type { SearchClient } from './client.ts';
import {
  bulkFailure,
  bulkLines,
  chunkBytesUpperBound,
  indexChunks,
  MAX_BULK_BYTES,
  type BulkResponse,
  type ChunkDocument,
} from './chunks.ts';

interface PendingWrite {
  chunks: ChunkDocument[];
  /** The concrete index (or the alias) these chunks go to: writes to different indices still share a request. */
  target: string;
  bytes: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface BulkCoalescer {
  /**
   * Resolves once these chunks are indexed in `target` (default the alias; not yet searchable: see refresher.ts);
   * rejects if any was refused.
   */
  index(chunks: ChunkDocument[], target?: string): Promise<void>;
  /** Bulk requests sent so far (for the bench and tests). */
  requests(): number;
}

export function startBulkCoalescer(client: SearchClient, alias: string, maxBytes = MAX_BULK_BYTES): BulkCoalescer {
  let pending: PendingWrite[] = [];
  let flushing = false;
  let requests = 0;

  async function send(batch: PendingWrite[]): Promise<void> {
    requests += 1;
    let response: BulkResponse;
    try {
      // Idempotent: chunks are indexed under their own ids (chunks.ts indexChunks).
      response = await client.request<BulkResponse>('POST', '/_bulk', {
        bulkBody: batch.flatMap((write) => bulkLines(write.target, write.chunks)),
        idempotent: true,
      });
    } catch (error) {
      for (const write of batch) write.reject(error);
      return;
    }
    let offset = 0;
    for (const write of batch) {
      const items = response.items.slice(offset, offset + write.chunks.length);
      offset += write.chunks.length;
      if (items.some((item) => Object.values(item)[0]?.error)) write.reject(bulkFailure({ errors: true, items }));
      else write.resolve();
    }
  }

  async function flush(): Promise<void> {
    flushing = true;
    try {
      while (pending.length > 0) {
        const batch: PendingWrite[] = [];
        let bytes = 0;
        while (pending.length > 0 && (batch.length === 0 || bytes + pending[0].bytes <= maxBytes)) {
          const write = pending.shift()!;
          batch.push(write);
          bytes += write.bytes;
        }
        await send(batch);
      }
    } finally {
      flushing = false;
    }
  }

  return {
    index(chunks, target = alias) {
      if (chunks.length === 0) return Promise.resolve();
      const bytes = chunks.reduce((sum, chunk) => sum + chunkBytesUpperBound(chunk), 0);
      // A write bigger than one request goes out on its own, in byte-bounded requests.
      if (bytes > maxBytes) {
        requests += 1;
        return indexChunks(client, target, chunks);
      }
      return new Promise<void>((resolve, reject) => {
        pending.push({ chunks, target, bytes, resolve, reject });
        if (!flushing) void flush();
      });
    },
    requests: () => requests,
  };
}
