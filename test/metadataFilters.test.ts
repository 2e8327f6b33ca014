// Document metadata (POST / PUT /documents `metadata`) and metadata filters (/query and /search `filters`) against
// the running stack: every validation rule, the round trip, PUT keeping or replacing, the chunks in OpenSearch, a
// seeded randomised comparison with a reference evaluator written here (pre-filtering: the dense side returns
// exactly the matching chunks), and the filtered hybrid top-k against RRF of the filtered single sides.
import { randomUUID } from 'node:crypto';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { dropAliasFamily } from './helpers/aliasFamily.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { createKb } from './helpers/documentsApi.ts';
import { mulberry32, type Rng } from './helpers/random.ts';
import { CHUNKS_ALIAS } from '../service/search/assets.ts';
import { HYBRID_DEPTH } from '../service/commands/answerQuestion.ts';
import { documentMetadata } from '../service/http/routes/metadata.schema.ts';
import { parseInput } from '../service/http/validation.ts';

// An alias of its own: the chunks' metadata layout is the current template's, whatever the default alias holds.
const alias = `${CHUNKS_ALIAS}-mf${randomUUID().replaceAll('-', '').slice(0, 10)}`;
const test = testWithApp({ env: { KBQA_CHUNKS_ALIAS: alias } });
test.after.always(async () => {
  await dropAliasFamily(alias);
});

type Body = Record<string, any>;
type Metadata = Record<string, string | number | boolean | string[]>;

