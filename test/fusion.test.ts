// The fusion as a tunable (service/search/fusion.ts) on the real OpenSearch (rendering and parsing without a cluster:
// test/unit/fusionPipelines.test.ts): a hybrid search with an override sent inline: extreme weights rank exactly as
// one side does, min_max and l2 work, depth and field overrides reach the query, side ranks
// are read back under an inline RRF pipeline, and the named pipelines stay as they were.
//
// Scope: an index of its own (KBQA_CHUNKS_ALIAS=kbqa-chunks-fusion, deleted afterwards), so the rankings compared
// here hold this file's chunks only. The app keeps the default fusion config: the named search pipelines are
// cluster-wide, and an app with another fusion would rewrite them for every app on the cluster.
import { HYBRID_EXPLAIN_SEARCH_PIPELINE, HYBRID_SEARCH_PIPELINE } from '../service/search/assets.ts';
import type { HybridTuning } from '../service/hybridTuning.ts';
import { lexicalSearch, type RetrievalRequest, type RetrievedChunk } from '../service/search/retrieval.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { dropAliasFamily } from './helpers/aliasFamily.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';

const ALIAS = 'kbqa-chunks-fusion';
const test = testWithApp<{ user: TestUser; kb: string; request: RetrievalRequest }>({
  env: { KBQA_CHUNKS_ALIAS: ALIAS },
});
const QUESTION = 'How does a sailor keep a small boat from drifting away at night?';

/**
 * One chunk each; a chunk's title is its file's name. The café note, stuffed with the question's words (title too),
 * wins BM25; the mooring note, which shares none of them, is about what the question means.
 */
const DOCUMENTS: Record<string, string> = {
  'mooring.md':
    '# Mooring\n\nTie the vessel to the pontoon with two ropes, bow and stern, and check every knot before dark so the tide cannot carry it off.',
  'night sailor cafe.md':
    '# The Night Sailor café\n\nThe night sailor café sells small boat-shaped pastries; at night customers keep drifting in from the market, away from the rain.',
  'anchor.md':
    '# Anchoring\n\nDrop the anchor in sand, let out five times the depth in chain, and set it by reversing gently until the boat holds.',
  'bread.md':
    '# Sourdough\n\nFeed the starter twice a day, fold the dough every half hour and bake it in a hot covered pot.',
  'taxes.md':
    '# Tax forms\n\nFreelancers file the yearly return by the end of April and keep receipts for seven years.',
  'tomatoes.md':
    '# Tomatoes\n\nStake the plants early, water at the root in the morning and pinch out the side shoots.',
  'railway.md':
    '# Timetable\n\nThe first train leaves the valley station at six; on Sundays the night train does not run.',
  'volcano.md':
    '# Volcanoes\n\nBasalt lava flows far because it is runny; explosive eruptions come from sticky, gas-rich magma.',
};

test.before(async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store, { label: 'fusion' });
  const kb = await createKb(app, user.key, 'fusion');
  for (const [filename, content] of Object.entries(DOCUMENTS)) await ingest(app, user.key, kb, filename, content);
  const vector = await app.deps.rag.embedQuestion(QUESTION);
  Object.assign(t.context, {
    user,
    kb,
    request: { text: QUESTION, vector, knowledgeBaseIds: [kb], size: 10, depth: 10 },
  });
});

test.after.always(async () => {
  await dropAliasFamily(ALIAS);
});

const ids = (chunks: RetrievedChunk[]) => chunks.map((chunk) => chunk.chunk_id);
const files = (chunks: RetrievedChunk[]) => chunks.map((chunk) => chunk.filename);

async function namedPipelines(app: TestApp) {
  const read = (name: string) => app.deps.search.request<Record<string, unknown>>('GET', `/_search/pipeline/${name}`);
  return { plain: await read(HYBRID_SEARCH_PIPELINE), explain: await read(HYBRID_EXPLAIN_SEARCH_PIPELINE) };
}

