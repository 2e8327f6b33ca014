// Issue 8 §4 and §5: bulk requests are bounded in bytes, and a failed bulk item names why: overload and write
// blocks are upstream trouble (503), anything else would repeat (not "retry later"). No stack needed: the search
// client is an interface, answered here the way OpenSearch answers.
import test from 'ava';
import { UpstreamUnavailableError } from '../service/errors.ts';
import { ChunkIndexingError, MAX_BULK_BYTES, bulkBatches, chunkBytesUpperBound, indexChunks, type ChunkDocument } from '../service/search/chunks.ts';
import type { RequestOptions, SearchClient } from '../service/search/client.ts';

function chunk(index: number, text: string): ChunkDocument {
  return {
    chunk_id: `doc:${index}`,
    knowledge_base_id: 'kb',
    document_id: 'doc',
    filename: 'a.txt',
    title: 'a',
    heading_path: [],
    chunk_index: index,
    text,
    embedding: Array.from({ length: 384 }, (_, i) => Math.sin(index + i)),
    embedder: 'test',
    created_at: new Date(0).toISOString(),
  };
}

function recordingClient(answer: (options: RequestOptions) => unknown): SearchClient & { calls: RequestOptions[] } {
  const calls: RequestOptions[] = [];
  return {
    calls,
    async request<T>(_method: string, _path: string, options: RequestOptions = {}): Promise<T> {
      calls.push(options);
      return answer(options) as T;
    },
    async close() {},
  };
}

test('a 5 MiB document of tiny chunks goes out in byte-bounded bulk requests; only the last one refreshes', async (t) => {
  // ~23,000 chunks is what 5 MiB of "a.b.c…" became: far over OpenSearch's 100 MB body limit in one request.
  const chunks = Array.from({ length: 23_000 }, (_, index) => chunk(index, `a.b.c.${index}`));
  const client = recordingClient(() => ({ errors: false, items: [] }));
  await indexChunks(client, chunks);
  t.true(client.calls.length > 1, `${client.calls.length} requests`);
  let lines = 0;
  for (const [index, call] of client.calls.entries()) {
    const bytes = call.bulkBody!.reduce<number>((sum, line) => sum + Buffer.byteLength(JSON.stringify(line)) + 1, 0);
    t.true(bytes <= MAX_BULK_BYTES, `request ${index}: ${bytes} bytes`);
    t.is(call.querystring?.refresh, index === client.calls.length - 1 ? 'true' : undefined);
    lines += call.bulkBody!.length;
  }
  t.is(lines, chunks.length * 2, 'every chunk sent once, action and source together');
});

test('the size bound never underestimates a chunk, whatever its text needs escaped', (t) => {
  for (const text of ['plain words', '"quotes" and \\ backslashes', '\u0001\u0002 control characters', 'ünïcödé ✓ 漢字 😀', 'x'.repeat(4096)]) {
    const sample = { ...chunk(1, text), heading_path: [text, 'b'] };
    const actual = Buffer.byteLength(JSON.stringify({ index: { _index: 'kbqa-chunks', _id: sample.chunk_id } })) + Buffer.byteLength(JSON.stringify({ ...sample, embedding_b64: 'A'.repeat(2048) })) + 2;
    t.true(chunkBytesUpperBound(sample) >= actual, `${text.slice(0, 20)}: ${chunkBytesUpperBound(sample)} < ${actual}`);
  }
  const batches = bulkBatches(Array.from({ length: 10 }, (_, index) => chunk(index, 'x')), 30_000);
  t.true(batches.length > 1 && batches.every((batch) => batch.length > 0));
  t.deepEqual(batches.flat().map((item) => item.chunk_index), [...Array(10).keys()]);
});

const itemFailure = (status: number, type: string) => () => ({
  errors: true,
  items: [{ index: { status: 201 } }, { index: { status, error: { type, reason: `${type} reason` } } }],
});

test('a write block (what a full disk causes) is 503 saying the index is read-only', async (t) => {
  const error = await t.throwsAsync(indexChunks(recordingClient(itemFailure(429, 'cluster_block_exception')), [chunk(0, 'x')]), {
    instanceOf: UpstreamUnavailableError,
  });
  t.regex(error.message, /read-only.*disk is full/);
});

test('overload (429) and a failing shard (5xx) are 503 naming OpenSearch', async (t) => {
  for (const [status, type] of [[429, 'es_rejected_execution_exception'], [503, 'unavailable_shards_exception']] as const) {
    const error = await t.throwsAsync(indexChunks(recordingClient(itemFailure(status, type)), [chunk(0, 'x')]), { instanceOf: UpstreamUnavailableError });
    t.is((error as UpstreamUnavailableError).upstream, 'opensearch');
  }
});

test('a rejection that would repeat (a mapping conflict) is not a 503', async (t) => {
  const error = await t.throwsAsync(indexChunks(recordingClient(itemFailure(400, 'mapper_parsing_exception')), [chunk(0, 'x')]));
  t.true(error instanceof ChunkIndexingError);
  t.false(error instanceof UpstreamUnavailableError);
  t.regex(error.message, /mapper_parsing_exception/);
});
