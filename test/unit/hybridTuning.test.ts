// The hybrid query's knobs (service/hybridTuning.ts): each parser's accepted forms and its problem sentences, the
// tuning-wide check, and the labels tables and logs print.
import test from 'ava';
import {
  DEFAULT_HYBRID_TUNING,
  DEPTH_RANGE,
  describeTuning,
  formatBm25Fields,
  parseBm25Fields,
  parseFusion,
  parseInteger,
  parseNumber,
  parseWeights,
  tuningProblem,
} from '../../service/hybridTuning.ts';

function problemOf(parsed: { value: unknown } | { problem: string }): string {
  if (!('problem' in parsed)) throw new Error(`expected a problem, got ${JSON.stringify(parsed.value)}`);
  return parsed.problem;
}

test('parseFusion: the three techniques, trimmed; anything else names the choices', (t) => {
  t.deepEqual(parseFusion(' min_max '), { value: 'min_max' });
  t.deepEqual(parseFusion('l2'), { value: 'l2' });
  t.regex(problemOf(parseFusion('z_score')), /"z_score" is not a fusion technique \(rrf, min_max, l2\)/);
  t.regex(problemOf(parseFusion('RRF')), /not a fusion technique/, 'names are case-sensitive');
});

test('parseWeights: two weights in [0, 1] summing to 1 within 0.01, in either separator', (t) => {
  t.deepEqual(parseWeights('0.3,0.7', ','), { value: [0.3, 0.7] });
  t.deepEqual(parseWeights(' 1 : 0 ', ':'), { value: [1, 0] });
  t.deepEqual(parseWeights('0.333,0.666', ','), { value: [0.333, 0.666] }, '0.999 is within neural-search tolerance');
  t.regex(problemOf(parseWeights('0.3,0.68', ',')), /must sum to 1/);
});

test('parseWeights: a wrong count, an empty part, a negative or a weight over 1 is refused', (t) => {
  for (const text of ['0.5', '0.2,0.3,0.5', ',1', '-0.5,1.5', '1.2,-0.2', 'a,b']) {
    t.regex(problemOf(parseWeights(text, ',')), /not two weights \[bm25,knn\]/, text);
  }
  t.regex(
    problemOf(parseWeights('0.5,0.5', ':')),
    /not two weights \[bm25:knn\]/,
    'the separator asked for is the one named',
  );
});

test('parseNumber: finite numbers inside the range, bounds included', (t) => {
  t.deepEqual(parseNumber('0', { min: 0, max: 10 }), { value: 0 });
  t.deepEqual(parseNumber(' 10 ', { min: 0, max: 10 }), { value: 10 });
  t.deepEqual(parseNumber('2.5', { min: 0, max: 10 }), { value: 2.5 });
  for (const text of ['', ' ', '10.01', '-1', 'NaN', 'Infinity', 'x'])
    t.regex(problemOf(parseNumber(text, { min: 0, max: 10 })), /not a number from 0 to 10/, text);
});

test('parseInteger: whole numbers only, in range', (t) => {
  t.deepEqual(parseInteger('60', DEPTH_RANGE), { value: 60 });
  t.regex(problemOf(parseInteger('2.5', DEPTH_RANGE)), /not a whole number from 1 to 10000/);
  t.regex(problemOf(parseInteger('0', DEPTH_RANGE)), /not a whole number/);
  t.regex(problemOf(parseInteger('10001', DEPTH_RANGE)), /not a whole number/);
});

test('parseBm25Fields: fields with optional boosts, blanks between separators ignored', (t) => {
  t.deepEqual(parseBm25Fields('text, title^2', ','), {
    value: [
      { name: 'text', boost: 1 },
      { name: 'title', boost: 2 },
    ],
  });
  t.deepEqual(parseBm25Fields('text.standard^0.5::title', ':'), {
    value: [
      { name: 'text.standard', boost: 0.5 },
      { name: 'title', boost: 1 },
    ],
  });
});

test('parseBm25Fields: unknown fields, bad boosts, repeats and an empty list each have their problem', (t) => {
  t.regex(problemOf(parseBm25Fields('body', ',')), /"body" is not a field BM25 can search/);
  t.regex(problemOf(parseBm25Fields('title^', ',')), /a boost is a number above 0/);
  t.regex(problemOf(parseBm25Fields('title^0', ',')), /a boost is a number above 0/);
  t.regex(problemOf(parseBm25Fields('title^1001', ',')), /at most 1000/);
  t.regex(problemOf(parseBm25Fields('title^x', ',')), /a boost/);
  t.regex(problemOf(parseBm25Fields('text,text^2', ',')), /"text" is listed twice/);
  t.regex(problemOf(parseBm25Fields(' , ', ',')), /at least one field/);
});

test('tuningProblem: the k-NN side may not be deeper than the BM25 side; unset depths never conflict', (t) => {
  t.is(tuningProblem({ bm25Depth: 50, knnDepth: 50 }), null);
  t.is(tuningProblem({ bm25Depth: null, knnDepth: 500 }), null);
  t.is(tuningProblem({ bm25Depth: 20, knnDepth: null }), null);
  t.regex(
    tuningProblem({ bm25Depth: 20, knnDepth: 50 }) ?? '',
    /k-NN side's depth \(50\) exceeds the BM25 side's \(20\)/,
  );
});

test('formatBm25Fields and describeTuning: the labels of tables and logs', (t) => {
  t.is(
    formatBm25Fields([
      { name: 'text', boost: 1 },
      { name: 'title', boost: 2 },
    ]),
    'text,title^2',
  );
  t.is(describeTuning(DEFAULT_HYBRID_TUNING), 'rrf k=5 w=0.3:0.7 depth=req/req fields=text:title sentences=0.5');
  t.is(
    describeTuning({ ...DEFAULT_HYBRID_TUNING, fusion: 'l2', bm25Depth: 80, knnDepth: 40, sentenceWeight: 0 }),
    'l2 w=0.3:0.7 depth=80/40 fields=text:title sentences=0',
    'no rank constant outside rrf',
  );
});

test('the defaults parse back from their own labels', (t) => {
  t.deepEqual(parseBm25Fields(formatBm25Fields(DEFAULT_HYBRID_TUNING.bm25Fields), ','), {
    value: DEFAULT_HYBRID_TUNING.bm25Fields,
  });
  t.deepEqual(parseWeights(DEFAULT_HYBRID_TUNING.weights.join(','), ','), { value: DEFAULT_HYBRID_TUNING.weights });
  t.deepEqual(parseFusion(DEFAULT_HYBRID_TUNING.fusion), { value: 'rrf' });
});
