// The real stack: OpenSearch with k-NN and neural-search, hybrid + RRF doing what RRF says, FerretDB keeping
// unique indexes, and the service's own assets in place. Scratch indices and pipelines are removed afterwards.
import { randomUUID } from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { MongoClient } from 'mongodb';
import { loadConfig } from '../service/config.ts';
import { REQUIRED_OPENSEARCH_MODULES } from '../stack/provision.ts';
import { hybridPipelineBody } from '../service/search/assets.ts';
import { openSearchIndex, type SearchIndex } from '../service/search/index.ts';

const test = anyTest as TestFn<{ search: SearchIndex; scratch: string; pipeline: string }>;
const config = loadConfig();

test.before(async (t) => {
  t.context.search = openSearchIndex({
    url: config.opensearch.url,
    timeoutMs: 30_000,
    embedderName: 'bge-small-en-v1.5',
    dimensions: 384,
    shards: 1,
    replicas: 0,
    rrfRankConstant: 60,
    rrfWeights: [0.5, 0.5],
  });
  t.context.scratch = `kbqa-test-${randomUUID()}`;
  t.context.pipeline = `kbqa-test-rrf-${randomUUID()}`;
});

test.after.always(async (t) => {
  const { search, scratch, pipeline } = t.context;
  await search.request('DELETE', `/${scratch}`, { acceptStatuses: [404] });
  await search.request('DELETE', `/_search/pipeline/${pipeline}`, { acceptStatuses: [404] });
  await search.close();
});

test('OpenSearch 3.x runs with k-NN, neural-search and the modules kbqa needs', async (t) => {
  const info = await t.context.search.request<{ version: { number: string } }>('GET', '/');
  t.regex(info.version.number, /^3\./);
  const { plugins, modules } = await t.context.search.listPluginsAndModules();
  t.true(plugins.includes('opensearch-knn'), plugins.join(','));
  t.true(plugins.includes('opensearch-neural-search'), plugins.join(','));
  for (const module of REQUIRED_OPENSEARCH_MODULES)
    t.true(modules.includes(module), `${module} in ${modules.join(',')}`);
  t.is(await t.context.search.problem(), null);
});

// Four documents in two KBs. Vectors in 3-D make the k-NN order easy to predict by hand.
const documents = [
  { id: 'a', kb: 'kb-1', text: 'The tram depot opens at six in the morning', v: [1, 0, 0] },
  { id: 'b', kb: 'kb-1', text: 'Trams run every ten minutes from the depot', v: [0.9, 0.1, 0] },
  { id: 'c', kb: 'kb-1', text: 'Bicycles may be carried on trams after nine', v: [0, 1, 0] },
  { id: 'd', kb: 'kb-2', text: 'The tram depot tram depot tram depot', v: [1, 0, 0] },
];

