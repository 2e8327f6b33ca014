// `node bench/queryStructure.ts prepare|load|measure …`: the search stage's query structure compared on one index,
// variant by variant, interleaved query by query (each query runs every variant, in a rotating order, so machine
// noise hits all of them alike). A variant is the service's own request (retrieval.ts hybridSearch, lexicalSearch,
// vectorSearch) with its body rewritten on the way out: the filter moved, track_total_hits set, fields dropped. Each
// variant's top hits are compared with the service's query as it is (overlap@size), so a faster variant that returns
// other chunks shows it. Works on an alias of its own (--alias, a kbqa-chunks-<name>), never the shared one.
//   prepare --from-alias A --out DIR   the template chunks (every chunk of A) and the SciFact test questions' vectors
//   load --alias A --dir DIR --kb NAME --count N [--start S]   N perturbed copies into KB NAME (bench/scale.ts)
//   measure --alias A --dir DIR --kb NAME [--label L] [--out FILE]   every variant on KB NAME
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { HYBRID_DEPTH } from '../service/commands/answerQuestion.ts';
import { loadConfig } from '../service/config.ts';
import { createSearchClient, type SearchClient } from '../service/search/client.ts';
import { openSearchIndex, type ChunkDocument } from '../service/search/index.ts';
import { hybridSearch, lexicalSearch, vectorSearch, type RetrievalRequest } from '../service/search/retrieval.ts';
import { DEFAULT_HYBRID_TUNING } from '../service/hybridTuning.ts';
import { loadPerturbedCopies } from './scale.ts';
import { embeddedQuestions, type EmbeddedQuestion } from './questions.ts';
import { benchSearchOptions } from './searchOptions.ts';
import { round, summarize } from './stats.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    alias: { type: 'string' },
    'from-alias': { type: 'string' },
    dir: { type: 'string' },
    out: { type: 'string' },
    kb: { type: 'string' },
    count: { type: 'string' },
    start: { type: 'string' },
    label: { type: 'string' },
    queries: { type: 'string', default: '100' },
    // Default: the shared datasets beside the checkout, as `npm run bench` finds them (bench/options.ts).
    dataset: { type: 'string', default: fileURLToPath(new URL('../../shared/datasets/scifact', import.meta.url)) },
  },
});

type Body = Record<string, unknown>;
type Query = EmbeddedQuestion;

const config = loadConfig();
const size = 8;

function searchIndexOn(alias: string) {
  return openSearchIndex(benchSearchOptions(config, alias));
}

/** A client whose _search bodies pass through `rewrite`, and which remembers the last `took` and hit ids. */
function rewriting(inner: SearchClient, rewrite: (body: Body) => Body) {
  const last = { took: Number.NaN, ids: [] as string[] };
  const client: SearchClient = {
    async request<T>(...args: Parameters<SearchClient['request']>): Promise<T> {
      const [method, path, options] = args;
      if (!path.endsWith('/_search') || !options?.body) return inner.request<T>(...args);
      const body = rewrite(options.body as Body);
      const response =
        body.split === true
          ? ((await splitSearch(inner, path.split('/')[1], body)) as T)
          : await inner.request<T>(method, path, { ...options, body });
      const shaped = response as { took?: number; hits?: { hits: Array<{ _id: string }> } };
      last.took = shaped.took ?? Number.NaN;
      last.ids = (shaped.hits?.hits ?? []).map((hit) => hit._id);
      return response;
    },
    close: () => inner.close(),
  };
  return { client, last };
}

const clone = (body: Body): Body => structuredClone(body);

type SearchHit = { _id: string; _score: number; _source?: Record<string, unknown> };

/**
 * The hybrid body answered another way: its two sub-queries as two searches in one _msearch (each
 * track_total_hits false, ranking fields only), fused here by RRF with the configured rank constant and weights,
 * then the page's sources by _mget. What moving the fusion out of OpenSearch would cost and save.
 */
