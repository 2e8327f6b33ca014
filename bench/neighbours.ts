// `node bench/neighbours.ts prepare|load|copy|measure|profile|drop …`: a KB's search stage beside other KBs'
// chunks (issue 26, item 4), every index layout measured in ONE run, query by query, in a rotating order (the machine
// is shared: noise then hits every layout alike, and the ratios are read within a round). Scratch aliases only
// (kbqa-chunks-<name>), never the shared one.
//   prepare --from-alias A --out DIR [--templates 1000] [--queries 100]
//       template chunks (with their sentence vectors) from A, and SciFact DEV questions embedded as the API does
//   load --alias A --dir DIR [--small 10000] [--neighbours 200000] [--kbs 4] [--assets D] [--shards N]
//       the small KB and the neighbours' KBs INTERLEAVED in every bulk (tenants ingest at the same time), through
//       the service's own indexing code (search.indexChunks), then one refresh and the merges waited for
//   indexing --dir DIR --assets D [--small 21000] [--rounds 2] [--out FILE]
//       OpenSearch CPU per chunk for bulk indexing into a fresh plain index and a fresh sorted one, alternately
//   copy --from A --to B [--kb K] [--assets D] [--shards N] [--route]
//       B made from its template (a copy of the assets: --assets), filled by _reindex from A (same _ids, same
//       order), optionally only KB K, optionally routed by knowledge_base_id
//   measure --dir DIR --kb K --target LABEL=ALIAS[@routing] … [--variant NAME …] [--reference LABEL] [--rounds 3]
//       [--out FILE]
//   profile --dir DIR --kb K --target … [--queries 20]   each side's Lucene profile: k-NN rewrite (the graph walk
//       or exact search happens in rewrite) and BM25 query time
//   drop --alias A   deletes A's indices
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../service/config.ts';
import { createSearchClient, type SearchClient } from '../service/search/client.ts';
import { openSearchIndex, type ChunkDocument, type SearchIndex } from '../service/search/index.ts';
import { hybridSearch, lexicalSearch, vectorSearch } from '../service/search/retrieval.ts';
import { decodeSentenceVectors, sentenceVectorFormOf } from '../service/search/sentenceVectors.ts';
import type { RetrievalRequest } from '../service/search/retrieval.ts';
import { DEFAULT_HYBRID_TUNING, type HybridTuning } from '../service/hybridTuning.ts';
import { measureOpenSearchWork, waitForMerges } from './indexStats.ts';
import { stackPids } from './phases.ts';
import { copyOfChunk } from './scale.ts';
import { embeddedQuestions, type EmbeddedQuestion } from './questions.ts';
import { benchSearchOptions } from './searchOptions.ts';
import { percentile, round } from './stats.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    alias: { type: 'string' },
    'from-alias': { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    dir: { type: 'string' },
    out: { type: 'string' },
    kb: { type: 'string' },
    assets: { type: 'string' },
    shards: { type: 'string' },
    route: { type: 'boolean', default: false },
    small: { type: 'string', default: '10000' },
    neighbours: { type: 'string', default: '200000' },
    kbs: { type: 'string', default: '4' },
    templates: { type: 'string', default: '1000' },
    queries: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '3' },
    target: { type: 'string', multiple: true, default: [] },
    variant: { type: 'string', multiple: true, default: [] },
    reference: { type: 'string' },
    label: { type: 'string', default: '' },
    dataset: { type: 'string', default: fileURLToPath(new URL('../../shared/datasets/scifact', import.meta.url)) },
  },
});

type Body = Record<string, unknown>;
type Query = EmbeddedQuestion;
/** A chunk as read back from an index: sentence vectors as the base64 doc value, in the form of the index read. */
type StoredChunk = Omit<ChunkDocument, 'sentence_embeddings'> & {
  sentence_embeddings?: string;
  sentence_form?: ReturnType<typeof sentenceVectorFormOf>;
};