async function ingestWithMetadata(
  app: TestApp,
  key: string,
  kbId: string,
  filename: string,
  content: string,
  metadata?: unknown,
) {
  const response = await app.call('POST', '/api/v1/documents', {
    key,
    body: { kb_id: kbId, filename, content, ...(metadata === undefined ? {} : { metadata }) },
  });
  if (response.status !== 201)
    throw new Error(`ingest of ${filename} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.document as { id: string; chunks: number };
}

async function chunkSources(app: TestApp, documentId: string): Promise<Body[]> {
  await app.deps.search.refreshChunks();
  const response = await app.deps.search.request<{ hits: { hits: Array<{ _source: Body }> } }>(
    'POST',
    `/${alias}/_search`,
    {
      body: {
        size: 100,
        query: { term: { document_id: documentId } },
        _source: { excludes: ['embedding', 'embedding_b64'] },
      },
    },
  );
  return response.hits.hits.map((hit) => hit._source);
}

// ── Validation ──────────────────────────────────────────────────────────────────────────────────────────────────

const validMetadata: Metadata = {
  team: 'alpha',
  year: 2024,
  ratio: 0.25,
  draft: false,
  tags: ['a', 'b'],
  'release.version': '1.2',
  published: '2024-05-01',
  'a-b_c.9': 'x',
};

test('metadata: each rule is a 400 naming the key and the rule, on POST and on PUT', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  const doc = await ingestWithMetadata(app, user.key, kb, 'rules.md', 'A note about validation rules.', {
    team: 'alpha',
  });
  const tooBig = Object.fromEntries(Array.from({ length: 9 }, (_v, index) => [`k${index}`, 'z'.repeat(1000)]));
  const keys = (count: number) =>
    Object.fromEntries(Array.from({ length: count }, (_v, index) => [`k${index}`, index]));
  const cases: Array<[string, unknown, string]> = [
    ['an array', ['a'], 'metadata: must be a JSON object of key: value pairs'],
    ['a string', 'team=alpha', 'metadata: must be a JSON object of key: value pairs'],
    ['null', null, 'metadata: must be a JSON object of key: value pairs'],
    ['33 keys', keys(33), 'metadata: must have at most 32 keys (it has 33)'],
    ['a space in a key', { 'a b': 1 }, 'metadata.a b: keys must be 1–64 characters: letters, digits, _, . or -'],
    ['an empty key', { '': 1 }, 'metadata."": keys must be 1–64 characters: letters, digits, _, . or -'],
    [
      'a 65-character key',
      { ['k'.repeat(65)]: 1 },
      `metadata.${'k'.repeat(65)}: keys must be 1–64 characters: letters, digits, _, . or -`,
    ],
    ['a $ key', { $eq: 1 }, 'metadata.$eq: keys must be 1–64 characters: letters, digits, _, . or -'],
    ['a non-ASCII key', { équipe: 'a' }, 'metadata.équipe: keys must be 1–64 characters: letters, digits, _, . or -'],
    [
      'null value',
      { team: null },
      'metadata.team: must be a string, number, boolean or array of strings (metadata is flat: no nested objects, no null)',
    ],
    [
      'nested object',
      { team: { name: 'a' } },
      'metadata.team: must be a string, number, boolean or array of strings (metadata is flat: no nested objects, no null)',
    ],
    ['array of numbers', { ids: ['a', 2] }, 'metadata.ids: must be an array of strings (item 1 is number)'],
    ['array with null', { ids: [null] }, 'metadata.ids: must be an array of strings (item 0 is null)'],
    ['a 1025-byte string', { note: 'x'.repeat(1025) }, 'metadata.note: must be at most 1024 bytes (UTF-8)'],
    [
      'a 1026-byte string of 513 characters',
      { note: 'é'.repeat(513) },
      'metadata.note: must be at most 1024 bytes (UTF-8)',
    ],
    [
      '65 array items',
      { tags: Array.from({ length: 65 }, (_v, index) => `t${index}`) },
      'metadata.tags: must be an array of at most 64 strings',
    ],
    [
      'a 1025-byte array item',
      { tags: ['ok', 'y'.repeat(1025)] },
      'metadata.tags: item 1 must be at most 1024 bytes (UTF-8)',
    ],
    [
      'over 8 KiB in all',
      tooBig,
      `metadata: must be at most 8192 bytes as JSON (it is ${JSON.stringify(tooBig).length})`,
    ],
  ];
  for (const [name, metadata, message] of cases) {
    const posted = await app.call('POST', '/api/v1/documents', {
      key: user.key,
      body: { kb_id: kb, filename: 'bad.md', content: 'Some text.', metadata },
    });
    t.is(posted.status, 400, `POST ${name}: ${JSON.stringify(posted.body)}`);
    t.deepEqual(posted.body, { error: { code: 'bad_request', message } }, `POST ${name}`);
    const put = await app.call('PUT', `/api/v1/documents/${doc.id}`, {
      key: user.key,
      body: { content: 'Other text.', metadata },
    });
    t.is(put.status, 400, `PUT ${name}: ${JSON.stringify(put.body)}`);
    t.deepEqual(put.body, { error: { code: 'bad_request', message } }, `PUT ${name}`);
  }
  // A "__proto__" key: the body parser refuses it before validation does; the schema refuses it on its own too.
  const proto = await app.call('POST', '/api/v1/documents', {
    key: user.key,
    headers: { 'content-type': 'application/json' },
    rawBody: '{"kb_id":"x","filename":"p.md","content":"p","metadata":{"__proto__":1}}',
  });
  t.is(proto.status, 400);
  t.throws(() => parseInput(documentMetadata, JSON.parse('{"__proto__": 1}'), 'body'), {
    message: '__proto__: is reserved',
  });
  // The limits themselves are allowed.
  const atLimits = {
    ...keys(28),
    ['k'.repeat(64)]: 'x'.repeat(1024),
    tags: Array.from({ length: 64 }, (_v, index) => `t${index}`),
    note: 'é'.repeat(512),
    empty: [] as string[],
  };
  const accepted = await ingestWithMetadata(app, user.key, kb, 'limits.md', 'The limits are allowed.', atLimits);
  const read = await app.call('GET', `/api/v1/documents/${accepted.id}`, { key: user.key });
  t.deepEqual(read.body.document.metadata, atLimits);
});

test('metadata round trip: GET, the 202 of a queued ingestion, the status list; stored on every chunk as <key>=<value> keywords', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = await createKb(app, user.key, 'metadata round trip');
  // Several chunks: every one carries the metadata.
  const content = Array.from(
    { length: 40 },
    (_v, index) =>
      `Paragraph ${index} about the harbour ferry timetable, its fares and its crossings in winter weather.`,
  ).join('\n\n');
  const doc = await ingestWithMetadata(app, user.key, kb, 'round-trip.md', content, validMetadata);
  t.true(doc.chunks > 1, `several chunks (${doc.chunks})`);
  const read = await app.call('GET', `/api/v1/documents/${doc.id}`, { key: user.key });
  t.is(read.status, 200);
  t.deepEqual(read.body.document.metadata, validMetadata);
  t.deepEqual(Object.keys(read.body.document.metadata), Object.keys(validMetadata), 'keys keep their order');

  const queued = await app.call('POST', '/api/v1/documents', {
    key: user.key,
    headers: { Prefer: 'respond-async' },
    body: { kb_id: kb, filename: 'queued.md', content: 'A queued note.', metadata: { team: 'beta' } },
  });
  t.is(queued.status, 202);
  t.deepEqual(queued.body.document.metadata, { team: 'beta' });
  const listed = await app.call('GET', `/api/v1/knowledge-bases/${kb}/documents?include=status`, { key: user.key });
  const byId = new Map(listed.body.documents.map((item: Body) => [item.id, item]));
  t.deepEqual((byId.get(doc.id) as Body).metadata, validMetadata);
  t.deepEqual((byId.get(queued.body.document.id) as Body).metadata, { team: 'beta' });

  const none = await ingestWithMetadata(app, user.key, kb, 'none.md', 'No metadata here.');
  t.deepEqual((await app.call('GET', `/api/v1/documents/${none.id}`, { key: user.key })).body.document.metadata, {});
  t.deepEqual(
    await chunkSources(app, none.id).then((sources) =>
      sources.map((source) => [source.metadata, source.metadata_keys]),
    ),
    [[undefined, undefined]],
  );

  const sources = await chunkSources(app, doc.id);
  t.is(sources.length, doc.chunks);
  for (const source of sources) {
    t.deepEqual(source.metadata, {
      str: ['team=alpha', 'tags=a', 'tags=b', 'release.version=1.2', 'published=2024-05-01', 'a-b_c.9=x'],
      // 2024 and 0.25 as 16 hex digits that sort as the numbers do.
      num: ['year=c09fa00000000000', 'ratio=bfd0000000000000'],
      bool: ['draft=false'],
      date: ['published=2024-05-01T00:00:00.000Z'],
    });
    t.deepEqual(source.metadata_keys, Object.keys(validMetadata));
  }
  // The mapping search engineers read: `<key>=<value>` keywords, the same fields whatever the keys (none is a field).
  const mapping = await app.deps.search.request<Record<string, { mappings: Body }>>('GET', `/${alias}/_mapping`);
  const properties = Object.values(mapping)[0].mappings.properties.metadata.properties as Record<string, Body>;
  t.deepEqual(Object.fromEntries(Object.entries(properties).map(([name, field]) => [name, field.type])), {
    str: 'keyword',
    num: 'keyword',
    bool: 'keyword',
    date: 'keyword',
  });
});

test('PUT without metadata keeps it; with metadata replaces it ({} clears it); the new chunks carry it', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = await createKb(app, user.key, 'versions');
  const doc = await ingestWithMetadata(app, user.key, kb, 'versions.md', 'Version one of the note.', {
    team: 'alpha',
    year: 2023,
  });
  /** Replaces the text (201 once the new version is live), waits for the old version's chunks to be retired. */
  const replace = async (body: Body, word: string) => {
    // A replacement answers 201 once its version is live, but its job lingers while the old chunks retire
    // (KBQA_VERSION_RETIRE_DELAY_MS): a PUT right after is 409 for that moment (a known wart; see the README).
    let response = await app.call('PUT', `/api/v1/documents/${doc.id}`, { key: user.key, body });
    for (let tries = 0; response.status === 409 && tries < 100; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      response = await app.call('PUT', `/api/v1/documents/${doc.id}`, { key: user.key, body });
    }
    t.is(response.status, 201, JSON.stringify(response.body));
    const read = await app.call('GET', `/api/v1/documents/${doc.id}`, { key: user.key });
    await waitFor(async () => (await chunkSources(app, doc.id)).length === 1);
    const [source] = await chunkSources(app, doc.id);
    t.true(source.text.includes(word), source.text);
    return { metadata: read.body.document.metadata as Metadata, source };
  };
  const kept = await replace({ content: 'Version two of the note.' }, 'two');
  t.deepEqual(kept.metadata, { team: 'alpha', year: 2023 });
  t.deepEqual(kept.source.metadata, { str: ['team=alpha'], num: ['year=c09f9c0000000000'] });
  t.deepEqual(kept.source.metadata_keys, ['team', 'year']);

  const replaced = await replace(
    { content: 'Version three of the note.', metadata: { team: 'beta', 'due.date': '2025-01-31T12:00:00+01:00' } },
    'three',
  );
  t.deepEqual(replaced.metadata, { team: 'beta', 'due.date': '2025-01-31T12:00:00+01:00' });
  t.deepEqual(replaced.source.metadata, {
    str: ['team=beta', 'due.date=2025-01-31T12:00:00+01:00'],
    date: ['due.date=2025-01-31T11:00:00.000Z'],
  });

  const cleared = await replace({ content: 'Version four of the note.', metadata: {} }, 'four');
  t.deepEqual(cleared.metadata, {});
  t.is(cleared.source.metadata, undefined);
  t.is(cleared.source.metadata_keys, undefined);

  // A filter on the old metadata no longer finds the document; on the new one (none) $exists: false does.
  const found = async (filters: Body) => {
    const response = await app.call('POST', '/api/v1/search', {
      key: user.key,
      body: { query: 'note', knowledge_base_ids: [kb], filters, mode: 'dense' },
    });
    return (response.body.results as Body[]).map((chunk) => chunk.document_id);
  };
  t.deepEqual(await found({ team: 'beta' }), []);
  t.deepEqual(await found({ team: { $exists: false } }), [doc.id]);
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// ── Filter validation ───────────────────────────────────────────────────────────────────────────────────────────

test('malformed filters are 400 naming the part, on /query and /search', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const nested = (levels: number): Body => (levels === 0 ? { team: 'a' } : { $not: nested(levels - 1) });
  const manyConditions = { $and: Array.from({ length: 65 }, (_v, index) => ({ [`k${index}`]: index })) };
  const condition = (index: number) => ({ [`k${index}`]: index });
  const spreadConditions = {
    $or: [
      { $and: Array.from({ length: 32 }, (_v, index) => condition(index)) },
      { $and: Array.from({ length: 33 }, (_v, index) => condition(32 + index)) },
    ],
  };
  // Empty filters cost a clause each (a match_all): they cannot be used to escape the limits.
  const manyEmpty = { $or: [{ $or: Array.from({ length: 64 }, () => ({})) }, { $or: [{}] }] };
  const cases: Array<[unknown, string]> = [
    [[], 'filters: must be a JSON object (a filter)'],
    ['team', 'filters: must be a JSON object (a filter)'],
    [{ year: { $gt: 'soon' } }, 'filters.year.$gt: must be a number or an ISO date (2024-05-01, 2024-05-01T12:00:00Z)'],
    [{ year: { $gt: true } }, 'filters.year.$gt: must be a number or an ISO date (2024-05-01, 2024-05-01T12:00:00Z)'],
    [
      { day: { $lte: '2023-02-29' } },
      'filters.day.$lte: must be a number or an ISO date (2024-05-01, 2024-05-01T12:00:00Z)',
    ],
    [
      { day: { $lt: '2023-02-01T25:00Z' } },
      'filters.day.$lt: must be a number or an ISO date (2024-05-01, 2024-05-01T12:00:00Z)',
    ],
    [{ team: { $eq: ['a'] } }, 'filters.team.$eq: must be a string, number or boolean'],
    [{ team: { $ne: null } }, 'filters.team.$ne: must be a string, number or boolean'],
    [{ team: { $in: 'a' } }, 'filters.team.$in: must be an array of at most 100 strings, numbers or booleans'],
    [
      { team: { $nin: Array.from({ length: 101 }, (_v, index) => index) } },
      'filters.team.$nin: must be an array of at most 100 strings, numbers or booleans',
    ],
    [{ team: { $in: ['a', { b: 1 }] } }, 'filters.team.$in.1: must be a string, number or boolean'],
    [{ team: { $exists: 'yes' } }, 'filters.team.$exists: must be true or false'],
    [
      { team: { $regex: 'a.*' } },
      'filters.team.$regex: is not an operator: use one of $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists',
    ],
    [
      { team: { name: 'a' } },
      'filters.team.name: is not an operator: use one of $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists (metadata is flat: no nested keys)',
    ],
    [
      { team: {} },
      'filters.team: must name at least one operator ($eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists)',
    ],
    [
      { team: ['a', 'b'] },
      'filters.team: must be a string, number or boolean, or an object of operators (to match any of several values use { "$in": [ … ] })',
    ],
    [
      { team: null },
      'filters.team: must be a string, number or boolean, or an object of operators ($eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists)',
    ],
    [{ 'a b': 1 }, 'filters.a b: is not a metadata key (keys must be 1–64 characters: letters, digits, _, . or -)'],
    [
      { $eq: 1 },
      'filters.$eq: is not an operator here: use $and, $or, $not or a metadata key; put it under a metadata key: { "<key>": { "$eq": … } }',
    ],
    [{ $nor: [] }, 'filters.$nor: is not an operator here: use $and, $or, $not or a metadata key'],
    [{ $and: [] }, 'filters.$and: must be a non-empty array of at most 64 filters'],
    [{ $or: { team: 'a' } }, 'filters.$or: must be a non-empty array of at most 64 filters'],
    [{ $or: Array.from({ length: 65 }, () => ({})) }, 'filters.$or: must be a non-empty array of at most 64 filters'],
    [{ $or: [{ team: 'a' }, 'b'] }, 'filters.$or.1: must be a JSON object (a filter)'],
    [{ $not: [{ team: 'a' }] }, 'filters.$not: must be a JSON object (a filter)'],
    [
      { $and: [{ $or: [{ year: { $gte: 'x' } }] }] },
      'filters.$and.0.$or.0.year.$gte: must be a number or an ISO date (2024-05-01, 2024-05-01T12:00:00Z)',
    ],
    [nested(9), `filters${'.$not'.repeat(9)}: nests too deep: at most 8 levels of $and, $or and $not`],
    [manyConditions, 'filters.$and: must be a non-empty array of at most 64 filters'],
    [
      spreadConditions,
      'filters.$or.1.$and.32.k64: too many conditions: a filter holds at most 64 operator clauses in all',
    ],
    [manyEmpty, 'filters.$or.1.$or.0: too many conditions: a filter holds at most 64 operator clauses in all'],
  ];
  for (const [filters, message] of cases) {
    for (const path of ['/api/v1/query', '/api/v1/search']) {
      const response = await app.call('POST', path, { key: user.key, body: { query: 'anything', filters } });
      t.is(response.status, 400, `${path} ${JSON.stringify(filters)}: ${JSON.stringify(response.body)}`);
      t.deepEqual(response.body, { error: { code: 'bad_request', message } }, `${path} ${JSON.stringify(filters)}`);
    }
  }
  // JSON numbers past a double's range parse to ±Infinity, which no filter may carry (it would serialise as null).
  const overflowing: Array<[string, string]> = [
    ['{"price":{"$gt":1e400}}', 'filters.price.$gt: must be a finite number or an ISO date'],
    [
      '{"price":1e400}',
      'filters.price: must be a string, number or boolean, or an object of operators ($eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists)',
    ],
    ['{"price":{"$in":[-1e400]}}', 'filters.price.$in.0: must be a string, number or boolean'],
  ];
  for (const [filters, message] of overflowing) {
    const response = await app.call('POST', '/api/v1/search', {
      key: user.key,
      headers: { 'content-type': 'application/json' },
      rawBody: `{"query":"anything","filters":${filters}}`,
    });
    t.deepEqual([response.status, response.body], [400, { error: { code: 'bad_request', message } }], filters);
  }
  // At the limits: 8 levels, 64 conditions.
  for (const filters of [nested(8), { $and: manyConditions.$and.slice(0, 64) }]) {
    const response = await app.call('POST', '/api/v1/search', { key: user.key, body: { query: 'anything', filters } });
    t.is(response.status, 200, JSON.stringify(response.body));
  }
});

test("the largest filter with the longest question stays under OpenSearch's clause limit, in every mode", async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  await ingestWithMetadata(app, user.key, user.defaultKnowledgeBaseId, 'clauses.md', 'Clause counting note.', {
    k0: 'a',
  });
  // 64 conditions of the widest kind ($nin over three types: exists + must_not of three terms), nested.
  const condition = (index: number) => ({
    [`k${index}`]: { $nin: ['a', 1, true, ...Array.from({ length: 97 }, (_v, item) => `v${item}`)] },
  });
  const filters = {
    $or: [
      { $and: Array.from({ length: 32 }, (_v, index) => condition(index)) },
      { $not: { $and: Array.from({ length: 32 }, (_v, index) => condition(32 + index)) } },
    ],
  };
  // 4,000 characters of distinct words: the BM25 side at its cap of terms.
  const words: string[] = [];
  for (let index = 0; words.join(' ').length < 3990; index += 1) words.push(`w${index.toString(36)}`);
  const query = words.join(' ').slice(0, 4000);
  for (const mode of ['hybrid', 'bm25', 'dense']) {
    const response = await app.call('POST', '/api/v1/search', {
      key: user.key,
      body: { query, filters, mode, knowledge_base_ids: [user.defaultKnowledgeBaseId] },
    });
    t.is(response.status, 200, `${mode}: ${JSON.stringify(response.body)}`);
  }
  const asked = await app.call('POST', '/api/v1/query', {
    key: user.key,
    body: { query, filters, knowledge_base_ids: [user.defaultKnowledgeBaseId] },
  });
  t.is(asked.status, 200, JSON.stringify(asked.body));
});

// ── Randomised: a reference evaluator against OpenSearch ────────────────────────────────────────────────────────

const TEAMS = ['alpha', 'beta', 'gamma', 'delta'];
const TAGS = ['red', 'green', 'blue', 'x.y', '2021-06-01'];
const WORDS = [
  'harbour',
  'ferry',
  'timetable',
  'volcano',
  'crater',
  'beehive',
  'honey',
  'permit',
  'winter',
  'island',
  'fare',
  'pier',
  'summit',
  'lake',
  'roof',
];

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)];
const int = (rng: Rng, low: number, high: number) => low + Math.floor(rng() * (high - low + 1));

function randomDate(rng: Rng): string {
  const day = `${int(rng, 2019, 2025)}-${String(int(rng, 1, 12)).padStart(2, '0')}-${String(int(rng, 1, 28)).padStart(2, '0')}`;
  const form = int(rng, 0, 3);
  if (form === 0) return day;
  const time = `${String(int(rng, 0, 23)).padStart(2, '0')}:${String(int(rng, 0, 59)).padStart(2, '0')}`;
  if (form === 1) return `${day}T${time}:00Z`;
  if (form === 2) return `${day}T${time}${pick(rng, ['+02:00', '-05:30', 'Z'])}`;
  return `${day}T${time}:${String(int(rng, 0, 59)).padStart(2, '0')}.${int(rng, 0, 999)}`;
}

/** Values per key, mostly one type per key but not always: a key's type differs between documents. */
const GENERATORS: Record<string, (rng: Rng) => string | number | boolean | string[]> = {
  team: (rng) => (rng() < 0.85 ? pick(rng, TEAMS) : int(rng, 1, 3)),
  year: (rng) => (rng() < 0.8 ? int(rng, 2018, 2025) : String(int(rng, 2018, 2025))),
  score: (rng) => Math.round(rng() * 1000) / 100,
  draft: (rng) => (rng() < 0.85 ? rng() < 0.5 : 'true'),
  published: (rng) => randomDate(rng),
  tags: (rng) => Array.from({ length: int(rng, 0, 3) }, () => pick(rng, TAGS)),
  'region.code': (rng) => pick(rng, ['eu-1', 'us-2', 'ap-3']),
};
const KEYS = Object.keys(GENERATORS);

function randomMetadata(rng: Rng): Metadata {
  const metadata: Metadata = {};
  for (const key of KEYS) if (rng() < 0.65) metadata[key] = GENERATORS[key](rng);
  return metadata;
}

function randomScalar(rng: Rng): string | number | boolean {
  const key = pick(rng, KEYS);
  const value = GENERATORS[key](rng);
  if (Array.isArray(value)) return value[0] ?? pick(rng, TAGS);
  return value;
}

function randomComparable(rng: Rng, key: string): number | string {
  if (key === 'published' || (key === 'tags' && rng() < 0.5)) return randomDate(rng);
  if (key === 'score') return Math.round(rng() * 1000) / 100;
  return int(rng, 2017, 2026);
}

function randomCondition(rng: Rng, key: string): Body | string | number | boolean {
  const sameKey = () => {
    const value = GENERATORS[key]?.(rng) ?? randomScalar(rng);
    return Array.isArray(value) ? (value[0] ?? pick(rng, TAGS)) : value;
  };
  const operand = () => (rng() < 0.8 ? sameKey() : randomScalar(rng));
  switch (int(rng, 0, 10)) {
    case 0:
      return operand();
    case 1:
      return { $eq: operand() };
    case 2:
      return { $ne: operand() };
    case 3:
      return { $in: Array.from({ length: int(rng, 0, 4) }, operand) };
    case 4:
      return { $nin: Array.from({ length: int(rng, 0, 4) }, operand) };
    case 5:
      return { $gt: randomComparable(rng, key) };
    case 6:
      return { $gte: randomComparable(rng, key), $lte: randomComparable(rng, key) };
    case 7:
      return { $lt: randomComparable(rng, key) };
    case 8:
      return { $exists: rng() < 0.5 };
    case 9:
      return { $gte: randomComparable(rng, key) };
    default:
      return { $lte: randomComparable(rng, key) };
  }
}

function randomFilter(rng: Rng, depth = 0): Body {
  const roll = rng();
  if (depth < 3 && roll < 0.15)
    return { $and: Array.from({ length: int(rng, 1, 3) }, () => randomFilter(rng, depth + 1)) };
  if (depth < 3 && roll < 0.3)
    return { $or: Array.from({ length: int(rng, 1, 3) }, () => randomFilter(rng, depth + 1)) };
  if (depth < 3 && roll < 0.4) return { $not: randomFilter(rng, depth + 1) };
  const filter: Body = {};
  for (let count = int(rng, 1, 2); count > 0; count -= 1) {
    const key = rng() < 0.05 ? 'never.given' : pick(rng, KEYS);
    filter[key] = randomCondition(rng, key);
  }
  return filter;
}

/** A date the reference evaluator understands: the ISO forms the generator writes; no offset is UTC. */
function referenceInstant(value: unknown): number | null {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}(?:T[\d:.]+(?:Z|[+-]\d{2}:\d{2})?)?$/.test(value)) return null;
  const withZone = value.length === 10 || /(?:Z|[+-]\d{2}:\d{2})$/.test(value) ? value : `${value}Z`;
  const time = Date.parse(withZone);
  return Number.isNaN(time) ? null : time;
}

/** The documented semantics, written independently of the service. */
function matches(metadata: Metadata, filter: Body): boolean {
  return Object.entries(filter).every(([key, condition]) => {
    if (key === '$and') return (condition as Body[]).every((part) => matches(metadata, part));
    if (key === '$or') return (condition as Body[]).some((part) => matches(metadata, part));
    if (key === '$not') return !matches(metadata, condition as Body);
    const value = metadata[key];
    const has = Object.hasOwn(metadata, key);
    const items: unknown[] = value === undefined ? [] : Array.isArray(value) ? value : [value];
    const equals = (expected: unknown) => items.some((item) => item === expected);
    const compare = (operand: number | string, test: (a: number, b: number) => boolean) => {
      if (typeof operand === 'number') return items.some((item) => typeof item === 'number' && test(item, operand));
      const bound = referenceInstant(operand)!;
      return items.some((item) => {
        const instant = referenceInstant(item);
        return instant !== null && test(instant, bound);
      });
    };
    const operators: Body = typeof condition === 'object' && condition !== null ? condition : { $eq: condition };
    return Object.entries(operators).every(([operator, operand]) => {
      switch (operator) {
        case '$eq':
          return equals(operand);
        case '$ne':
          return has && !equals(operand);
        case '$in':
          return (operand as unknown[]).some(equals);
        case '$nin':
          return has && !(operand as unknown[]).some(equals);
        case '$gt':
          return compare(operand, (a, b) => a > b);
        case '$gte':
          return compare(operand, (a, b) => a >= b);
        case '$lt':
          return compare(operand, (a, b) => a < b);
        case '$lte':
          return compare(operand, (a, b) => a <= b);
        case '$exists':
          return has === operand;
        default:
          throw new Error(`unknown operator ${operator}`);
      }
    });
  });
}

interface Corpus {
  user: TestUser;
  kb: string;
  metadataByDocument: Map<string, Metadata>;
}

async function randomCorpus(app: TestApp, rng: Rng, documents: number): Promise<Corpus> {
  const user = await makeUser(app.deps.store);
  const kb = await createKb(app, user.key, 'random metadata');
  const metadataByDocument = new Map<string, Metadata>();
  const specs = Array.from({ length: documents }, (_v, index) => ({
    filename: `doc-${index}.md`,
    content: `Note ${index}: ${Array.from({ length: int(rng, 6, 14) }, () => pick(rng, WORDS)).join(' ')}.`,
    metadata: randomMetadata(rng),
  }));
  for (let start = 0; start < specs.length; start += 8) {
    await Promise.all(
      specs.slice(start, start + 8).map(async (spec) => {
        const doc = await ingestWithMetadata(app, user.key, kb, spec.filename, spec.content, spec.metadata);
        if (doc.chunks !== 1) throw new Error(`${spec.filename}: expected one chunk, got ${doc.chunks}`);
        metadataByDocument.set(doc.id, spec.metadata);
      }),
    );
  }
  return { user, kb, metadataByDocument };
}

test('randomised: no returned chunk fails its filter; dense and hybrid return exactly the matching chunks', async (t) => {
  t.timeout(600_000);
  const { app } = t.context;
  const seed = Number(process.env.KBQA_TEST_SEED ?? Date.now() % 2 ** 31);
  t.log(`seed ${seed} (rerun with KBQA_TEST_SEED=${seed})`);
  const rng = mulberry32(seed);
  const corpus = await randomCorpus(app, rng, 40);
  const filters = 300;
  let nonEmpty = 0;
  let partial = 0;
  for (let index = 0; index < filters; index += 1) {
    const filter = randomFilter(rng);
    const expected = [...corpus.metadataByDocument]
      .filter(([, metadata]) => matches(metadata, filter))
      .map(([id]) => id)
      .sort();
    if (expected.length > 0) nonEmpty += 1;
    if (expected.length > 0 && expected.length < corpus.metadataByDocument.size) partial += 1;
    const query = Array.from({ length: int(rng, 1, 4) }, () => pick(rng, WORDS)).join(' ');
    const where = `seed ${seed}, filter #${index} ${JSON.stringify(filter)}, query "${query}"`;
    for (const mode of ['dense', 'hybrid', 'bm25'] as const) {
      const response = await app.call('POST', '/api/v1/search', {
        key: corpus.user.key,
        body: { query, knowledge_base_ids: [corpus.kb], filters: filter, mode, max_results: 100 },
      });
      if (response.status !== 200) {
        t.fail(`${mode} ${response.status} ${JSON.stringify(response.body)}; ${where}`);
        return;
      }
      const returned = (response.body.results as Body[]).map((chunk) => chunk.document_id as string);
      const failing = returned.filter((id) => !expected.includes(id));
      if (failing.length > 0) {
        t.fail(
          `${mode} returned chunks failing the filter: ${failing.map((id) => JSON.stringify(corpus.metadataByDocument.get(id))).join(' ')}; ${where}`,
        );
        return;
      }
      // The k-NN side (dense, and hybrid's vector side) searches the filtered chunks: every match comes back.
      if (mode !== 'bm25' && returned.slice().sort().join() !== expected.join()) {
        t.fail(
          `${mode} returned ${returned.length} chunks, ${expected.length} match: missing ${expected.filter((id) => !returned.includes(id)).join(', ')}; ${where}`,
        );
        return;
      }
    }
    if (index % 3 === 0) {
      const asked = await app.call('POST', '/api/v1/query', {
        key: corpus.user.key,
        body: { query, knowledge_base_ids: [corpus.kb], filters: filter, include_chunks: true, max_results: 50 },
      });
      t.is(asked.status, 200, `${JSON.stringify(asked.body)}; ${where}`);
      const failing = (asked.body.chunks as Body[]).filter((chunk) => !expected.includes(chunk.document_id));
      if (failing.length > 0) {
        t.fail(`/query returned chunks failing the filter; ${where}`);
        return;
      }
      for (const citation of asked.body.citations as Body[])
        t.true(expected.includes(citation.document_id), `a citation fails the filter; ${where}`);
    }
  }
  t.log(`${filters} filters: ${nonEmpty} match some chunks, ${partial} some but not all`);
  t.true(partial > filters / 4, `the generator makes selective filters (${partial} of ${filters}); seed ${seed}`);
});