async function splitSearch(inner: SearchClient, alias: string, body: Body) {
  const hybrid = (body.query as { hybrid: { pagination_depth: number; queries: [Body, Body] } }).hybrid;
  const side = (query: Body) => ({ size: hybrid.pagination_depth, track_total_hits: false, _source: false, query });
  const started = performance.now();
  const sides = await inner.request<{ took: number; responses: Array<{ took: number; hits: { hits: SearchHit[] } }> }>(
    'POST',
    `/${alias}/_msearch`,
    { bulkBody: [{}, side(hybrid.queries[0]), {}, side(hybrid.queries[1])] },
  );
  const { rankConstant, weights } = DEFAULT_HYBRID_TUNING;
  const fused = new Map<string, number>();
  sides.responses.forEach((response, index) =>
    response.hits.hits.forEach((hit, rank) =>
      fused.set(hit._id, (fused.get(hit._id) ?? 0) + weights[index] / (rankConstant + rank + 1)),
    ),
  );
  const page = [...fused.entries()].sort((a, b) => b[1] - a[1]).slice(0, body.size as number);
  const docs = await inner.request<{ docs: Array<{ _id: string; _source: Record<string, unknown> }> }>(
    'POST',
    `/${alias}/_mget`,
    { body: { ids: page.map(([id]) => id) }, querystring: { _source_includes: (body._source as string[]).join(',') } },
  );
  const sources = new Map(docs.docs.map((doc) => [doc._id, doc._source]));
  return {
    took: Math.max(...sides.responses.map((response) => response.took)),
    client_ms: performance.now() - started,
    hits: { hits: page.map(([id, score]) => ({ _id: id, _score: score, _source: sources.get(id) })) },
  };
}
type Hybrid = { hybrid: { queries: [Body, Body] } };

/** The BM25 side's bool and the k-NN side's knn clause of a hybrid body (the script_score wraps the knn). */
function sides(body: Body) {
  const [lexical, vector] = (body.query as Hybrid).hybrid.queries;
  const knnHolder = (vector.script_score as { query: Body } | undefined)?.query ?? vector;
  return { lexical: lexical.bool as Body, knn: (knnHolder.knn as { embedding: Body }).embedding, vector };
}

/** Each kind's variant as the service sends it: the others' overlap is measured against it. */
const BASELINE = { hybrid: 'hybrid (as is)', bm25: 'BM25 alone (as is)', knn: 'k-NN alone (as is)' } as const;

const variants: Record<string, { run: 'hybrid' | 'bm25' | 'knn'; rewrite: (body: Body) => Body }> = {
  'hybrid (as is)': { run: 'hybrid', rewrite: (body) => body },
  'hybrid, track_total_hits false': { run: 'hybrid', rewrite: (body) => ({ ...body, track_total_hits: false }) },
  'hybrid, filter as post_filter': {
    run: 'hybrid',
    rewrite: (body) => {
      const copy = clone(body);
      const { lexical, knn } = sides(copy);
      const filter = knn.filter;
      delete knn.filter;
      delete lexical.filter;
      return { ...copy, post_filter: filter };
    },
  },
  'hybrid, k-NN filter outside the knn clause': {
    run: 'hybrid',
    rewrite: (body) => {
      const copy = clone(body);
      const { knn } = sides(copy);
      const filter = knn.filter;
      delete knn.filter;
      const queries = (copy.query as Hybrid).hybrid.queries;
      queries[1] = { bool: { must: queries[1], filter } };
      return copy;
    },
  },
  'two searches in one _msearch, track_total_hits false, RRF here': {
    run: 'hybrid',
    rewrite: (body) => ({ ...body, split: true }),
  },
  'BM25 alone (as is)': { run: 'bm25', rewrite: (body) => body },
  'BM25 alone, track_total_hits false': { run: 'bm25', rewrite: (body) => ({ ...body, track_total_hits: false }) },
  'BM25 alone, text field only, track_total_hits false': {
    run: 'bm25',
    rewrite: (body) => {
      const copy = clone(body);
      const bool = (copy.query as { bool: { must: { multi_match: { fields: string[] } } } }).bool;
      bool.must.multi_match.fields = ['text'];
      return { ...copy, track_total_hits: false };
    },
  },
  'k-NN alone (as is)': { run: 'knn', rewrite: (body) => body },
  'k-NN alone, track_total_hits false': { run: 'knn', rewrite: (body) => ({ ...body, track_total_hits: false }) },
};

async function prepare() {
  const from = values['from-alias'] as string;
  const dir = values.out as string;
  const search = searchIndexOn(from);
  const response = await search.request<{ hits: { hits: Array<{ _source: ChunkDocument }> } }>(
    'POST',
    `/${from}/_search`,
    { body: { size: 10_000, query: { match_all: {} }, sort: [{ chunk_id: 'asc' }] } },
  );
  const templates = response.hits.hits.map((hit) => hit._source);
  writeFileSync(join(dir, 'templates.json'), JSON.stringify(templates));
  await search.close();
  const queries = await embeddedQuestions(config, values.dataset as string, 'test', Number(values.queries));
  writeFileSync(join(dir, 'queries.json'), JSON.stringify(queries));
  console.log(`${templates.length} templates, ${queries.length} queries → ${dir}`);
}