const config = loadConfig();
const DIMENSIONS = 384;
const SMALL_KB = 'kb-small';

function searchIndexOn(alias: string) {
  return openSearchIndex({
    ...benchSearchOptions(config, alias),
    assetsDir: values.assets ?? null,
    shards: Number(values.shards ?? config.opensearch.shards),
  });
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(join(values.dir as string, file), 'utf8')) as T;

async function prepare() {
  const from = values['from-alias'] as string;
  const search = searchIndexOn(from);
  const response = await search.request<{ hits: { hits: Array<{ _index: string; _source: StoredChunk }> } }>(
    'POST',
    `/${from}/_search`,
    { body: { size: Number(values.templates), query: { match_all: {} }, sort: [{ chunk_id: 'asc' }] } },
  );
  const templates = response.hits.hits.map((hit) => ({
    ...hit._source,
    sentence_form: sentenceVectorFormOf(hit._index),
  }));
  writeFileSync(join(values.out as string, 'templates.json'), JSON.stringify(templates));
  await search.close();
  // Dev questions: the test split is for reporting quality once, not for tuning speed.
  const queries = await embeddedQuestions(config, values.dataset as string, 'dev', Number(values.queries));
  writeFileSync(join(values.out as string, 'queries.json'), JSON.stringify(queries));
  console.log(`${templates.length} templates, ${queries.length} queries → ${values.out}`);
}

/**
 * Chunk `serial` of the mixed load: every (total ÷ small)-th one is the small KB's (carrying its template's sentence
 * vectors, as an ingested chunk does), the rest go round-robin to the neighbours (without: their vectors are only read
 * for the k-NN side's hits, which the filter keeps inside the small KB, and would only make the index larger).
 */
function mixedChunk(
  templates: StoredChunk[],
  serial: number,
  shape: { small: number; total: number; kbs: number; allSentences?: boolean },
) {
  const every = shape.total / shape.small;
  const smallIndex = Math.floor(serial / every);
  const isSmall = Math.floor(serial % every) === 0 && smallIndex < shape.small;
  const template = templates[(isSmall ? smallIndex : serial) % templates.length];
  const chunk = copyOfChunk(template as ChunkDocument, {
    knowledgeBaseId: isSmall ? SMALL_KB : `kb-neighbour-${(serial % shape.kbs) + 1}`,
    documentId: `${isSmall ? 's' : 'n'}-${serial}`,
    index: 0,
    filename: `neighbours-${serial}.txt`,
    createdAt: new Date().toISOString(),
  });
  if (!(isSmall || shape.allSentences) || !template.sentence_embeddings) return chunk;
  const sentences = decodeSentenceVectors(
    template.sentence_embeddings,
    DIMENSIONS,
    template.sentence_form ?? 'float32', // templates prepared before template v3 were float32
  ).map((vector) => Array.from(vector));
  return { ...chunk, sentence_embeddings: sentences };
}

/** The mixed chunks into `search`, two bulks of 500 in flight, through the service's indexing code; then a refresh. */
async function loadMixed(search: SearchIndex, shape: Parameters<typeof mixedChunk>[2], quiet = false) {
  const templates = readJson<StoredChunk[]>('templates.json');
  const started = performance.now();
  let next = 0;
  let loaded = 0;
  await Promise.all(
    [0, 1].map(async () => {
      while (next < shape.total) {
        const from = next;
        next = Math.min(shape.total, next + 500);
        const batch = Array.from({ length: next - from }, (_, offset) => mixedChunk(templates, from + offset, shape));
        await search.indexChunks(batch);
        loaded += batch.length;
        if (!quiet && loaded % 20_000 < 500) console.log(`  ${loaded}/${shape.total}`);
      }
    }),
  );
  await search.refreshChunks();
  return { loaded, seconds: round((performance.now() - started) / 1000) };
}