test('a filter on a key no document has matches nothing; $exists: false and $not of it match everything', async (t) => {
  const { app } = t.context;
  const rng = mulberry32(7);
  const corpus = await randomCorpus(app, rng, 6);
  const all = [...corpus.metadataByDocument.keys()].sort();
  const search = async (filters: Body) => {
    const response = await app.call('POST', '/api/v1/search', {
      key: corpus.user.key,
      body: { query: 'harbour ferry', knowledge_base_ids: [corpus.kb], filters, mode: 'dense', max_results: 100 },
    });
    t.is(response.status, 200, JSON.stringify(response.body));
    return (response.body.results as Body[]).map((chunk) => chunk.document_id as string).sort();
  };
  for (const filters of [
    { unknown_key: 'x' },
    { unknown_key: { $ne: 'x' } },
    { unknown_key: { $nin: [] } },
    { unknown_key: { $gt: 0 } },
    { unknown_key: { $exists: true } },
  ]) {
    t.deepEqual(await search(filters), [], JSON.stringify(filters));
  }
  for (const filters of [{ unknown_key: { $exists: false } }, { $not: { unknown_key: 'x' } }, {}]) {
    t.deepEqual(await search(filters), all, JSON.stringify(filters));
  }
});

test('types never mix: 5 is not "5", true is not "true"; arrays match by any item; dates compare as instants', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = await createKb(app, user.key, 'types');
  const ids: Record<string, string> = {};
  const docs: Record<string, Metadata> = {
    number: { v: 5, flag: true, when: '2024-03-01T10:00:00+02:00' },
    string: { v: '5', flag: 'true', when: 'yesterday' },
    array: { v: ['5', 'six'], tags: ['2024-03-01T08:30:00Z', 'x'] },
    none: {},
  };
  for (const [name, metadata] of Object.entries(docs))
    ids[(await ingestWithMetadata(app, user.key, kb, `${name}.md`, `The ${name} note.`, metadata)).id] = name;
  const search = async (filters: Body) => {
    const response = await app.call('POST', '/api/v1/search', {
      key: user.key,
      body: { query: 'note', knowledge_base_ids: [kb], filters, mode: 'dense' },
    });
    t.is(response.status, 200, JSON.stringify(response.body));
    return (response.body.results as Body[]).map((chunk) => ids[chunk.document_id]).sort();
  };
  t.deepEqual(await search({ v: 5 }), ['number']);
  t.deepEqual(await search({ v: '5' }), ['array', 'string']);
  t.deepEqual(await search({ v: { $ne: 5 } }), ['array', 'string'], '$ne requires the key');
  t.deepEqual(await search({ v: { $ne: 'six' } }), ['number', 'string'], 'an array with the value is not $ne it');
  t.deepEqual(await search({ v: { $nin: ['5'] } }), ['number']);
  t.deepEqual(await search({ v: { $in: [5, 'six'] } }), ['array', 'number']);
  t.deepEqual(await search({ flag: true }), ['number']);
  t.deepEqual(await search({ flag: 'true' }), ['string']);
  t.deepEqual(await search({ v: { $gte: 5 } }), ['number'], 'a string is never in a numeric range');
  t.deepEqual(
    await search({ when: { $gt: '2024-03-01T07:59:59Z', $lt: '2024-03-01T08:00:01Z' } }),
    ['number'],
    '10:00+02:00 is 08:00Z',
  );
  t.deepEqual(await search({ tags: { $gte: '2024-03-01', $lt: '2024-03-02' } }), ['array'], 'an array item in range');
  t.deepEqual(await search({ when: '2024-03-01T10:00:00+02:00' }), ['number'], '$eq compares the string as given');
  t.deepEqual(
    await search({ when: '2024-03-01T08:00:00Z' }),
    [],
    'the same instant spelled otherwise is another string',
  );
  t.deepEqual(await search({ $or: [{ v: { $exists: false } }, { v: 'six' }] }), ['array', 'none']);
});

