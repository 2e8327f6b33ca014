// The fusion as a tunable (service/search/fusion.ts): the pipelines each technique renders, the knobs' parsing and
// validation (config and --sweep), and, on the real OpenSearch, a hybrid search with an override sent inline: extreme
// weights rank exactly as one side does, min_max and l2 work, depth and field overrides reach the query, side ranks
// are read back under an inline RRF pipeline, and the named pipelines stay as they were.
//
// Scope: an index of its own (KBQA_CHUNKS_ALIAS=kbqa-chunks-fusion, deleted afterwards), so other files' chunks never
// enter the rankings compared here. The app keeps the default fusion config: the named search pipelines are
// cluster-wide, and an app with another fusion would rewrite them under every other test file.
import { readFileSync } from 'node:fs';
import anyTest, { type TestFn } from 'ava';
import { loadConfig } from '../service/config.ts';
import { parseSweep, type GridPoint } from '../service/eval/sweep.ts';
import { HYBRID_EXPLAIN_SEARCH_PIPELINE, HYBRID_SEARCH_PIPELINE, hybridPipelineBody } from '../service/search/assets.ts';
import { DEFAULT_HYBRID_TUNING, parseBm25Fields, parseWeights, type HybridTuning } from '../service/hybridTuning.ts';
import { maxLexicalTerms, multiMatchFields, renderHybridPipeline, samePipeline, sideDepths, weightAsDouble } from '../service/search/fusion.ts';
import { lexicalSearch, LEXICAL_FIELDS, MAX_LEXICAL_TERMS, type RetrievalRequest, type RetrievedChunk } from '../service/search/retrieval.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { dropAliasFamily } from './helpers/aliasFamily.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';

const test = anyTest as TestFn<{ app: TestApp; user: TestUser; kb: string; request: RetrievalRequest }>;

const ALIAS = 'kbqa-chunks-fusion';
const QUESTION = 'How does a sailor keep a small boat from drifting away at night?';

/**
 * One chunk each; a chunk's title is its file's name. The café note, stuffed with the question's words (title too),
 * wins BM25; the mooring note, which shares none of them, is about what the question means.
 */
const DOCUMENTS: Record<string, string> = {
  'mooring.md': '# Mooring\n\nTie the vessel to the pontoon with two ropes, bow and stern, and check every knot before dark so the tide cannot carry it off.',
  'night sailor cafe.md': '# The Night Sailor café\n\nThe night sailor café sells small boat-shaped pastries; at night customers keep drifting in from the market, away from the rain.',
  'anchor.md': '# Anchoring\n\nDrop the anchor in sand, let out five times the depth in chain, and set it by reversing gently until the boat holds.',
  'bread.md': '# Sourdough\n\nFeed the starter twice a day, fold the dough every half hour and bake it in a hot covered pot.',
  'taxes.md': '# Tax forms\n\nFreelancers file the yearly return by the end of April and keep receipts for seven years.',
  'tomatoes.md': '# Tomatoes\n\nStake the plants early, water at the root in the morning and pinch out the side shoots.',
  'railway.md': '# Timetable\n\nThe first train leaves the valley station at six; on Sundays the night train does not run.',
  'volcano.md': '# Volcanoes\n\nBasalt lava flows far because it is runny; explosive eruptions come from sticky, gas-rich magma.',
};

test.before(async (t) => {
  const app = await startTestApp({ KBQA_CHUNKS_ALIAS: ALIAS });
  const user = await makeUser(app.deps.store, { label: 'fusion' });
  const kb = await createKb(app, user.key, 'fusion');
  for (const [filename, content] of Object.entries(DOCUMENTS)) await ingest(app, user.key, kb, filename, content);
  const vector = await app.deps.rag.embedQuestion(QUESTION);
  t.context = { app, user, kb, request: { text: QUESTION, vector, knowledgeBaseIds: [kb], size: 10, depth: 10 } };
});

test.after.always(async (t) => {
  await t.context.app?.close();
  await dropAliasFamily(ALIAS);
});

const ids = (chunks: RetrievedChunk[]) => chunks.map((chunk) => chunk.chunk_id);
const files = (chunks: RetrievedChunk[]) => chunks.map((chunk) => chunk.filename);

// --- rendering and parsing (no cluster) ---