async function load() {
  const search = searchIndexOn(values.alias as string);
  await search.applyAssets();
  const small = Number(values.small);
  const loaded = await loadMixed(search, { small, total: small + Number(values.neighbours), kbs: Number(values.kbs) });
  const merges = await waitForMerges(search, 600_000);
  console.log(JSON.stringify({ ...loaded, merge_wait: merges }));
  await search.close();
}

/**
 * What index sorting costs indexing: fresh indices, the plain template and the sorted copy (--assets) alternately,
 * each filled with the same mixed chunks (every chunk with sentence vectors, as ingestion stores them), OpenSearch's
 * CPU charged from the first bulk until the merges it caused have finished (indexStats.ts, as refreshPolicies.ts).
 */
async function indexing() {
  const pid = stackPids(join(fileURLToPath(new URL('..', import.meta.url)), '.local')).opensearch;
  const chunks = Number(values.small);
  const runs = [];
  for (let round_ = 1; round_ <= Number(values.rounds); round_ += 1) {
    for (const layout of ['plain', 'sorted'] as const) {
      const alias = `kbqa-chunks-s30nb-ix-${layout}-${round_}`;
      const search = openSearchIndex({
        ...benchSearchOptions(config, alias),
        assetsDir: layout === 'sorted' ? (values.assets as string) : null,
      });
      await search.applyAssets();
      const shape = { small: chunks / 21, total: chunks, kbs: Number(values.kbs), allSentences: true };
      const { result, opensearch } = await measureOpenSearchWork(
        search,
        pid,
        () => loadMixed(search, shape, true),
        (loaded) => loaded.loaded,
      );
      runs.push({ round: round_, layout, ...result, opensearch });
      console.log(JSON.stringify(runs.at(-1)));
      const index = await concreteIndex(search, alias);
      await search.request('DELETE', `/${index}`);
      await search.close();
    }
  }
  if (values.out) writeFileSync(values.out, JSON.stringify({ chunks, opensearch_pid: pid, runs }, null, 2));
}

async function concreteIndex(client: Pick<SearchClient, 'request'>, alias: string): Promise<string> {
  const aliases = await client.request<Record<string, unknown>>('GET', `/_alias/${alias}`);
  return Object.keys(aliases)[0];
}

async function copy() {
  const target = searchIndexOn(values.to as string);
  await target.applyAssets();
  const client = createSearchClient({ nodes: [config.opensearch.url], timeoutMs: 60_000 });
  const [from, to] = [
    await concreteIndex(client, values.from as string),
    await concreteIndex(client, values.to as string),
  ];
  const started = performance.now();
  const task = await client.request<{ task: string }>('POST', '/_reindex', {
    querystring: { wait_for_completion: 'false' },
    body: {
      source: {
        index: from,
        size: 1000,
        ...(values.kb ? { query: { term: { knowledge_base_id: values.kb } } } : {}),
      },
      dest: { index: to },
      ...(values.route ? { script: { source: 'ctx._routing = ctx._source.knowledge_base_id' } } : {}),
    },
  });
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const status = await client.request<{ completed: boolean; task: { status: Body }; error?: unknown }>(
      'GET',
      `/_tasks/${task.task}`,
    );
    if (status.completed) {
      if (status.error) throw new Error(JSON.stringify(status.error));
      break;
    }
  }
  await target.refreshChunks();
  const merges = await waitForMerges(target, 600_000);
  const count = await client.request<{ count: number }>('GET', `/${to}/_count`);
  console.log(
    JSON.stringify({ from, to, chunks: count.count, seconds: round((performance.now() - started) / 1000), merges }),
  );
  await client.close();
  await target.close();
}

interface Target {
  label: string;
  alias: string;
  routing?: string;
}

function targets(): Target[] {
  return (values.target as string[]).map((spec) => {
    const [label, rest] = spec.split('=');
    const [alias, routing] = rest.split('@');
    return { label, alias, routing };
  });
}

