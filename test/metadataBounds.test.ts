// Issue 22 items 5 and 10a, against the running stack: metadata never becomes fields of the shared chunk index's
// mapping (whatever keys tenants give, its field count stays the same, and filters on those keys match exactly), and
// a filter's values are bounded (a value no stored value can equal is a 400 naming the part and the limit).
//
// Scope: an alias of its own (KBQA_CHUNKS_ALIAS), so the index is a fresh install of the current template whatever
// the default alias already holds.
import { randomUUID } from 'node:crypto';
import { CHUNKS_ALIAS, loadSearchAssets } from '../service/search/assets.ts';
import { makeUser } from './factories/accounts.ts';
import { dropAliasFamily } from './helpers/aliasFamily.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { createKb } from './helpers/documentsApi.ts';

type Body = Record<string, any>;

const test = testWithApp<{ alias: string }>({
  env: (t) => {
    t.context.alias = `${CHUNKS_ALIAS}-mb${randomUUID().replaceAll('-', '').slice(0, 10)}`;
    return { KBQA_CHUNKS_ALIAS: t.context.alias };
  },
});

test.after.always(async (t) => {
  if (t.context.alias) await dropAliasFamily(t.context.alias);
});

/** Every field of a mapping: each property (an object too) and each multi-field, by its dotted path. */
function mappingFields(properties: Record<string, Body>, prefix = ''): string[] {
  return Object.entries(properties).flatMap(([name, field]) => [
    `${prefix}${name}`,
    ...mappingFields(field.properties ?? {}, `${prefix}${name}.`),
    ...mappingFields(field.fields ?? {}, `${prefix}${name}.`),
  ]);
}

async function indexFields(app: TestApp): Promise<string[]> {
  const index = app.deps.search.indexName;
  const mapping = await app.deps.search.request<Record<string, { mappings: { properties: Record<string, Body> } }>>(
    'GET',
    `/${index}/_mapping`,
  );
  return mappingFields(mapping[index].mappings.properties).sort();
}