async function load() {
  const alias = values.alias as string;
  const search = searchIndexOn(alias);
  await search.applyAssets();
  const templates = JSON.parse(readFileSync(join(values.dir as string, 'templates.json'), 'utf8')) as ChunkDocument[];
  const result = await loadPerturbedCopies(
    search,
    templates,
    values.kb as string,
    Number(values.start ?? 0),
    Number(values.count),
    (done, total, rate) => {
      if (done % 10_000 < 500) console.log(`  ${done}/${total} (${rate.toFixed(0)}/s)`);
    },
  );
  console.log(JSON.stringify(result));
  await search.close();
}

async function measure() {
  const alias = values.alias as string;
  const queries = JSON.parse(readFileSync(join(values.dir as string, 'queries.json'), 'utf8')) as Query[];
  const inner = createSearchClient({ nodes: [config.opensearch.url], timeoutMs: 60_000 });
  const count = await inner.request<{ count: number }>('POST', `/${alias}/_count`, {
    body: { query: { term: { knowledge_base_id: values.kb } } },
  });
  const total = await inner.request<{ count: number }>('POST', `/${alias}/_count`, { body: {} });
  const runs = Object.entries(variants).map(([name, variant]) => ({
    name,
    variant,
    ...rewriting(inner, variant.rewrite),
  }));
  const timing = new Map(
    runs.map((run) => [run.name, { client: [] as number[], took: [] as number[], overlap: [] as number[] }]),
  );
  const request = (query: Query): RetrievalRequest => ({
    text: query.text,
    vector: query.vector,
    knowledgeBaseIds: [values.kb as string],
    size,
    depth: HYBRID_DEPTH,
  });
  const call = (run: (typeof runs)[number], query: Query) =>
    run.variant.run === 'hybrid'
      ? hybridSearch(run.client, alias, request(query), DEFAULT_HYBRID_TUNING)
      : run.variant.run === 'bm25'
        ? lexicalSearch(run.client, alias, request(query))
        : vectorSearch(run.client, alias, request(query));
  for (const query of queries.slice(0, 10)) for (const run of runs) await call(run, query);
  for (const [position, query] of queries.entries()) {
    const reference = new Map<string, string[]>();
    const order = runs.map((_, index) => runs[(index + position) % runs.length]);
    for (const run of order) {
      const started = performance.now();
      await call(run, query);
      const record = timing.get(run.name)!;
      record.client.push(performance.now() - started);
      record.took.push(run.last.took);
      reference.set(run.name, run.last.ids);
    }
    for (const run of runs) {
      const base = reference.get(BASELINE[run.variant.run]);
      const ids = reference.get(run.name) ?? [];
      if (base)
        timing.get(run.name)!.overlap.push(ids.filter((id) => base.includes(id)).length / Math.max(1, base.length));
    }
  }
  const rows = runs.map((run) => {
    const record = timing.get(run.name)!;
    const client = summarize(record.client);
    const took = summarize(record.took);
    const overlap = record.overlap.reduce((sum, value) => sum + value, 0) / Math.max(1, record.overlap.length);
    return {
      variant: run.name,
      client_p50_ms: client.p50_ms,
      client_p95_ms: client.p95_ms,
      took_p50_ms: round(took.p50_ms),
      overlap_at_size: round(overlap, 3),
    };
  });
  const result = {
    label: values.label ?? '',
    alias,
    knowledge_base_id: values.kb,
    chunks_in_kb: count.count,
    chunks_in_index: total.count,
    queries: queries.length,
    size,
    depth: HYBRID_DEPTH,
    rows,
  };
  console.log(JSON.stringify(result, null, 1));
  if (values.out) writeFileSync(values.out, JSON.stringify(result, null, 2));
  await inner.close();
}

const commands: Record<string, () => Promise<void>> = { prepare, load, measure };
const command = commands[positionals[0] ?? ''];
if (!command) {
  console.error('usage: node bench/queryStructure.ts prepare|load|measure … (see the comment at the top)');
  process.exit(2);
}
await command();
