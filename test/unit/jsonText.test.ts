// The checks on a JSON body's text before JSON.parse (service/http/jsonText.ts): the nesting depth, counted outside
// strings in one pass that stops at the limit, and own "__proto__" keys anywhere in the parsed value.
import test from 'ava';
import { hasProtoKey, jsonNestingDepth } from '../../service/http/jsonText.ts';

test('jsonNestingDepth: scalars are depth 0, each object or array level adds one', (t) => {
  t.is(jsonNestingDepth('42', 10), 0);
  t.is(jsonNestingDepth('"text"', 10), 0);
  t.is(jsonNestingDepth('{}', 10), 1);
  t.is(jsonNestingDepth('{"a":[1,{"b":[]}]}', 10), 4);
});

test('jsonNestingDepth: the deepest branch counts, not the sum of siblings', (t) => {
  t.is(jsonNestingDepth('[[1],[2],[3],[4],[5]]', 10), 2);
  t.is(jsonNestingDepth('{"a":{"b":{}},"c":[[[[]]]]}', 10), 5);
});

test('jsonNestingDepth: brackets inside strings, escaped quotes included, do not count', (t) => {
  t.is(jsonNestingDepth('{"a":"[[[[{{{{"}', 2), 1);
  t.is(jsonNestingDepth('{"a":"\\"[[[["}', 2), 1, 'an escaped quote does not end the string');
  t.is(jsonNestingDepth('{"a":"\\"[[[","b":"\\\\"}', 2), 1, 'nor does one in a later string');
  t.is(
    jsonNestingDepth('{"a":"\\\\","b":[[]]}', 10),
    3,
    'an escaped backslash before the closing quote ends the string',
  );
});

test('jsonNestingDepth: stops at maxDepth + 1 however deep the text goes', (t) => {
  const deep = '['.repeat(1_000_000);
  t.is(jsonNestingDepth(deep, 32), 33);
  t.is(jsonNestingDepth('[[[]]]', 3), 3, 'exactly the limit is within it');
  t.is(jsonNestingDepth('[[[[]]]]', 3), 4);
});

test('hasProtoKey: an own "__proto__" key at any depth, in objects and arrays', (t) => {
  t.true(hasProtoKey(JSON.parse('{"__proto__":{"admin":true}}')));
  t.true(hasProtoKey(JSON.parse('{"a":[{"b":{"__proto__":1}}]}')));
  t.true(hasProtoKey(JSON.parse('[[{"__proto__":null}]]')));
});

test('hasProtoKey: ordinary values, the word as a value, and "constructor" keys pass', (t) => {
  t.false(hasProtoKey(JSON.parse('{"a":"__proto__","b":["__proto__"]}')));
  t.false(hasProtoKey(JSON.parse('{"constructor":{"prototype":{}}}')));
  t.false(hasProtoKey(null));
  t.false(hasProtoKey(5));
  t.false(hasProtoKey({ a: { b: [1, 2, { c: 'd' }] } }));
});
