// Issue 8 §4 and §5: bulk requests are bounded in bytes, and a failed bulk item names why: overload and write
// blocks are upstream trouble (503), anything else would repeat (not "retry later"). Against the real OpenSearch,
// through a recording proxy that forwards every request unchanged.
import { randomUUID } from 'node:crypto';
import { ChunkIndexingError, UpstreamUnavailableError } from '../service/errors.ts';
import {
  MAX_BULK_BYTES,
  bulkBatches,
  bulkFailure,
  chunkBytesUpperBound,
  type BulkResponse,
  type ChunkDocument,
} from '../service/search/chunks.ts';
import { testWithApp } from './helpers/app.ts';
import { startFaultyProxy, type FaultyProxy } from './helpers/faultyProxy.ts';

const test = testWithApp<{ proxy: FaultyProxy; vector: number[] }>({
  env: async (t) => {
    t.context.proxy = await startFaultyProxy();
    return { KBQA_OPENSEARCH_URL: t.context.proxy.url };
  },
});

test.before(async (t) => {
  t.context.vector = await t.context.app.deps.rag.embedQuestion('bulk indexing');
});

test.after.always(async (t) => {
  await t.context.proxy?.close();
});

function chunk(documentId: string, index: number, text: string, vector: number[]): ChunkDocument {
  return {
    chunk_id: `${documentId}:1:${index}`,
    knowledge_base_id: `bulk-test-${documentId}`,
    document_id: documentId,
    document_version: 1,
    filename: 'a.txt',
    title: 'a',
    heading_path: [],
    chunk_index: index,
    page_start: null,
    page_end: null,
    text,
    embedding: vector,
    embedder: 'test',
    created_at: new Date(0).toISOString(),
  };
}

test.serial(
  'a document whose chunks exceed one bulk limit goes out in byte-bounded requests, none forcing a refresh; one shared refresh makes them searchable',
  async (t) => {
    const { app, proxy, vector } = t.context;
    const documentId = randomUUID();
    // 1,000 chunks of 4 KB: ~15 MB of NDJSON, more than one 8 MiB request.
    const chunks = Array.from({ length: 1000 }, (_, index) =>
      chunk(documentId, index, `${index} `.padEnd(4096, 'lorem ipsum '), vector),
    );
    const before = proxy.bulks.length;
    try {
      await app.deps.search.indexChunks(chunks);
      const bulks = proxy.bulks.slice(before);
      t.true(bulks.length > 1, `${bulks.length} requests`);
      for (const [index, bulk] of bulks.entries()) {
        t.true(bulk.bytes <= MAX_BULK_BYTES, `request ${index}: ${bulk.bytes} bytes`);
        t.false(bulk.query.includes('refresh'), `request ${index}: ${bulk.query}`);
      }
      // The group commit: one refresh after the last bulk makes every batch visible.
      const refreshesBefore = app.deps.search.refreshCount();
      await app.deps.search.chunksSearchable();
      t.is(app.deps.search.refreshCount(), refreshesBefore + 1);
      t.is(await app.deps.search.countChunks({ document_id: documentId }), chunks.length);
    } finally {
      await app.deps.search.deleteChunksOfDocument(documentId);
    }
    t.is(await app.deps.search.countChunks({ document_id: documentId }), 0);
  },
);

test('batches: the size bound never underestimates a chunk, whatever its text needs escaped; every chunk in one batch', (t) => {
  const vector = t.context.vector;
  for (const text of [
    'plain words',
    '"quotes" and \\ backslashes',
    '\u0001\u0002 control characters',
    'ünïcödé ✓ 漢字 😀',
    'x'.repeat(4096),
  ]) {
    const sample = { ...chunk('doc', 1, text, vector), heading_path: [text, 'b'] };
    const actual =
      Buffer.byteLength(JSON.stringify({ index: { _index: 'kbqa-chunks', _id: sample.chunk_id } })) +
      Buffer.byteLength(JSON.stringify({ ...sample, embedding_b64: 'A'.repeat(2048) })) +
      2;
    t.true(chunkBytesUpperBound(sample) >= actual, `${text.slice(0, 20)}: ${chunkBytesUpperBound(sample)} < ${actual}`);
  }
  const batches = bulkBatches(
    Array.from({ length: 10 }, (_, index) => chunk('doc', index, 'x', vector)),
    30_000,
  );
  t.true(batches.length > 1 && batches.every((batch) => batch.length > 0));
  t.deepEqual(
    batches.flat().map((item) => item.chunk_index),
    [...Array(10).keys()],
  );
});