async function ingest(app: TestApp, key: string, kbId: string, filename: string, metadata: Body): Promise<string> {
  const response = await app.call('POST', '/api/v1/documents', {
    key,
    body: { kb_id: kbId, filename, content: `The ${filename} note about harbour ferries.`, metadata },
  });
  if (response.status !== 201)
    throw new Error(`ingest of ${filename}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.document.id as string;
}

test.serial('a fresh install is the current template version', async (t) => {
  const { app } = t.context;
  const { version } = loadSearchAssets();
  t.true(app.deps.search.indexName.startsWith(`kbqa-chunks-v${version}-`), app.deps.search.indexName);
  t.is((await app.deps.search.indices.meta(app.deps.search.indexName))?.template_version, version);
});

test.serial(
  "documents with many distinct metadata keys leave the mapping's field count as it was; filters on them match exactly",
  async (t) => {
    const { app } = t.context;
    const user = await makeUser(app.deps.store);
    const kb = await createKb(app, user.key, 'field budget');
    const before = await indexFields(app);
    // Three documents of 32 keys each that no one used before (ISO dates, numbers, strings, booleans, string arrays):
    // stored as fields, each would add one field per key and type (two for a date).
    const run = randomUUID().replaceAll('-', '').slice(0, 8);
    const key = (kind: string, index: number) => `${kind}_${run}_${index}`;
    const metadataOf = (document: number): Body =>
      Object.fromEntries(
        Array.from({ length: 32 }, (_v, index) => {
          const value = [
            `2024-0${1 + (index % 9)}-1${document}T08:00:00Z`,
            index * 10 + document,
            `text-${document}`,
            document % 2 === 0,
            [`tag-${document}`, 'shared'],
          ][index % 5];
          return [key(['date', 'num', 'str', 'bool', 'tags'][index % 5], index), value];
        }),
      );
    const ids: string[] = [];
    for (let document = 0; document < 3; document += 1)
      ids.push(await ingest(app, user.key, kb, `keys-${document}.md`, metadataOf(document)));
    const after = await indexFields(app);
    t.deepEqual(
      after,
      before,
      `fields added: ${after
        .filter((field) => !before.includes(field))
        .slice(0, 5)
        .join(', ')}`,
    );

    const found = async (filters: Body) => {
      const response = await app.call('POST', '/api/v1/search', {
        key: user.key,
        body: { query: 'harbour ferries', knowledge_base_ids: [kb], filters, mode: 'dense', max_results: 50 },
      });
      t.is(response.status, 200, JSON.stringify(response.body));
      return (response.body.results as Body[]).map((chunk) => ids.indexOf(chunk.document_id)).sort();
    };
    t.deepEqual(await found({ [key('str', 2)]: 'text-1' }), [1]);
    t.deepEqual(await found({ [key('num', 1)]: { $gte: 11 } }), [1, 2], 'a numeric range');
    t.deepEqual(await found({ [key('num', 1)]: 11 }), [1]);
    t.deepEqual(await found({ [key('num', 1)]: '11' }), [], 'a number is not its string');
    t.deepEqual(
      await found({ [key('date', 0)]: { $gt: '2024-01-10T09:00:00+02:00', $lt: '2024-01-12' } }),
      [0, 1],
      'a date range, as instants (09:00+02:00 is 07:00Z)',
    );
    t.deepEqual(await found({ [key('date', 0)]: '2024-01-10T08:00:00Z' }), [0], 'a date equals its string as given');
    t.deepEqual(await found({ [key('bool', 3)]: true }), [0, 2]);
    t.deepEqual(await found({ [key('tags', 4)]: 'shared' }), [0, 1, 2], 'an array matches by any item');
    t.deepEqual(await found({ [key('tags', 4)]: { $nin: ['tag-1'] } }), [0, 2]);
    t.deepEqual(await found({ [key('str', 2)]: { $ne: 'text-0' } }), [1, 2]);
    t.deepEqual(await found({ [key('str', 2)]: { $exists: true }, [key('bool', 3)]: { $ne: true } }), [1]);
    t.deepEqual(await found({ $or: [{ [key('num', 6)]: { $lt: 61 } }, { [key('str', 7)]: 'text-2' }] }), [0, 2]);
    t.deepEqual(await found({ $not: { [key('num', 1)]: { $gt: 10 } } }), [0]);
    // A value one key holds is not another key's: key and value stay paired.
    t.deepEqual(await found({ [key('num', 6)]: 11 }), []);
  },
);

test.serial(
  "filter values are bounded: one value at most 1 KiB, all of a filter's at most 32 KiB, a 400 naming the part",
  async (t) => {
    const { app } = t.context;
    const user = await makeUser(app.deps.store);
    const values = (count: number, bytes: number) => ({
      $or: Array.from({ length: count }, (_v, index) => ({ [`k${index}`]: 'v'.repeat(bytes) })),
    });
    const cases: Array<[unknown, string]> = [
      [{ team: 'x'.repeat(1025) }, 'filters.team: must be at most 1024 bytes (UTF-8): a stored value is never longer'],
      [
        { team: { $ne: 'é'.repeat(513) } },
        'filters.team.$ne: must be at most 1024 bytes (UTF-8): a stored value is never longer',
      ],
      [
        { team: { $in: ['ok', 'x'.repeat(9 * 1024 * 1024)] } },
        'filters.team.$in.1: must be at most 1024 bytes (UTF-8): a stored value is never longer',
      ],
      [
        { $and: [{ team: { $nin: ['a', 'y'.repeat(2000)] } }] },
        'filters.$and.0.team.$nin.1: must be at most 1024 bytes (UTF-8): a stored value is never longer',
      ],
      [
        values(33, 1000),
        "filters.$or.32.k32: too many value bytes: a filter's values hold at most 32768 bytes (UTF-8) in all",
      ],
      [
        { team: { $in: Array.from({ length: 40 }, (_v, index) => `${index}`.padEnd(1000, 'z')) } },
        "filters.team.$in: too many value bytes: a filter's values hold at most 32768 bytes (UTF-8) in all",
      ],
    ];
    for (const [filters, message] of cases) {
      for (const path of ['/api/v1/search', '/api/v1/query']) {
        const response = await app.call('POST', path, { key: user.key, body: { query: 'anything', filters } });
        t.deepEqual(
          [response.status, response.body],
          [400, { error: { code: 'bad_request', message } }],
          `${path} ${message}`,
        );
      }
    }
    // At the limits: a 1,024-byte value, and 32 of them.
    for (const filters of [{ team: 'é'.repeat(512) }, values(32, 1024)]) {
      const response = await app.call('POST', '/api/v1/search', {
        key: user.key,
        body: { query: 'anything', filters },
      });
      t.is(response.status, 200, JSON.stringify(response.body).slice(0, 300));
    }
  },
);
