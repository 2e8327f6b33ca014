// The comparison behind drift reports (service/search/drift.ts flatten and differences): JSON values as path → leaf
// text, so a cluster's string "1" equals a file's 1, and differences in words, each path once.
import test from 'ava';
import { differences, flatten } from '../../service/search/drift.ts';

test('flatten: nested objects and arrays as dotted and indexed paths, leaves as text', (t) => {
  t.deepEqual(
    [...flatten({ index: { shards: 1, analysis: { filter: ['lowercase', 'stop'] }, enabled: true } })],
    [
      ['index.shards', '1'],
      ['index.analysis.filter[0]', 'lowercase'],
      ['index.analysis.filter[1]', 'stop'],
      ['index.enabled', 'true'],
    ],
  );
});

test('flatten: empty arrays and empty objects keep their path; undefined leaves are dropped; null is text', (t) => {
  t.deepEqual(
    [...flatten({ a: [], b: {}, c: undefined, d: null })],
    [
      ['a', '[]'],
      ['b', '{}'],
      ['d', 'null'],
    ],
  );
  t.deepEqual([...flatten({})], [], 'the empty root has no path');
});

test('flatten: what OpenSearch returns as strings equals what the files say as numbers and booleans', (t) => {
  t.deepEqual(flatten({ number_of_shards: '1', hidden: 'false' }), flatten({ number_of_shards: 1, hidden: false }));
});

test('differences: none for equal values, in any key order', (t) => {
  t.deepEqual(differences(flatten({ a: 1, b: { c: 'x' } }), flatten({ b: { c: 'x' }, a: '1' })), []);
});

test('differences: a changed value, a path missing in the cluster, and one only in the cluster, each in words', (t) => {
  const found = differences(flatten({ a: 1, b: 2 }), flatten({ a: 3, c: 4 }));
  t.deepEqual(found, [
    'a: cluster 3, file 1',
    'b: missing in the cluster (file: 2)',
    'c: 4 in the cluster, not in the file',
  ]);
});

test('differences: ignored paths are left out on both sides', (t) => {
  const ignore = (path: string) => path.startsWith('_meta');
  t.deepEqual(
    differences(flatten({ _meta: { v: 1 }, a: 1 }), flatten({ _meta: { v: 2 }, a: 1, _meta_extra: 'x' }), ignore),
    [],
  );
});

test('differences: an array that grew or shrank shows the items that differ', (t) => {
  t.deepEqual(differences(flatten({ f: ['a', 'b'] }), flatten({ f: ['a'] })), [
    'f[1]: missing in the cluster (file: b)',
  ]);
  t.deepEqual(differences(flatten({ f: [] }), flatten({ f: ['a'] })), [
    'f: missing in the cluster (file: [])',
    'f[0]: a in the cluster, not in the file',
  ]);
});