test.serial(
  'a knn_vector (lucene) + english text index takes documents, and hybrid RRF fuses as RRF predicts',
  async (t) => {
    const { search, scratch, pipeline } = t.context;
    await search.request('PUT', `/${scratch}`, {
      body: {
        settings: { 'index.knn': true, number_of_shards: 1, number_of_replicas: 0 },
        mappings: {
          properties: {
            text: { type: 'text', analyzer: 'english' },
            kb: { type: 'keyword' },
            v: {
              type: 'knn_vector',
              dimension: 3,
              method: { name: 'hnsw', engine: 'lucene', space_type: 'cosinesimil' },
            },
          },
        },
      },
    });
    for (const document of documents) {
      await search.request('PUT', `/${scratch}/_doc/${document.id}`, {
        querystring: { refresh: 'true' },
        body: { text: document.text, kb: document.kb, v: document.v },
      });
    }
    // English analysis: "opening" stems to match "opens".
    const stemmed = await search.request<{ hits: { hits: Array<{ _id: string }> } }>('POST', `/${scratch}/_search`, {
      body: { query: { match: { text: 'opening' } } },
    });
    t.deepEqual(
      stemmed.hits.hits.map((hit) => hit._id),
      ['a'],
    );

    const rankConstant = 5;
    await search.request('PUT', `/_search/pipeline/${pipeline}`, {
      body: hybridPipelineBody({ rrfRankConstant: rankConstant, rrfWeights: [0.5, 0.5] }, false),
    });
    const filter = { term: { kb: 'kb-1' } };
    const response = await search.request<{ hits: { hits: Array<{ _id: string; _score: number }> } }>(
      'POST',
      `/${scratch}/_search`,
      {
        querystring: { search_pipeline: pipeline },
        body: {
          size: 10,
          query: {
            hybrid: {
              queries: [
                { bool: { must: { match: { text: 'bicycles trams' } }, filter } },
                { knn: { v: { vector: [1, 0.05, 0], k: 3, filter } } },
              ],
            },
          },
        },
      },
    );
    // Read each side's own order with single-sided queries and compute the RRF fusion by hand: the test checks the
    // fusion (and that the filter reaches both sides), not BM25's or HNSW's internals.
    const side = async (query: unknown) =>
      (
        await search.request<{ hits: { hits: Array<{ _id: string }> } }>('POST', `/${scratch}/_search`, {
          body: { size: 10, query },
        })
      ).hits.hits.map((hit) => hit._id);
    const lexical = await side({ bool: { must: { match: { text: 'bicycles trams' } }, filter } });
    const vector = await side({ knn: { v: { vector: [1, 0.05, 0], k: 3, filter } } });
    t.false(lexical.includes('d'), 'filter applies to the BM25 side');
    t.false(vector.includes('d'), 'filter applies to the k-NN side');
    const expected = new Map<string, number>();
    for (const order of [lexical, vector]) {
      order.forEach((id, index) => expected.set(id, (expected.get(id) ?? 0) + 0.5 / (rankConstant + index + 1)));
    }
    const fused = response.hits.hits;
    t.deepEqual(
      fused.map((hit) => hit._id),
      [...expected.entries()].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0])).map(([id]) => id),
    );
    for (const hit of fused)
      t.true(Math.abs(hit._score - (expected.get(hit._id) ?? 0)) < 1e-6, `${hit._id}: ${hit._score}`);
    // The constant we set is the one applied: with the default 60 the top score would be 2 × 0.5/61 ≈ 0.0164.
    t.true(Math.abs(fused[0]._score - (expected.get(fused[0]._id) ?? 0)) < 1e-6);
    t.true(fused[0]._score > 0.5 / 61 + 0.5 / 61);
  },
);

test('the service bootstrap created the chunk index behind its alias and the RRF pipelines', async (t) => {
  const { search } = t.context;
  const alias = await search.request<Record<string, unknown>>('GET', '/_alias/kbqa-chunks');
  t.true(search.indexName in alias);
  const mapping = await search.request<
    Record<string, { mappings: { properties: Record<string, { type: string; method?: { engine: string } }> } }>
  >('GET', `/${search.indexName}/_mapping`);
  const properties = mapping[search.indexName].mappings.properties;
  t.is(properties.embedding.type, 'knn_vector');
  t.is(properties.embedding.method?.engine, 'lucene');
  const pipeline = await search.request<Record<string, { phase_results_processors: unknown[] }>>(
    'GET',
    '/_search/pipeline/kbqa-hybrid-rrf-v1',
  );
  t.is(JSON.stringify(pipeline['kbqa-hybrid-rrf-v1'].phase_results_processors).includes('"rrf"'), true);
});

test('FerretDB stores and finds documents and rejects a duplicate on a unique index', async (t) => {
  const client = new MongoClient(config.mongodb.url, { serverSelectionTimeoutMS: 5_000, retryWrites: false });
  await client.connect();
  const collection = client.db().collection<{ _id: string; email: string }>(`stack_test_${randomUUID().slice(0, 8)}`);
  try {
    await collection.createIndex({ email: 1 }, { unique: true });
    await collection.insertOne({ _id: randomUUID(), email: 'one@example.test' });
    const found = await collection.findOne({ email: 'one@example.test' });
    t.is(found?.email, 'one@example.test');
    const error = await t.throwsAsync(collection.insertOne({ _id: randomUUID(), email: 'one@example.test' }));
    t.is((error as { code?: number }).code, 11000);
    t.is(await collection.countDocuments({}), 1);
  } finally {
    await collection.drop().catch(() => undefined);
    await client.close();
  }
});