/** A client that sends a target's routing with each search, and remembers the last `took` and hit ids. */
function recording(inner: SearchClient, target: Target, rewrite: (body: Body) => Body = (body) => body) {
  const last = { took: Number.NaN, ids: [] as string[], response: null as unknown };
  const client: SearchClient = {
    async request<T>(...args: Parameters<SearchClient['request']>): Promise<T> {
      const [method, path, options] = args;
      if (!path.endsWith('/_search')) return inner.request<T>(...args);
      const querystring = { ...options?.querystring, ...(target.routing ? { routing: target.routing } : {}) };
      const body = rewrite((options?.body ?? {}) as Body);
      const response = await inner.request<T>(method, path, { ...options, querystring, body });
      const shaped = response as { took?: number; hits?: { hits: Array<{ _id: string }> } };
      last.took = shaped.took ?? Number.NaN;
      last.ids = (shaped.hits?.hits ?? []).map((hit) => hit._id);
      last.response = response;
      return response;
    },
    close: () => inner.close(),
  };
  return { client, last };
}

const tuning: HybridTuning = DEFAULT_HYBRID_TUNING;
const request = (query: Query, depth: number, size = 8): RetrievalRequest => ({
  text: query.text,
  vector: query.vector,
  knowledgeBaseIds: [values.kb as string],
  size,
  depth,
});

/** `{terms: {knowledge_base_id: [one]}}` → `{term: {knowledge_base_id: one}}`, wherever it is in the body. */
function singleTermFilter(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(singleTermFilter);
  if (node === null || typeof node !== 'object') return node;
  const terms = (node as { terms?: { knowledge_base_id?: unknown } }).terms?.knowledge_base_id;
  if (Array.isArray(terms) && terms.length === 1) return { term: { knowledge_base_id: terms[0] } };
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, singleTermFilter(value)]));
}

/** Every knn clause of the body, rewritten by `change` (the k-NN side, inside the sentence script or not). */
function eachKnn(node: unknown, change: (knn: Body) => unknown): unknown {
  if (Array.isArray(node)) return node.map((item) => eachKnn(item, change));
  if (node === null || typeof node !== 'object') return node;
  if ('knn' in node) return change((node as { knn: { embedding: Body } }).knn.embedding);
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, eachKnn(value, change)]));
}

/** The k-NN plugin hands Lucene max(k, ef_search) (index.knn.algo_param.ef_search, 100): ask for k alone. */
const efSearchK = (body: Body) =>
  eachKnn(body, (knn) => ({ knn: { embedding: { ...knn, method_parameters: { ef_search: knn.k } } } })) as Body;

/** Exact search over the filter's chunks: the graph never walked (what Lucene falls back to when it gives up). */
const exactKnn = (body: Body) =>
  eachKnn(body, (knn) => ({
    script_score: {
      query: { bool: { filter: knn.filter } },
      script: {
        source: 'knn_score',
        lang: 'knn',
        params: { field: 'embedding', query_value: knn.vector, space_type: 'cosinesimil' },
      },
    },
  })) as Body;

type Run = (client: SearchClient, alias: string, query: Query) => Promise<unknown>;
const hybrid50: Run = (client, alias, query) => hybridSearch(client, alias, request(query, 50), tuning);
const bm25Top50: Run = (client, alias, query) =>
  lexicalSearch(client, alias, { ...request(query, 50, 50), rankingOnly: true });
const knnTop50 =
  (sentenceWeight: number): Run =>
  (client, alias, query) =>
    vectorSearch(client, alias, { ...request(query, 50, 50), rankingOnly: true }, sentenceWeight);

