// Document metadata as chunks carry it and filters as query DSL (service/search/metadataFilter.ts), in both index
// layouts (service/search/metadataLayouts.ts): ISO dates as instants, types that never mix, the `<key>=<value>`
// keywords of template v2 with numbers that sort as numbers, and the v1 field-per-key layout.
import test from 'ava';
import {
  chunkMetadata,
  isoDateInstant,
  metadataFilterQuery,
  valuesByType,
} from '../../service/search/metadataFilter.ts';
import {
  KEY_VALUE_PAIRS,
  TYPED_FIELDS,
  metadataCopyScript,
  metadataForIndex,
  metadataLayoutOf,
  sortableNumber,
} from '../../service/search/metadataLayouts.ts';

test('isoDateInstant: calendar dates and date-times become UTC instants with milliseconds', (t) => {
  t.is(isoDateInstant('2024-05-01'), '2024-05-01T00:00:00.000Z');
  t.is(isoDateInstant('2024-05-01T10:30'), '2024-05-01T10:30:00.000Z', 'no offset: UTC, as OpenSearch reads it');
  t.is(isoDateInstant('2024-05-01T10:30:15.123456Z'), '2024-05-01T10:30:15.123Z');
  t.is(isoDateInstant('2024-05-01T00:30:00+02:00'), '2024-04-30T22:30:00.000Z');
  t.is(isoDateInstant('2024-05-01T23:30:00-01:00'), '2024-05-02T00:30:00.000Z');
});

test('isoDateInstant: impossible dates and times, other formats and out-of-range years are not dates', (t) => {
  for (const text of [
    '2023-02-29',
    '2024-02-30',
    '2024-13-01',
    '2024-00-10',
    '2024-05-01T24:00',
    '2024-05-01T10:60',
    '2024-05-01T10:00+24:00',
    '01/05/2024',
    '2024-5-1',
    '2024-05-01 ',
    'today',
  ]) {
    t.is(isoDateInstant(text), null, text);
  }
  t.is(isoDateInstant('2024-02-29'), '2024-02-29T00:00:00.000Z', 'a leap day is a date');
  t.is(isoDateInstant('0000-01-01T00:00+01:00'), null, 'an offset pushing year 0 before year 0');
});

test('chunkMetadata: each value under its type; ISO date strings also under date; keys listed', (t) => {
  t.deepEqual(
    chunkMetadata({ team: 'alpha', year: 2024, draft: false, published: '2024-05-01', tags: ['a', '2024-01-02'] }),
    {
      metadata: [
        { key: 'team', str: 'alpha' },
        { key: 'year', num: 2024 },
        { key: 'draft', bool: false },
        { key: 'published', str: '2024-05-01', date: '2024-05-01T00:00:00.000Z' },
        { key: 'tags', str: ['a', '2024-01-02'], date: ['2024-01-02T00:00:00.000Z'] },
      ],
      metadata_keys: ['team', 'year', 'draft', 'published', 'tags'],
    },
  );
});

test('chunkMetadata: no metadata and empty metadata carry nothing; an empty array still names its key', (t) => {
  t.deepEqual(chunkMetadata(undefined), {});
  t.deepEqual(chunkMetadata({}), {});
  t.deepEqual(chunkMetadata({ tags: [] }), { metadata: [{ key: 'tags', str: [] }], metadata_keys: ['tags'] });
});

test('valuesByType: a number, a boolean and a string of the same text stay apart', (t) => {
  t.deepEqual(
    [...valuesByType([5, '5', true, 'true', 6])],
    [
      ['num', [5, 6]],
      ['str', ['5', 'true']],
      ['bool', [true]],
    ],
  );
});

test("sortableNumber: 16 hex digits whose string order is the numbers' order, -0 as 0", (t) => {
  const numbers = [-Infinity, -1e300, -2.5, -1, -Number.MIN_VALUE, 0, Number.MIN_VALUE, 0.5, 1, 2, 10, 1e300, Infinity];
  const encoded = numbers.map(sortableNumber);
  t.true(encoded.every((text) => /^[0-9a-f]{16}$/.test(text)));
  t.deepEqual([...encoded].sort(), encoded);
  t.is(sortableNumber(-0), sortableNumber(0));
  t.is(sortableNumber(9) < sortableNumber(10), true, 'not string order of the decimals');
});

test('metadataLayoutOf: v1 indices use typed fields; v2 and later, and the alias itself, use key=value pairs', (t) => {
  t.is(metadataLayoutOf('kbqa-chunks-v1-bge-small-1234'), TYPED_FIELDS);
  t.is(metadataLayoutOf('kbqa-chunks-v2-bge-small-1234'), KEY_VALUE_PAIRS);
  t.is(metadataLayoutOf('kbqa-chunks-v13-bge-small-1234'), KEY_VALUE_PAIRS);
  t.is(metadataLayoutOf('kbqa-chunks'), KEY_VALUE_PAIRS);
});