test.serial(
  'a chunk OpenSearch refuses for a reason that would repeat (a mapping conflict) is not a 503, and nothing stays',
  async (t) => {
    const { app, vector } = t.context;
    const documentId = randomUUID();
    // chunk_index is an integer field: OpenSearch itself refuses this one item with mapper_parsing_exception.
    const refused = { ...chunk(documentId, 1, 'refused', vector), chunk_index: 'not a number' as unknown as number };
    const error = await t.throwsAsync(app.deps.search.indexChunks([chunk(documentId, 0, 'accepted', vector), refused]));
    t.true(error instanceof ChunkIndexingError, String(error));
    t.false(error instanceof UpstreamUnavailableError);
    t.regex(error.message, /mapper_parsing_exception|document_parsing_exception/);
    await app.deps.search.deleteChunksOfDocument(documentId);
    t.is(await app.deps.search.countChunks({ document_id: documentId }), 0);
  },
);

// The item errors OpenSearch reports for a write block, overload and a failing shard cannot be provoked on the shared
// test index without failing every write to it while they last, so bulkFailure is checked on bodies of the shape
// OpenSearch answers (a pure function of the response).
const itemFailure = (status: number, type: string): BulkResponse => ({
  errors: true,
  items: [{ index: { status: 201 } }, { index: { status, error: { type, reason: `${type} reason` } } }],
});

test('a write block (what a full disk causes) is 503 saying the index is read-only', (t) => {
  const error = bulkFailure(itemFailure(429, 'cluster_block_exception'));
  t.true(error instanceof UpstreamUnavailableError);
  t.regex(error.message, /read-only.*disk is full/);
});

test('overload (429) and a failing shard (5xx) are 503 naming OpenSearch', (t) => {
  for (const [status, type] of [
    [429, 'es_rejected_execution_exception'],
    [503, 'unavailable_shards_exception'],
  ] as const) {
    const error = bulkFailure(itemFailure(status, type));
    t.true(error instanceof UpstreamUnavailableError);
    t.is((error as UpstreamUnavailableError).upstream, 'opensearch');
  }
});

test.serial('concurrent writes share bulk requests, and a refused chunk fails only its own writer', async (t) => {
  const { app, proxy, vector } = t.context;
  const documentIds = Array.from({ length: 6 }, () => randomUUID());
  const before = proxy.bulks.length;
  const broken = {
    ...chunk(documentIds[5], 0, 'a chunk OpenSearch refuses', vector),
    chunk_index: 'not a number' as unknown as number,
  };
  try {
    const writes = documentIds.map((documentId, index) =>
      app.deps.search.indexChunks(
        index === 5
          ? [broken]
          : [chunk(documentId, 0, `first of ${index}`, vector), chunk(documentId, 1, `second of ${index}`, vector)],
      ),
    );
    const outcomes = await Promise.allSettled(writes);
    const bulks = proxy.bulks.slice(before);
    // The first write goes out at once; the five that arrive while it is in flight share the next request.
    t.true(bulks.length <= 2, `${bulks.length} bulk requests for 6 writes`);
    t.deepEqual(
      outcomes.slice(0, 5).map((outcome) => outcome.status),
      ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'],
    );
    t.is(outcomes[5].status, 'rejected');
    t.true((outcomes[5] as PromiseRejectedResult).reason instanceof ChunkIndexingError);
    await app.deps.search.chunksSearchable();
    for (const documentId of documentIds.slice(0, 5))
      t.is(await app.deps.search.countChunks({ document_id: documentId }), 2);
  } finally {
    for (const documentId of documentIds) await app.deps.search.deleteChunksOfDocument(documentId);
  }
});