/** The search stage as the API runs it (size 8, depth 50), and variants that take it apart. */
const variants: Record<string, { run: Run; rewrite?: (body: Body) => Body }> = {
  'hybrid, depth 50 (as sent)': { run: hybrid50 },
  'hybrid, depth 50, term filter': { run: hybrid50, rewrite: (body) => singleTermFilter(body) as Body },
  'hybrid, depth 10': { run: (client, alias, query) => hybridSearch(client, alias, request(query, 10), tuning) },
  'hybrid, depth 50, no sentence script': {
    run: (client, alias, query) => hybridSearch(client, alias, request(query, 50), tuning, { sentenceWeight: 0 }),
  },
  'BM25 side alone, top 50': { run: bm25Top50 },
  'k-NN side alone, k 50': { run: knnTop50(0) },
  'k-NN side alone, exact over the filter': { run: knnTop50(0), rewrite: exactKnn },
  'hybrid, depth 50, ef_search = k': { run: hybrid50, rewrite: efSearchK },
};

/** --variant NAME (repeatable) measures only those; default every variant. */
function chosenVariants(): string[] {
  const chosen = values.variant as string[];
  const unknown = chosen.filter((name) => !(name in variants));
  if (unknown.length > 0) throw new Error(`unknown variant(s): ${unknown.join(', ')}`);
  return chosen.length > 0 ? chosen : Object.keys(variants);
}

async function measure() {
  const queries = readJson<Query[]>('queries.json');
  const inner = createSearchClient({ nodes: [config.opensearch.url], timeoutMs: 60_000 });
  const list = targets();
  const reference = values.reference ?? list[0].label;
  const rounds = Number(values.rounds);
  const cells = list.flatMap((target) =>
    chosenVariants().map((variant) => ({
      target,
      variant,
      ...recording(inner, target, variants[variant].rewrite),
    })),
  );
  type Samples = { client: number[]; took: number[]; overlap: number[] };
  const samples = new Map<string, Samples[]>(
    cells.map((cell) => [
      `${cell.target.label}|${cell.variant}`,
      Array.from({ length: rounds }, () => ({ client: [], took: [], overlap: [] })),
    ]),
  );
  for (const query of queries.slice(0, 5))
    for (const cell of cells) await variants[cell.variant].run(cell.client, cell.target.alias, query);
  for (let round_ = 0; round_ < rounds; round_ += 1) {
    for (const [position, query] of queries.entries()) {
      const order = cells.map((_, index) => cells[(index + position + round_) % cells.length]);
      for (const cell of order) {
        const started = performance.now();
        await variants[cell.variant].run(cell.client, cell.target.alias, query);
        const record = samples.get(`${cell.target.label}|${cell.variant}`)![round_];
        record.client.push(performance.now() - started);
        record.took.push(cell.last.took);
      }
      for (const cell of cells) {
        const base = cells.find((other) => other.target.label === reference && other.variant === cell.variant)!;
        const overlap = cell.last.ids.filter((id) => base.last.ids.includes(id)).length;
        samples
          .get(`${cell.target.label}|${cell.variant}`)!
          [round_].overlap.push(overlap / Math.max(1, base.last.ids.length));
      }
    }
    console.log(`round ${round_ + 1}/${rounds} done`);
  }
  const p50 = (values_: number[]) => round(percentile(values_, 50));
  const rows = cells.map((cell) => {
    const perRound = samples.get(`${cell.target.label}|${cell.variant}`)!;
    const all = { client: perRound.flatMap((r) => r.client), took: perRound.flatMap((r) => r.took) };
    const overlap = perRound.flatMap((r) => r.overlap);
    return {
      target: cell.target.label,
      variant: cell.variant,
      client_p50_ms: p50(all.client),
      took_p50_ms: p50(all.took),
      took_mean_ms: round(all.took.reduce((sum, value) => sum + value, 0) / all.took.length, 2),
      client_p50_by_round: perRound.map((r) => p50(r.client)),
      took_p50_by_round: perRound.map((r) => p50(r.took)),
      overlap_with_reference: round(overlap.reduce((sum, value) => sum + value, 0) / overlap.length, 3),
    };
  });
  const indices = await inner.request<Array<Record<string, string>>>('GET', '/_cat/segments', {
    querystring: { format: 'json', h: 'index,shard,segment,docs.count' },
  });
  const layout = await Promise.all(
    list.map(async (target) => {
      const index = await concreteIndex(inner, target.alias);
      const segments = indices.filter((row) => row.index === index);
      const count = await inner.request<{ count: number }>('POST', `/${target.alias}/_count`, {
        querystring: target.routing ? { routing: target.routing } : {},
        body: { query: { term: { knowledge_base_id: values.kb } } },
      });
      const total = await inner.request<{ count: number }>('GET', `/${target.alias}/_count`);
      return { ...target, index, segments: segments.length, chunks_in_kb: count.count, chunks_in_index: total.count };
    }),
  );
  const result = { label: values.label, kb: values.kb, queries: queries.length, rounds, reference, layout, rows };
  console.log(JSON.stringify(result, null, 1));
  if (values.out) writeFileSync(values.out, JSON.stringify(result, null, 2));
  await inner.close();
}