test('the default tuning renders exactly the versioned RRF file (today\'s pipeline), and the explain variant adds the explanation', (t) => {
  const file = JSON.parse(readFileSync(new URL('../search-pipelines/kbqa-hybrid-rrf.v1.json', import.meta.url), 'utf8'));
  const defaults = { rrfRankConstant: DEFAULT_HYBRID_TUNING.rankConstant, rrfWeights: DEFAULT_HYBRID_TUNING.weights };
  t.deepEqual(hybridPipelineBody(defaults, false), file);
  t.deepEqual(hybridPipelineBody({ ...defaults, hybridFusion: 'rrf' }, true), {
    ...file,
    response_processors: [{ hybrid_score_explanation: {} }],
  });
  const rrf = renderHybridPipeline({ fusion: 'rrf', rankConstant: 20, weights: [0.3, 0.7] }, false);
  t.deepEqual(rrf, { phase_results_processors: [{ 'score-ranker-processor': { combination: { technique: 'rrf', rank_constant: 20, parameters: { weights: [0.3, 0.7] } } } }] });
});

test('min_max and l2 render a normalization-processor with arithmetic_mean and the weights', (t) => {
  for (const fusion of ['min_max', 'l2'] as const) {
    const named = hybridPipelineBody({ rrfRankConstant: 60, rrfWeights: [0.3, 0.7], hybridFusion: fusion }, false);
    t.deepEqual(named.phase_results_processors, [
      { 'normalization-processor': { normalization: { technique: fusion }, combination: { technique: 'arithmetic_mean', parameters: { weights: [0.3, 0.7] } } } },
    ]);
    t.true(named.description?.includes(fusion), named.description);
    t.false(JSON.stringify(named).includes('score-ranker-processor'));
    t.deepEqual(renderHybridPipeline({ fusion, rankConstant: 60, weights: [0.3, 0.7] }, true).response_processors, [{ hybrid_score_explanation: {} }]);
  }
});