test.serial(
  'extreme weights sent inline rank exactly as one side does; the named pipelines are untouched',
  async (t) => {
    const { app, request } = t.context;
    const search = app.deps.search;
    const before = await namedPipelines(app);

    const lexical = await search.lexicalSearch(request);
    const dense = await search.vectorSearch(request);
    t.true(
      lexical.length >= 3 && lexical.length < Object.keys(DOCUMENTS).length,
      `BM25 matches some, not all: ${files(lexical)}`,
    );
    t.is(dense.length, Object.keys(DOCUMENTS).length, 'k-NN returns every chunk of the KB');
    t.notDeepEqual(
      files(lexical).slice(0, 3),
      files(dense).slice(0, 3),
      `the sides disagree: ${files(lexical)} vs ${files(dense)}`,
    );

    const fused = await search.hybridSearch(request);
    const bm25Only = await search.hybridSearch(request, { weights: [1, 0] });
    const knnOnly = await search.hybridSearch(request, { weights: [0, 1] });
    t.deepEqual(ids(bm25Only).slice(0, lexical.length), ids(lexical), `1:0 ranks as BM25: ${files(bm25Only)}`);
    t.deepEqual(ids(knnOnly).slice(0, dense.length), ids(dense), `0:1 ranks as k-NN: ${files(knnOnly)}`);
    t.true(
      JSON.stringify(ids(fused)) !== JSON.stringify(ids(bm25Only)) ||
        JSON.stringify(ids(fused)) !== JSON.stringify(ids(knnOnly)),
      'the default (0.5:0.5) ranks unlike at least one extreme',
    );

    t.deepEqual(await namedPipelines(app), before, 'overrides never write the named pipelines');
  },
);

test.serial('min_max and l2 inline: results from both sides, normalized scores, null side ranks', async (t) => {
  const { app, request } = t.context;
  const search = app.deps.search;
  const lexical = await search.lexicalSearch(request);
  const dense = await search.vectorSearch(request);
  for (const fusion of ['min_max', 'l2'] as const) {
    const chunks = await search.hybridSearch({ ...request, withSideRanks: true }, { fusion, weights: [0.3, 0.7] });
    t.is(chunks.length, Object.keys(DOCUMENTS).length, fusion);
    t.true(
      chunks.every(
        (chunk, index) =>
          chunk.score >= 0 && chunk.score <= 1 && (index === 0 || chunk.score <= chunks[index - 1].score),
      ),
      `${fusion}: ${chunks.map((chunk) => chunk.score)}`,
    );
    t.true(
      chunks.every((chunk) => chunk.bm25_rank === null && chunk.vector_rank === null),
      'normalization techniques report no side ranks',
    );
    // All weight on BM25: BM25's hits first, in its order.
    const bm25Only = await search.hybridSearch(request, { fusion, weights: [1, 0] });
    t.deepEqual(ids(bm25Only).slice(0, lexical.length), ids(lexical), `${fusion} 1:0: ${files(bm25Only)}`);
    const knnOnly = await search.hybridSearch(request, { fusion, weights: [0, 1] });
    t.deepEqual(files(knnOnly).slice(0, 3), files(dense).slice(0, 3), `${fusion} 0:1: ${files(knnOnly)}`);
  }
});

test.serial("an inline RRF pipeline still reports each side's rank, with its own rank constant", async (t) => {
  const { app, request } = t.context;
  const search = app.deps.search;
  const lexical = ids(await search.lexicalSearch(request));
  const dense = ids(await search.vectorSearch(request));
  for (const override of [{}, { rankConstant: 5, weights: [0.2, 0.8] as [number, number] }]) {
    const chunks = await search.hybridSearch({ ...request, withSideRanks: true }, override);
    t.true(chunks.some((chunk) => chunk.bm25_rank !== null));
    for (const chunk of chunks) {
      t.is(
        chunk.bm25_rank,
        lexical.includes(chunk.chunk_id) ? lexical.indexOf(chunk.chunk_id) + 1 : null,
        `${JSON.stringify(override)} ${chunk.filename}`,
      );
      t.is(chunk.vector_rank, dense.indexOf(chunk.chunk_id) + 1, `${JSON.stringify(override)} ${chunk.filename}`);
    }
  }
});

test.serial('depth and field overrides reach the query', async (t) => {
  const { app, request } = t.context;
  const search = app.deps.search;
  const shallow = await search.hybridSearch(request, { bm25Depth: 2, knnDepth: 1 });
  t.true(shallow.length >= 2 && shallow.length <= 3, `2 BM25 hits and 1 k-NN hit at most: ${files(shallow)}`);
  const cut = await search.hybridSearch(request, { bm25Depth: 2, knnDepth: 6 });
  t.true(cut.length <= 4, `the k-NN side is cut to pagination_depth 2: ${files(cut)}`);

  const titleOnly: HybridTuning['bm25Fields'] = [{ name: 'title', boost: 1 }];
  const client = { request: search.request, close: async () => undefined };
  const titleLexical = await lexicalSearch(client, search.alias, request, titleOnly);
  t.deepEqual(files(titleLexical), ['night sailor cafe.md'], "only the café's title holds a question word");
  t.true(titleLexical.length < (await search.lexicalSearch(request)).length, 'fewer chunks match on titles alone');
  const titled = await search.hybridSearch(request, { bm25Fields: titleOnly, weights: [1, 0] });
  t.deepEqual(ids(titled).slice(0, titleLexical.length), ids(titleLexical));
});