test('metadataForIndex: v2 writes key=value keywords per type; v1 a field per key, dots encoded', (t) => {
  const entries = chunkMetadata({ 'team.name': 'alpha', year: 2024, draft: true }).metadata ?? [];
  t.deepEqual(metadataForIndex('kbqa-chunks-v2-x', entries), {
    str: ['team.name=alpha'],
    num: [`year=${sortableNumber(2024)}`],
    bool: ['draft=true'],
  });
  t.deepEqual(metadataForIndex('kbqa-chunks-v1-x', entries), {
    str: { 'team%2Ename': 'alpha' },
    num: { year: 2024 },
    bool: { draft: true },
  });
});

test('metadataCopyScript: a script between layouts, none within one', (t) => {
  t.is(metadataCopyScript('kbqa-chunks-v2-a', 'kbqa-chunks-v3-b'), null);
  const forward = metadataCopyScript('kbqa-chunks-v1-a', 'kbqa-chunks-v2-b');
  const back = metadataCopyScript('kbqa-chunks-v2-b', 'kbqa-chunks-v1-a');
  t.is(forward?.lang, 'painless');
  t.deepEqual(forward?.params.types, ['str', 'num', 'bool', 'date']);
  t.not(forward?.source, back?.source);
});

test('filter queries in the v2 layout: eq and in as terms on key=value keywords, grouped by type', (t) => {
  t.deepEqual(metadataFilterQuery({ op: 'eq', key: 'team', value: 'alpha' }, KEY_VALUE_PAIRS), {
    term: { 'metadata.str': 'team=alpha' },
  });
  t.deepEqual(metadataFilterQuery({ op: 'in', key: 'team', values: ['a', 'b', 5] }, KEY_VALUE_PAIRS), {
    bool: {
      should: [
        { terms: { 'metadata.str': ['team=a', 'team=b'] } },
        { term: { 'metadata.num': `team=${sortableNumber(5)}` } },
      ],
      minimum_should_match: 1,
    },
  });
});

test("filter queries in the v2 layout: a range stays within its key's keywords", (t) => {
  t.deepEqual(metadataFilterQuery({ op: 'gte', key: 'year', value: 2020 }, KEY_VALUE_PAIRS), {
    range: { 'metadata.num': { gte: `year=${sortableNumber(2020)}`, lt: 'year>' } },
  });
  t.deepEqual(
    metadataFilterQuery({ op: 'lt', key: 'published', value: { date: '2024-01-01T00:00:00.000Z' } }, KEY_VALUE_PAIRS),
    {
      range: { 'metadata.date': { gte: 'published=', lt: 'published=2024-01-01T00:00:00.000Z' } },
    },
  );
});

test('filter queries: ne and nin need the key; exists reads metadata_keys; empty in matches nothing', (t) => {
  const hasTeam = { term: { metadata_keys: 'team' } };
  t.deepEqual(metadataFilterQuery({ op: 'ne', key: 'team', value: 'a' }, KEY_VALUE_PAIRS), {
    bool: { filter: [hasTeam], must_not: [{ term: { 'metadata.str': 'team=a' } }] },
  });
  t.deepEqual(metadataFilterQuery({ op: 'nin', key: 'team', values: [] }, KEY_VALUE_PAIRS), hasTeam);
  t.deepEqual(metadataFilterQuery({ op: 'exists', key: 'team', value: false }, KEY_VALUE_PAIRS), {
    bool: { must_not: [hasTeam] },
  });
  t.deepEqual(metadataFilterQuery({ op: 'in', key: 'team', values: [] }, KEY_VALUE_PAIRS), {
    bool: { must_not: [{ match_all: {} }] },
  });
});

test('filter queries: and, or and not compose; an empty and matches everything', (t) => {
  const eq = { op: 'eq', key: 'k', value: true } as const;
  const term = { term: { 'metadata.bool': 'k=true' } };
  t.deepEqual(metadataFilterQuery({ op: 'and', filters: [] }, KEY_VALUE_PAIRS), { match_all: {} });
  t.deepEqual(metadataFilterQuery({ op: 'and', filters: [eq] }, KEY_VALUE_PAIRS), { bool: { filter: [term] } });
  t.deepEqual(metadataFilterQuery({ op: 'or', filters: [eq, eq] }, KEY_VALUE_PAIRS), {
    bool: { should: [term, term], minimum_should_match: 1 },
  });
  t.deepEqual(metadataFilterQuery({ op: 'not', filter: eq }, KEY_VALUE_PAIRS), { bool: { must_not: [term] } });
});

test('filter queries in the v1 layout: typed fields per key, dots encoded, ranges on the typed field', (t) => {
  t.deepEqual(metadataFilterQuery({ op: 'eq', key: 'team.name', value: 'alpha' }, TYPED_FIELDS), {
    term: { 'metadata.str.team%2Ename': 'alpha' },
  });
  t.deepEqual(metadataFilterQuery({ op: 'gt', key: 'year', value: 2020 }, TYPED_FIELDS), {
    range: { 'metadata.num.year': { gt: 2020 } },
  });
  t.deepEqual(
    metadataFilterQuery({ op: 'lte', key: 'at', value: { date: '2024-01-01T00:00:00.000Z' } }, TYPED_FIELDS),
    {
      range: { 'metadata.date.at': { lte: '2024-01-01T00:00:00.000Z' } },
    },
  );
});
