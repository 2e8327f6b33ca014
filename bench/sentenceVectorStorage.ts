// `node bench/sentenceVectorStorage.ts --source INDEX [--chunks 600] [--rounds 3] [--forms …] [--out FILE]`: what storing
// sentence vectors costs OpenSearch, per form, in one run of interleaved rounds (each round every form once, the
// order rotated, into a fresh scratch index of its own): OpenSearch CPU per chunk from the first bulk until the
// merges have finished (bench/indexStats.ts measureOpenSearchWork, /proc utime+stime of its JVM), and the index's
// size per chunk once merged (as the merges left it, and force-merged to one segment, outside the CPU span).
//
// The chunks are real: the first --chunks chunks (whole documents) of an existing chunk index with sentence vectors
// (read only), re-indexed as documents of their own, one bulk then one refresh per document, 4 documents in flight
// (bench/refreshPolicies.ts's shape, without the shared refresher's grouping: exactly one refresh per document).
// Forms:
//   v2          template v2: float32 vectors, base64 in _source and a binary doc value (stored twice)
//   float32-dv  float32, doc value only (`_source.excludes`)
//   int8-dv     int8 per vector (scaled by its largest |component|), doc value only
//   int8-dv-no-recovery  the same, and left out of _recovery_source too: a _source with excludes makes Lucene keep
//               the whole original source in _recovery_source (for operation-based peer recovery) until a merge
//               drops it; `_source.recovery_source_excludes` (OpenSearch 2.15+) leaves the vectors out of it
//   int8-source-dv  int8, base64 in _source too (v2's layout with int8): no _source.excludes, so no _recovery_source
//   none        no sentence vectors (the floor)
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../service/config.ts';
import { forEachConcurrently } from '../service/eval/apiClient.ts';
import { bulkFailure, type BulkResponse } from '../service/search/chunks.ts';
import { openSearchIndex, type SearchIndex } from '../service/search/index.ts';
import { decodeSentenceVectors, encodeSentenceVectors } from '../service/search/sentenceVectors.ts';
import { measureOpenSearchWork, waitForMerges, type OpenSearchWork } from './indexStats.ts';
import { stackPids } from './phases.ts';
import { benchSearchOptions } from './searchOptions.ts';
import { percentile, round } from './stats.ts';

const { values } = parseArgs({
  options: {
    source: { type: 'string' },
    chunks: { type: 'string', default: '600' },
    rounds: { type: 'string', default: '3' },
    forms: { type: 'string' },
    out: { type: 'string' },
  },
});
if (!values.source) {
  process.stderr.write(
    'usage: node bench/sentenceVectorStorage.ts --source INDEX [--chunks 600] [--rounds 3] [--forms v2,int8-dv,…] [--out FILE]\n',
  );
  process.exit(2);
}

type Form = 'v2' | 'float32-dv' | 'int8-dv' | 'int8-dv-no-recovery' | 'int8-source-dv' | 'none';
const ALL_FORMS: Form[] = ['v2', 'float32-dv', 'int8-dv', 'int8-dv-no-recovery', 'int8-source-dv', 'none'];
const FORMS = values.forms ? (values.forms.split(',') as Form[]) : ALL_FORMS;
for (const form of FORMS)
  if (!ALL_FORMS.includes(form)) throw new Error(`--forms: ${form} is none of ${ALL_FORMS.join(', ')}`);
// The ratios are to v2 (today's form).
if (!FORMS.includes('v2')) throw new Error('--forms must include v2');
const CONCURRENCY = 4;
// Not bench/options.ts's `root`: importing it parses `npm run bench`'s command line.
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const SCRATCH_PREFIX = 's30-storage-svcost-';

interface SourceChunk {
  chunk_id: string;
  document_id: string;
  chunk_index: number;
  embedding_b64: string;
  sentence_embeddings?: string;
  [field: string]: unknown;
}

const config = loadConfig();
const openSearchPid = stackPids(join(root, '.local')).opensearch;
if (openSearchPid === undefined) throw new Error('the OpenSearch pid is unknown (.local/run/opensearch.pid)');
const reader = openSearchIndex(benchSearchOptions(config, values.source));

/** The first `limit` chunks in chunk-id order, cut at a document's end, grouped into their documents. */
async function sourceDocuments(limit: number): Promise<SourceChunk[][]> {
  const response = await reader.request<{ hits: { hits: Array<{ _source: SourceChunk }> } }>(
    'POST',
    `/${values.source}/_search`,
    { body: { size: limit + 50, sort: [{ chunk_id: 'asc' }], _source: { excludes: ['embedding'] } } },
  );
  const byDocument = new Map<string, SourceChunk[]>();
  for (const { _source: chunk } of response.hits.hits) {
    const chunks = byDocument.get(chunk.document_id) ?? [];
    chunks.push(chunk);
    byDocument.set(chunk.document_id, chunks);
  }
  const documents: SourceChunk[][] = [];
  let taken = 0;
  for (const chunks of byDocument.values()) {
    if (taken >= limit) break;
    documents.push(chunks.sort((a, b) => a.chunk_index - b.chunk_index));
    taken += chunks.length;
  }
  return documents;
}

