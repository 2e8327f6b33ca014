// The fusion as a tunable, without a cluster (service/search/fusion.ts, service/hybridTuning.ts): the pipelines each
// technique renders, the doubles neural-search needs, the depths each side gets, and the knobs' parsing in config
// and --sweep. On the real OpenSearch: test/fusion.test.ts.
import { readFileSync } from 'node:fs';
import test from 'ava';
import { loadConfig } from '../../service/config.ts';
import { parseSweep, type GridPoint } from '../../service/eval/sweep.ts';
import { hybridPipelineBody } from '../../service/search/assets.ts';
import { DEFAULT_HYBRID_TUNING, parseBm25Fields, parseWeights, type HybridTuning } from '../../service/hybridTuning.ts';
import {
  maxLexicalTerms,
  multiMatchFields,
  renderHybridPipeline,
  samePipeline,
  sideDepths,
  weightAsDouble,
} from '../../service/search/fusion.ts';
import { LEXICAL_FIELDS, MAX_LEXICAL_TERMS } from '../../service/search/retrieval.ts';

test("the default tuning renders exactly the versioned RRF file (today's pipeline), and the explain variant adds the explanation", (t) => {
  const file = JSON.parse(
    readFileSync(new URL('../../search-pipelines/kbqa-hybrid-rrf.v1.json', import.meta.url), 'utf8'),
  );
  const defaults = { rrfRankConstant: DEFAULT_HYBRID_TUNING.rankConstant, rrfWeights: DEFAULT_HYBRID_TUNING.weights };
  t.deepEqual(hybridPipelineBody(defaults, false), file);
  t.deepEqual(hybridPipelineBody({ ...defaults, hybridFusion: 'rrf' }, true), {
    ...file,
    response_processors: [{ hybrid_score_explanation: {} }],
  });
  const rrf = renderHybridPipeline({ fusion: 'rrf', rankConstant: 20, weights: [0.3, 0.7] }, false);
  t.deepEqual(rrf, {
    phase_results_processors: [
      {
        'score-ranker-processor': {
          combination: { technique: 'rrf', rank_constant: 20, parameters: { weights: [0.3, 0.7] } },
        },
      },
    ],
  });
});