test('whole-number weights are sent as non-integral doubles that are the same float (neural-search casts them to Double)', (t) => {
  for (const weight of [0, 1]) {
    const sent = weightAsDouble(weight);
    t.false(Number.isInteger(sent));
    t.true(/[.e]/.test(JSON.stringify(sent)), JSON.stringify(sent));
    t.is(Math.fround(sent), weight);
  }
  t.is(weightAsDouble(0.3), 0.3);
  const rendered = renderHybridPipeline({ fusion: 'rrf', rankConstant: 60, weights: [1, 0] }, false);
  t.false(/"weights":\[(?:0|1),/.test(JSON.stringify(rendered)), JSON.stringify(rendered));
});

test('pipeline identity, depths and the BM25 clause budget', (t) => {
  const deeper: HybridTuning = { ...DEFAULT_HYBRID_TUNING, bm25Depth: 5, bm25Fields: [{ name: 'title', boost: 3 }] };
  t.true(samePipeline(DEFAULT_HYBRID_TUNING, deeper), 'depths and fields are in the query, not the pipeline');
  t.false(samePipeline(DEFAULT_HYBRID_TUNING, { ...DEFAULT_HYBRID_TUNING, rankConstant: 10 }));
  t.true(samePipeline({ ...DEFAULT_HYBRID_TUNING, fusion: 'l2' }, { ...DEFAULT_HYBRID_TUNING, fusion: 'l2', rankConstant: 10 }), 'l2 has no rank constant');
  t.deepEqual(sideDepths(DEFAULT_HYBRID_TUNING, { depth: 50, size: 10 }), { paginationDepth: 50, k: 50 }, 'unset: the request depth, as before');
  t.deepEqual(sideDepths(DEFAULT_HYBRID_TUNING, { depth: 10, size: 20 }), { paginationDepth: 20, k: 20 });
  t.deepEqual(sideDepths({ bm25Depth: 30, knnDepth: 80 }, { depth: 50, size: 50 }), { paginationDepth: 30, k: 30 }, 'k is cut to pagination_depth');
  t.deepEqual(LEXICAL_FIELDS, ['text', 'title'], 'default fields sent as before');
  t.is(MAX_LEXICAL_TERMS, 256);
  t.is(maxLexicalTerms(4), 128);
  t.deepEqual([1, 2, 3, 4].map(maxLexicalTerms), [512, 256, 170, 128], 'the 512-clause budget shared by the fields');
  t.deepEqual(multiMatchFields([{ name: 'text', boost: 1 }, { name: 'title', boost: 2 }]), ['text', 'title^2']);
});

test('knobs parse with clear problems, in config and in --sweep', (t) => {
  t.deepEqual(parseBm25Fields('text^1:title^2', ':'), { value: [{ name: 'text', boost: 1 }, { name: 'title', boost: 2 }] });
  t.regex((parseBm25Fields('body', ',') as { problem: string }).problem, /"body" is not a field BM25 can search/);
  t.regex((parseBm25Fields('text,text^2', ',') as { problem: string }).problem, /listed twice/);
  t.regex((parseBm25Fields('title^0', ',') as { problem: string }).problem, /boost/);
  t.regex((parseWeights('0.3:0.3', ':') as { problem: string }).problem, /sum to 1/);

  const defaults = loadConfig({});
  t.like(defaults.opensearch, { hybridFusion: 'rrf', rrfRankConstant: 5, rrfWeights: [0.3, 0.7], bm25Depth: null, knnDepth: null, sentenceWeight: 0.5 });
  t.deepEqual(defaults.opensearch.bm25Fields, DEFAULT_HYBRID_TUNING.bm25Fields);
  const set = loadConfig({ KBQA_HYBRID_FUSION: 'min_max', KBQA_RRF_WEIGHTS: '0.3,0.7', KBQA_BM25_FIELDS: 'text, title^2', KBQA_BM25_DEPTH: '80', KBQA_KNN_DEPTH: '60' });
  t.like(set.opensearch, { hybridFusion: 'min_max', rrfWeights: [0.3, 0.7], bm25Depth: 80, knnDepth: 60 });
  t.is(loadConfig({ KBQA_SENTENCE_WEIGHT: '0' }).opensearch.sentenceWeight, 0);
  t.throws(() => loadConfig({ KBQA_SENTENCE_WEIGHT: '-1' }), { message: /KBQA_SENTENCE_WEIGHT/ });
  t.deepEqual(set.opensearch.bm25Fields, [{ name: 'text', boost: 1 }, { name: 'title', boost: 2 }]);
  t.throws(() => loadConfig({ KBQA_RRF_WEIGHTS: '0.3,0.3' }), { message: /KBQA_RRF_WEIGHTS: weights "0\.3,0\.3" must sum to 1/ });
  t.throws(() => loadConfig({ KBQA_RRF_WEIGHTS: '1' }), { message: /KBQA_RRF_WEIGHTS: .*two weights/ });
  t.throws(() => loadConfig({ KBQA_HYBRID_FUSION: 'z_score' }), { message: /KBQA_HYBRID_FUSION/ });
  t.throws(() => loadConfig({ KBQA_BM25_FIELDS: 'text,body' }), { message: /KBQA_BM25_FIELDS: "body" is not a field/ });
  t.throws(() => loadConfig({ KBQA_BM25_DEPTH: '20', KBQA_KNN_DEPTH: '50' }), { message: /KBQA_KNN_DEPTH must be at most KBQA_BM25_DEPTH/ });
  t.throws(() => loadConfig({ KBQA_KNN_DEPTH: '0' }), { message: /KBQA_KNN_DEPTH/ });

  const sweep = parseSweep(['fusion=rrf,min_max', 'weights=0.3:0.7,0.5:0.5,1:0']);
  t.true('grid' in sweep);
  const grid = 'grid' in sweep ? sweep.grid : [];
  t.is(grid.length, 6);
  t.deepEqual(grid[0].values, { fusion: 'rrf', weights: '0.3:0.7' });
  t.deepEqual(grid[5].override, { fusion: 'min_max', weights: [1, 0] });
  t.regex((parseSweep(['chunk_tokens=128,256']) as { problem: string }).problem, /ingest-time knob.*KBQA_CHUNK_TOKENS.*kbqa index migrate/);
  t.regex((parseSweep(['size=1,2']) as { problem: string }).problem, /unknown knob "size"/);
  t.regex((parseSweep(['weights=0.2:0.2']) as { problem: string }).problem, /--sweep weights: .*sum to 1/);
  t.regex((parseSweep(['fusion=rrf', 'fusion=l2']) as { problem: string }).problem, /twice/);
  const sentences = parseSweep(['sentence_weight=0,0.5,1.25']);
  t.deepEqual('grid' in sentences ? sentences.grid.map((point) => point.override) : sentences, [{ sentenceWeight: 0 }, { sentenceWeight: 0.5 }, { sentenceWeight: 1.25 }]);
  t.regex((parseSweep(['sentence_weight=x']) as { problem: string }).problem, /--sweep sentence_weight: "x" is not a number from 0 to 10/);
  // Without sentence vectors every non-zero weight would rank as 0 does.
  t.regex((parseSweep(['sentence_weight=0,0.5'], { sentenceVectors: false }) as { problem: string }).problem, /sentence_weight=0\.5: .*KBQA_SENTENCE_VECTORS=off/);
  t.deepEqual((parseSweep(['sentence_weight=0'], { sentenceVectors: false }) as { grid: GridPoint[] }).grid.map((point) => point.override), [{ sentenceWeight: 0 }]);
});

// --- on the real OpenSearch ---

async function namedPipelines(app: TestApp) {
  const read = (name: string) => app.deps.search.request<Record<string, unknown>>('GET', `/_search/pipeline/${name}`);
  return { plain: await read(HYBRID_SEARCH_PIPELINE), explain: await read(HYBRID_EXPLAIN_SEARCH_PIPELINE) };
}

test.serial('extreme weights sent inline rank exactly as one side does; the named pipelines are untouched', async (t) => {
  const { app, request } = t.context;
  const search = app.deps.search;
  const before = await namedPipelines(app);

  const lexical = await search.lexicalSearch(request);
  const dense = await search.vectorSearch(request);
  t.true(lexical.length >= 3 && lexical.length < Object.keys(DOCUMENTS).length, `BM25 matches some, not all: ${files(lexical)}`);
  t.is(dense.length, Object.keys(DOCUMENTS).length, 'k-NN returns every chunk of the KB');
  t.notDeepEqual(files(lexical).slice(0, 3), files(dense).slice(0, 3), `the sides disagree: ${files(lexical)} vs ${files(dense)}`);

  const fused = await search.hybridSearch(request);
  const bm25Only = await search.hybridSearch(request, { weights: [1, 0] });
  const knnOnly = await search.hybridSearch(request, { weights: [0, 1] });
  t.deepEqual(ids(bm25Only).slice(0, lexical.length), ids(lexical), `1:0 ranks as BM25: ${files(bm25Only)}`);
  t.deepEqual(ids(knnOnly).slice(0, dense.length), ids(dense), `0:1 ranks as k-NN: ${files(knnOnly)}`);
  t.true(
    JSON.stringify(ids(fused)) !== JSON.stringify(ids(bm25Only)) || JSON.stringify(ids(fused)) !== JSON.stringify(ids(knnOnly)),
    'the default (0.5:0.5) ranks unlike at least one extreme',
  );

  t.deepEqual(await namedPipelines(app), before, 'overrides never write the named pipelines');
});

test.serial('min_max and l2 inline: results from both sides, normalized scores, null side ranks', async (t) => {
  const { app, request } = t.context;
  const search = app.deps.search;
  const lexical = await search.lexicalSearch(request);
  const dense = await search.vectorSearch(request);
  for (const fusion of ['min_max', 'l2'] as const) {
    const chunks = await search.hybridSearch({ ...request, withSideRanks: true }, { fusion, weights: [0.3, 0.7] });
    t.is(chunks.length, Object.keys(DOCUMENTS).length, fusion);
    t.true(chunks.every((chunk, index) => chunk.score >= 0 && chunk.score <= 1 && (index === 0 || chunk.score <= chunks[index - 1].score)), `${fusion}: ${chunks.map((chunk) => chunk.score)}`);
    t.true(chunks.every((chunk) => chunk.bm25_rank === null && chunk.vector_rank === null), 'normalization techniques report no side ranks');
    // All weight on BM25: BM25's hits first, in its order.
    const bm25Only = await search.hybridSearch(request, { fusion, weights: [1, 0] });
    t.deepEqual(ids(bm25Only).slice(0, lexical.length), ids(lexical), `${fusion} 1:0: ${files(bm25Only)}`);
    const knnOnly = await search.hybridSearch(request, { fusion, weights: [0, 1] });
    t.deepEqual(files(knnOnly).slice(0, 3), files(dense).slice(0, 3), `${fusion} 0:1: ${files(knnOnly)}`);
  }
});

test.serial('an inline RRF pipeline still reports each side\'s rank, with its own rank constant', async (t) => {
  const { app, request } = t.context;
  const search = app.deps.search;
  const lexical = ids(await search.lexicalSearch(request));
  const dense = ids(await search.vectorSearch(request));
  for (const override of [{}, { rankConstant: 5, weights: [0.2, 0.8] as [number, number] }]) {
    const chunks = await search.hybridSearch({ ...request, withSideRanks: true }, override);
    t.true(chunks.some((chunk) => chunk.bm25_rank !== null));
    for (const chunk of chunks) {
      t.is(chunk.bm25_rank, lexical.includes(chunk.chunk_id) ? lexical.indexOf(chunk.chunk_id) + 1 : null, `${JSON.stringify(override)} ${chunk.filename}`);
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
  t.deepEqual(files(titleLexical), ['night sailor cafe.md'], 'only the café\'s title holds a question word');
  t.true(titleLexical.length < (await search.lexicalSearch(request)).length, 'fewer chunks match on titles alone');
  const titled = await search.hybridSearch(request, { bm25Fields: titleOnly, weights: [1, 0] });
  t.deepEqual(ids(titled).slice(0, titleLexical.length), ids(titleLexical));
});
