// Issue 22 items 5 and 10a, against the running stack: metadata never becomes fields of the shared chunk index's
// mapping (whatever keys tenants give, its field count stays the same, and filters on those keys match exactly), and
// a filter's values are bounded (a value no stored value can equal is a 400 naming the part and the limit).
//
// Scope: an alias of its own (KBQA_CHUNKS_ALIAS), so the index is a fresh install of the current template whatever
// other test files (or another checkout's) made of the default alias.
import { randomUUID } from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { CHUNKS_ALIAS, loadSearchAssets } from '../service/search/assets.ts';
import { makeUser } from './factories/accounts.ts';
import { dropAliasFamily } from './helpers/aliasFamily.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { createKb } from './helpers/documentsApi.ts';

type Body = Record<string, any>;

const test = anyTest as TestFn<{ app: TestApp; alias: string }>;

test.before(async (t) => {
  const alias = `${CHUNKS_ALIAS}-mb${randomUUID().replaceAll('-', '').slice(0, 10)}`;
  t.context = { alias, app: await startTestApp({ KBQA_CHUNKS_ALIAS: alias }) };
});

test.after.always(async (t) => {
  await t.context.app?.close();
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
  const mapping = await app.deps.search.request<Record<string, { mappings: { properties: Record<string, Body> } }>>('GET', `/${index}/_mapping`);
  return mappingFields(mapping[index].mappings.properties).sort();
}

async function ingest(app: TestApp, key: string, kbId: string, filename: string, metadata: Body): Promise<string> {
  const response = await app.call('POST', '/api/v1/documents', { key, body: { kb_id: kbId, filename, content: `The ${filename} note about harbour ferries.`, metadata } });
  if (response.status !== 201) throw new Error(`ingest of ${filename}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.document.id as string;
}

test.serial('a fresh install is the current template version', async (t) => {
  const { app } = t.context;
  const { version } = loadSearchAssets();
  t.true(app.deps.search.indexName.startsWith(`kbqa-chunks-v${version}-`), app.deps.search.indexName);
  t.is((await app.deps.search.indices.meta(app.deps.search.indexName))?.template_version, version);
});

test.serial('filter values are bounded: one value at most 1 KiB, all of a filter\'s at most 32 KiB, a 400 naming the part', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const values = (count: number, bytes: number) => ({ $or: Array.from({ length: count }, (_v, index) => ({ [`k${index}`]: 'v'.repeat(bytes) })) });
  const cases: Array<[unknown, string]> = [
    [{ team: 'x'.repeat(1025) }, 'filters.team: must be at most 1024 bytes (UTF-8): a stored value is never longer'],
    [{ team: { $ne: 'é'.repeat(513) } }, 'filters.team.$ne: must be at most 1024 bytes (UTF-8): a stored value is never longer'],
    [{ team: { $in: ['ok', 'x'.repeat(9 * 1024 * 1024)] } }, 'filters.team.$in.1: must be at most 1024 bytes (UTF-8): a stored value is never longer'],
    [{ $and: [{ team: { $nin: ['a', 'y'.repeat(2000)] } }] }, 'filters.$and.0.team.$nin.1: must be at most 1024 bytes (UTF-8): a stored value is never longer'],
    [values(33, 1000), 'filters.$or.32.k32: too many value bytes: a filter\'s values hold at most 32768 bytes (UTF-8) in all'],
    [{ team: { $in: Array.from({ length: 40 }, (_v, index) => `${index}`.padEnd(1000, 'z')) } }, 'filters.team.$in: too many value bytes: a filter\'s values hold at most 32768 bytes (UTF-8) in all'],
  ];
  for (const [filters, message] of cases) {
    for (const path of ['/api/v1/search', '/api/v1/query']) {
      const response = await app.call('POST', path, { key: user.key, body: { query: 'anything', filters } });
      t.deepEqual([response.status, response.body], [400, { error: { code: 'bad_request', message } }], `${path} ${message}`);
    }
  }
  // At the limits: a 1,024-byte value, and 32 of them.
  for (const filters of [{ team: 'é'.repeat(512) }, values(32, 1024)]) {
    const response = await app.call('POST', '/api/v1/search', { key: user.key, body: { query: 'anything', filters } });
    t.is(response.status, 200, JSON.stringify(response.body).slice(0, 300));
  }
});