// ── Top-k: pre-filtering on both sides before fusion ────────────────────────────────────────────────────────────

test('filtered hybrid top-k equals RRF of the filtered BM25 and k-NN results, and comes back full', async (t) => {
  t.timeout(300_000);
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = await createKb(app, user.key, 'top-k');
  const rng = mulberry32(12);
  // 48 documents about the ferry, 12 of them (a minority) in group "rare" and written vaguer: unfiltered, the
  // top results are all "common", so a post-filter would leave the page short.
  const documents: Array<{ group: string; content: string }> = [];
  for (let index = 0; index < 48; index += 1) {
    const rare = index % 4 === 0;
    const words = Array.from({ length: 10 }, () => pick(rng, WORDS)).join(' ');
    documents.push({
      group: rare ? 'rare' : 'common',
      content: rare
        ? `Note ${index} on ${words}; a crossing by boat now and then.`
        : `The harbour ferry timetable ${index}: the ferry leaves the pier at ${7 + (index % 12)}:15, ferry fares and ferry timetable for ${words}.`,
    });
  }
  const ids = new Map<string, string>();
  for (let start = 0; start < documents.length; start += 8) {
    await Promise.all(
      documents.slice(start, start + 8).map(async (spec, offset) => {
        const doc = await ingestWithMetadata(app, user.key, kb, `ferry-${start + offset}.md`, spec.content, {
          group: spec.group,
          rank: start + offset,
        });
        ids.set(doc.id, spec.group);
      }),
    );
  }
  const question = 'When does the harbour ferry leave the pier and what does the ferry timetable say?';
  const k = 5;
  const filters = { group: 'rare' };
  const search = async (body: Body) => {
    const response = await app.call('POST', '/api/v1/search', {
      key: user.key,
      body: { query: question, knowledge_base_ids: [kb], ...body },
    });
    t.is(response.status, 200, JSON.stringify(response.body));
    return response.body.results as Body[];
  };

  const unfiltered = await search({ max_results: k });
  t.is(
    unfiltered.filter((chunk) => ids.get(chunk.document_id) === 'rare').length,
    0,
    'unfiltered, the top k hold no rare chunk: a post-filter would return nothing',
  );

  const hybrid = await search({ max_results: k, filters });
  t.is(hybrid.length, k, 'a full page: 12 chunks match, k of them come back');
  t.true(hybrid.every((chunk) => ids.get(chunk.document_id) === 'rare'));

  // The single sides, filtered, as deep as the hybrid query's sides look (pagination_depth and k: HYBRID_DEPTH).
  const { search: index, rag, config } = app.deps;
  const vector = await rag.embedQuestion(question);
  const request = {
    text: question,
    vector,
    knowledgeBaseIds: [kb],
    hidden: [],
    filters: { op: 'eq' as const, key: 'group', value: 'rare' },
    size: HYBRID_DEPTH,
    depth: HYBRID_DEPTH,
  };
  const lexical = await index.lexicalSearch(request);
  const dense = await index.vectorSearch(request);
  t.is(dense.length, 12, 'the k-NN side finds every matching chunk');
  t.true(lexical.length >= 1);
  const [bm25Weight, knnWeight] = config.opensearch.rrfWeights;
  const constant = config.opensearch.rrfRankConstant;
  const fused = new Map<string, number>();
  lexical.forEach((chunk, position) =>
    fused.set(chunk.chunk_id, (fused.get(chunk.chunk_id) ?? 0) + bm25Weight / (constant + position + 1)),
  );
  dense.forEach((chunk, position) =>
    fused.set(chunk.chunk_id, (fused.get(chunk.chunk_id) ?? 0) + knnWeight / (constant + position + 1)),
  );
  const expected = [...fused].sort((a, b) => b[1] - a[1]).slice(0, k);
  // Scores equal position by position (OpenSearch scores are float32: within 1e-7); where two expected scores
  // tie, either order is RRF.
  const close = (a: number, b: number) => Math.abs(a - b) < 1e-7;
  const where = `hybrid ${JSON.stringify(hybrid.map((chunk) => [chunk.id, chunk.score]))} vs RRF ${JSON.stringify(expected)}`;
  t.true(
    hybrid.every((chunk, position) => close(chunk.score, expected[position][1])),
    where,
  );
  for (const chunk of hybrid)
    t.true(close(fused.get(chunk.id) ?? -1, chunk.score), `${chunk.id} is scored as RRF scores it; ${where}`);
  const cutoff = expected[k - 1][1];
  for (const [id, score] of expected)
    if (score > cutoff + 1e-6)
      t.true(
        hybrid.some((chunk) => chunk.id === id),
        `${id} (above the k-th score) is in the hybrid top k`,
      );
  // And each side's rank, as the hybrid query reports it, is that side's rank on its own.
  for (const chunk of hybrid) {
    const bm25Rank = lexical.findIndex((side) => side.chunk_id === chunk.id);
    const vectorRank = dense.findIndex((side) => side.chunk_id === chunk.id);
    t.is(chunk.bm25_rank, bm25Rank === -1 ? null : bm25Rank + 1);
    t.is(chunk.vector_rank, vectorRank === -1 ? null : vectorRank + 1);
  }

  // The same through /query: its chunks are the filtered hybrid page.
  const asked = await app.call('POST', '/api/v1/query', {
    key: user.key,
    body: { query: question, knowledge_base_ids: [kb], filters, include_chunks: true, max_results: k },
  });
  t.is(asked.status, 200);
  t.deepEqual(
    (asked.body.chunks as Body[]).map((chunk) => chunk.id),
    hybrid.map((chunk) => chunk.id),
  );
});