type ProfileNode = { type: string; description: string; time_in_nanos: number; children?: ProfileNode[] };
type Profile = { shards: Array<{ searches: Array<{ query: ProfileNode[]; rewrite_time: number }> }> };

/** Each side's Lucene profile per target: the k-NN search runs in the rewrite; BM25 in the query phase. */
async function profile() {
  const queries = readJson<Query[]>('queries.json').slice(0, Number(values.queries));
  const inner = createSearchClient({ nodes: [config.opensearch.url], timeoutMs: 60_000 });
  const withProfile = (body: Body) => ({ ...body, profile: true });
  const results = [];
  for (const target of targets()) {
    const { client, last } = recording(inner, target, withProfile);
    const sides = {
      bm25: (query: Query) => lexicalSearch(client, target.alias, { ...request(query, 50, 50), rankingOnly: true }),
      knn: (query: Query) => vectorSearch(client, target.alias, { ...request(query, 50, 50), rankingOnly: true }, 0),
      hybrid: (query: Query) => hybridSearch(client, target.alias, request(query, 50), tuning),
    };
    for (const [side, run] of Object.entries(sides)) {
      const rewrite: number[] = [];
      const queryTime: number[] = [];
      const types = new Set<string>();
      for (const query of queries) {
        await run(query);
        const shards = (last.response as { profile: Profile }).profile.shards;
        rewrite.push(shards.reduce((sum, shard) => sum + shard.searches[0].rewrite_time, 0) / 1e6);
        queryTime.push(
          shards.reduce(
            (sum, shard) => sum + shard.searches[0].query.reduce((s, node) => s + node.time_in_nanos, 0),
            0,
          ) / 1e6,
        );
        for (const shard of shards) for (const node of shard.searches[0].query) types.add(node.type);
      }
      results.push({
        target: target.label,
        side,
        rewrite_ms_p50: round(percentile(rewrite, 50), 2),
        query_ms_p50: round(percentile(queryTime, 50), 2),
        lucene_queries: [...types],
      });
    }
  }
  console.log(JSON.stringify(results, null, 1));
  if (values.out) writeFileSync(values.out, JSON.stringify(results, null, 2));
  await inner.close();
}

async function drop() {
  const client = createSearchClient({ nodes: [config.opensearch.url], timeoutMs: 120_000 });
  const index = await concreteIndex(client, values.alias as string);
  if (!index?.startsWith('kbqa-chunks-v')) throw new Error(`refusing to delete ${index}`);
  await client.request('DELETE', `/${index}`);
  console.log(`deleted ${index}`);
  await client.close();
}

const commands: Record<string, () => Promise<void>> = { prepare, load, indexing, copy, measure, profile, drop };
const command = commands[positionals[0] ?? ''];
if (!command) {
  console.error('usage: node bench/neighbours.ts prepare|load|copy|measure|profile|drop … (see the top of the file)');
  process.exit(2);
}
await command();