/** The v2 template's index body, its sentence vectors as `form` keeps them. */
function indexBody(form: Form): object {
  const template = JSON.parse(readFileSync(join(root, 'index-templates', 'kbqa-chunks.v2.json'), 'utf8')).template;
  const mappings = structuredClone(template.mappings);
  if (form === 'none') delete mappings.properties.sentence_embeddings;
  if (form === 'float32-dv' || form === 'int8-dv') mappings._source = { excludes: ['sentence_embeddings'] };
  if (form === 'int8-dv-no-recovery')
    mappings._source = { excludes: ['sentence_embeddings'], recovery_source_excludes: ['sentence_embeddings'] };
  return {
    settings: { ...template.settings, 'index.number_of_shards': 1, 'index.number_of_replicas': 0 },
    mappings,
  };
}

/** A chunk's source line as `form` writes it (the embedding as a knn_vector, as the service sends it). */
function sourceLine(chunk: SourceChunk, form: Form, dimensions: number): object {
  const { sentence_embeddings: packed, indexed_at: _indexedAt, ...fields } = chunk;
  const embedding = Array.from(decodeSentenceVectors(chunk.embedding_b64, dimensions, 'float32')[0]);
  const line: Record<string, unknown> = { ...fields, embedding };
  if (packed && form !== 'none') {
    line.sentence_embeddings = form.startsWith('int8')
      ? encodeSentenceVectors(decodeSentenceVectors(packed, dimensions, 'float32'), 'int8')
      : packed;
  }
  return line;
}

async function indexDocuments(search: SearchIndex, index: string, documents: object[][]): Promise<void> {
  await forEachConcurrently(documents, CONCURRENCY, async (lines) => {
    const response = await search.request<BulkResponse>('POST', '/_bulk', { bulkBody: lines });
    if (response.errors) throw bulkFailure(response);
    await search.request('POST', `/${index}/_refresh`);
  });
}

/**
 * The index's own time (primaries): indexing, refresh, merge and flush threads, in ms. OpenSearch counts it per index,
 * so another client's work on the shared stack is not in it (as it is in the JVM's CPU); a wall time per operation,
 * it is inflated alike for every form by a loaded machine.
 */
async function indexThreadMs(search: SearchIndex, index: string): Promise<number> {
  const stats = await search.request<{
    _all: {
      primaries: {
        indexing: { index_time_in_millis: number };
        refresh: { total_time_in_millis: number };
        merges: { total_time_in_millis: number };
        flush: { total_time_in_millis: number };
      };
    };
  }>('GET', `/${index}/_stats/indexing,refresh,merge,flush`);
  const { indexing, refresh, merges, flush } = stats._all.primaries;
  return (
    indexing.index_time_in_millis +
    refresh.total_time_in_millis +
    merges.total_time_in_millis +
    flush.total_time_in_millis
  );
}

/** The index's segments' bytes, summed (live: `_stats/store` is cached for index.store.stats_refresh_interval). */
async function segmentBytes(search: SearchIndex, index: string): Promise<number> {
  const response = await search.request<{
    indices: Record<string, { shards: Record<string, Array<{ segments: Record<string, { size_in_bytes: number }> }>> }>;
  }>('GET', `/${index}/_segments`);
  let bytes = 0;
  for (const copies of Object.values(response.indices[index].shards))
    for (const copy of copies) for (const segment of Object.values(copy.segments)) bytes += segment.size_in_bytes;
  return bytes;
}

interface FormRun {
  round: number;
  cpu_ms_per_chunk: number | null;
  net_cpu_ms_per_chunk: number | null;
  /** indexThreadMs per chunk, from the index's creation until merges settled (before the force-merge). */
  index_ms_per_chunk: number;
  bytes_per_chunk_merged: number;
  bytes_per_chunk_one_segment: number;
  seconds: number;
  opensearch: OpenSearchWork;
}