test('min_max and l2 render a normalization-processor with arithmetic_mean and the weights', (t) => {
  for (const fusion of ['min_max', 'l2'] as const) {
    const named = hybridPipelineBody({ rrfRankConstant: 60, rrfWeights: [0.3, 0.7], hybridFusion: fusion }, false);
    t.deepEqual(named.phase_results_processors, [
      {
        'normalization-processor': {
          normalization: { technique: fusion },
          combination: { technique: 'arithmetic_mean', parameters: { weights: [0.3, 0.7] } },
        },
      },
    ]);
    t.true(named.description?.includes(fusion), named.description);
    t.false(JSON.stringify(named).includes('score-ranker-processor'));
    t.deepEqual(renderHybridPipeline({ fusion, rankConstant: 60, weights: [0.3, 0.7] }, true).response_processors, [
      { hybrid_score_explanation: {} },
    ]);
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
  t.true(
    samePipeline(
      { ...DEFAULT_HYBRID_TUNING, fusion: 'l2' },
      { ...DEFAULT_HYBRID_TUNING, fusion: 'l2', rankConstant: 10 },
    ),
    'l2 has no rank constant',
  );
  t.deepEqual(
    sideDepths(DEFAULT_HYBRID_TUNING, { depth: 50, size: 10 }),
    { paginationDepth: 50, k: 50 },
    'unset: the request depth, as before',
  );
  t.deepEqual(sideDepths(DEFAULT_HYBRID_TUNING, { depth: 10, size: 20 }), { paginationDepth: 20, k: 20 });
  t.deepEqual(
    sideDepths({ bm25Depth: 30, knnDepth: 80 }, { depth: 50, size: 50 }),
    { paginationDepth: 30, k: 30 },
    'k is cut to pagination_depth',
  );
  t.deepEqual(LEXICAL_FIELDS, ['text', 'title'], 'default fields sent as before');
  t.is(MAX_LEXICAL_TERMS, 256);
  t.is(maxLexicalTerms(4), 128);
  t.deepEqual([1, 2, 3, 4].map(maxLexicalTerms), [512, 256, 170, 128], 'the 512-clause budget shared by the fields');
  t.deepEqual(
    multiMatchFields([
      { name: 'text', boost: 1 },
      { name: 'title', boost: 2 },
    ]),
    ['text', 'title^2'],
  );
});

test('knobs parse with clear problems, in config and in --sweep', (t) => {
  t.deepEqual(parseBm25Fields('text^1:title^2', ':'), {
    value: [
      { name: 'text', boost: 1 },
      { name: 'title', boost: 2 },
    ],
  });
  t.regex((parseBm25Fields('body', ',') as { problem: string }).problem, /"body" is not a field BM25 can search/);
  t.regex((parseBm25Fields('text,text^2', ',') as { problem: string }).problem, /listed twice/);
  t.regex((parseBm25Fields('title^0', ',') as { problem: string }).problem, /boost/);
  t.regex((parseWeights('0.3:0.3', ':') as { problem: string }).problem, /sum to 1/);

  const defaults = loadConfig({});
  t.like(defaults.opensearch, {
    hybridFusion: 'rrf',
    rrfRankConstant: 5,
    rrfWeights: [0.3, 0.7],
    bm25Depth: null,
    knnDepth: null,
    sentenceWeight: 0.5,
  });
  t.deepEqual(defaults.opensearch.bm25Fields, DEFAULT_HYBRID_TUNING.bm25Fields);
  const set = loadConfig({
    KBQA_HYBRID_FUSION: 'min_max',
    KBQA_RRF_WEIGHTS: '0.3,0.7',
    KBQA_BM25_FIELDS: 'text, title^2',
    KBQA_BM25_DEPTH: '80',
    KBQA_KNN_DEPTH: '60',
  });
  t.like(set.opensearch, { hybridFusion: 'min_max', rrfWeights: [0.3, 0.7], bm25Depth: 80, knnDepth: 60 });
  t.is(loadConfig({ KBQA_SENTENCE_WEIGHT: '0' }).opensearch.sentenceWeight, 0);
  t.throws(() => loadConfig({ KBQA_SENTENCE_WEIGHT: '-1' }), { message: /KBQA_SENTENCE_WEIGHT/ });
  t.deepEqual(set.opensearch.bm25Fields, [
    { name: 'text', boost: 1 },
    { name: 'title', boost: 2 },
  ]);
  t.throws(() => loadConfig({ KBQA_RRF_WEIGHTS: '0.3,0.3' }), {
    message: /KBQA_RRF_WEIGHTS: weights "0\.3,0\.3" must sum to 1/,
  });
  t.throws(() => loadConfig({ KBQA_RRF_WEIGHTS: '1' }), { message: /KBQA_RRF_WEIGHTS: .*two weights/ });
  t.throws(() => loadConfig({ KBQA_HYBRID_FUSION: 'z_score' }), { message: /KBQA_HYBRID_FUSION/ });
  t.throws(() => loadConfig({ KBQA_BM25_FIELDS: 'text,body' }), { message: /KBQA_BM25_FIELDS: "body" is not a field/ });
  t.throws(() => loadConfig({ KBQA_BM25_DEPTH: '20', KBQA_KNN_DEPTH: '50' }), {
    message: /KBQA_KNN_DEPTH must be at most KBQA_BM25_DEPTH/,
  });
  t.throws(() => loadConfig({ KBQA_KNN_DEPTH: '0' }), { message: /KBQA_KNN_DEPTH/ });

  const sweep = parseSweep(['fusion=rrf,min_max', 'weights=0.3:0.7,0.5:0.5,1:0']);
  t.true('grid' in sweep);
  const grid = 'grid' in sweep ? sweep.grid : [];
  t.is(grid.length, 6);
  t.deepEqual(grid[0].values, { fusion: 'rrf', weights: '0.3:0.7' });
  t.deepEqual(grid[5].override, { fusion: 'min_max', weights: [1, 0] });
  t.regex(
    (parseSweep(['chunk_tokens=128,256']) as { problem: string }).problem,
    /ingest-time knob.*KBQA_CHUNK_TOKENS.*kbqa index migrate/,
  );
  t.regex((parseSweep(['size=1,2']) as { problem: string }).problem, /unknown knob "size"/);
  t.regex((parseSweep(['weights=0.2:0.2']) as { problem: string }).problem, /--sweep weights: .*sum to 1/);
  t.regex((parseSweep(['fusion=rrf', 'fusion=l2']) as { problem: string }).problem, /twice/);
  const sentences = parseSweep(['sentence_weight=0,0.5,1.25']);
  t.deepEqual('grid' in sentences ? sentences.grid.map((point) => point.override) : sentences, [
    { sentenceWeight: 0 },
    { sentenceWeight: 0.5 },
    { sentenceWeight: 1.25 },
  ]);
  t.regex(
    (parseSweep(['sentence_weight=x']) as { problem: string }).problem,
    /--sweep sentence_weight: "x" is not a number from 0 to 10/,
  );
  // Without sentence vectors every non-zero weight would rank as 0 does.
  t.regex(
    (parseSweep(['sentence_weight=0,0.5'], { sentenceVectors: false }) as { problem: string }).problem,
    /sentence_weight=0\.5: .*KBQA_SENTENCE_VECTORS=off/,
  );
  t.deepEqual(
    (parseSweep(['sentence_weight=0'], { sentenceVectors: false }) as { grid: GridPoint[] }).grid.map(
      (point) => point.override,
    ),
    [{ sentenceWeight: 0 }],
  );
});