const documents = await sourceDocuments(Number(values.chunks));
const chunks = documents.reduce((sum, document) => sum + document.length, 0);
const withVectors = documents.flat().filter((chunk) => chunk.sentence_embeddings).length;
const dimensions = 384;
process.stderr.write(`${documents.length} documents, ${chunks} chunks (${withVectors} with sentence vectors)\n`);
const searches = new Map(
  FORMS.map((form) => [form, openSearchIndex(benchSearchOptions(config, SCRATCH_PREFIX + form))]),
);
const bodies = new Map(
  FORMS.map((form) => [
    form,
    documents.map((document) =>
      document.flatMap((chunk) => [
        { index: { _index: SCRATCH_PREFIX + form, _id: chunk.chunk_id } },
        sourceLine(chunk, form, dimensions),
      ]),
    ),
  ]),
);
const runs = Object.fromEntries(FORMS.map((form) => [form, [] as FormRun[]])) as Record<Form, FormRun[]>;
try {
  for (let roundIndex = 0; roundIndex < Number(values.rounds); roundIndex += 1) {
    for (let turn = 0; turn < FORMS.length; turn += 1) {
      const form = FORMS[(roundIndex + turn) % FORMS.length];
      const index = SCRATCH_PREFIX + form;
      const search = searches.get(form) as SearchIndex;
      await search.request('DELETE', `/${index}`, { acceptStatuses: [404] });
      await search.request('PUT', `/${index}`, { body: indexBody(form) });
      const started = performance.now();
      const { opensearch } = await measureOpenSearchWork(
        search,
        openSearchPid,
        () => indexDocuments(search, index, bodies.get(form) as object[][]),
        () => chunks,
      );
      const seconds = (performance.now() - started) / 1000;
      const indexMs = await indexThreadMs(search, index);
      const merged = await segmentBytes(search, index);
      await search.request('POST', `/${index}/_forcemerge`, { querystring: { max_num_segments: 1 } });
      await waitForMerges(search);
      // The merged-away segments are dropped once a refresh releases them.
      await search.request('POST', `/${index}/_refresh`);
      const oneSegment = await segmentBytes(search, index);
      const run: FormRun = {
        round: roundIndex + 1,
        cpu_ms_per_chunk: opensearch.cpu_ms_per_chunk,
        net_cpu_ms_per_chunk: opensearch.net_cpu_ms_per_chunk,
        index_ms_per_chunk: round(indexMs / chunks, 2),
        bytes_per_chunk_merged: Math.round(merged / chunks),
        bytes_per_chunk_one_segment: Math.round(oneSegment / chunks),
        seconds: round(seconds, 2),
        opensearch,
      };
      runs[form].push(run);
      process.stderr.write(
        `round ${run.round}, ${form}: ${run.cpu_ms_per_chunk} CPU-ms/chunk (net ${run.net_cpu_ms_per_chunk}), index ${run.index_ms_per_chunk} ms/chunk, ` +
          `${run.bytes_per_chunk_merged} B/chunk merged, ${run.bytes_per_chunk_one_segment} B/chunk one segment, ${run.seconds} s\n`,
      );
    }
  }
} finally {
  for (const [form, search] of searches) {
    await search.request('DELETE', `/${SCRATCH_PREFIX}${form}`, { acceptStatuses: [404] });
    await search.close();
  }
  await reader.close();
}

const median = (list: Array<number | null>) =>
  round(
    percentile(
      list.filter((value): value is number => value !== null),
      50,
    ),
    2,
  );
const summary = Object.fromEntries(
  FORMS.map((form) => [
    form,
    {
      median_cpu_ms_per_chunk: median(runs[form].map((run) => run.cpu_ms_per_chunk)),
      median_net_cpu_ms_per_chunk: median(runs[form].map((run) => run.net_cpu_ms_per_chunk)),
      median_index_ms_per_chunk: median(runs[form].map((run) => run.index_ms_per_chunk)),
      median_bytes_per_chunk_merged: median(runs[form].map((run) => run.bytes_per_chunk_merged)),
      median_bytes_per_chunk_one_segment: median(runs[form].map((run) => run.bytes_per_chunk_one_segment)),
    },
  ]),
);
const result = {
  kind: 'sentence-vector-storage',
  method:
    `${chunks} chunks (${documents.length} documents, ${withVectors} chunks with sentence vectors) read from ${values.source}, ` +
    `indexed per form into a fresh scratch index (template v2's settings and mappings, 1 shard, 0 replicas), ` +
    `one bulk then one _refresh per document, ${CONCURRENCY} documents in flight; forms interleaved, the order rotated each round. ` +
    'OpenSearch CPU: utime+stime of its JVM from the first bulk until no merge runs; net: minus its idle rate sampled for 3 s before. ' +
    "Index time: the index's own indexing + refresh + merge + flush time (_stats, primaries), which leaves out other clients of the shared stack. " +
    'Size: the bytes of its segments per chunk as the merges left them, and after _forcemerge to one segment.',
  rounds: Number(values.rounds),
  chunks,
  summary,
  ratio_to_v2: Object.fromEntries(
    FORMS.map((form) => [
      form,
      {
        cpu: round(summary[form].median_cpu_ms_per_chunk / summary.v2.median_cpu_ms_per_chunk, 3),
        index_ms: round(summary[form].median_index_ms_per_chunk / summary.v2.median_index_ms_per_chunk, 3),
        bytes_one_segment: round(
          summary[form].median_bytes_per_chunk_one_segment / summary.v2.median_bytes_per_chunk_one_segment,
          3,
        ),
      },
    ]),
  ),
  runs,
  machine: { cores: os.availableParallelism(), load_average_at_end: os.loadavg().map((load) => round(load, 2)) },
  finished_at: new Date().toISOString(),
};
if (values.out) {
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
}
process.stdout.write(`${JSON.stringify({ summary, ratio_to_v2: result.ratio_to_v2 }, null, 2)}\n`);
