// A chunk index of template v1 (a field per metadata key) after an upgrade to template v2 (`<key>=<value>`
// keywords): it keeps serving filters and taking metadata in its own layout, is reported as drift, and
// `kbqa index migrate` copies it to v2 converting each chunk's metadata (a `_reindex` script); filters then match
// exactly as before, and a rollback's catch-up converts back.
//
// Scope: an alias of its own (KBQA_CHUNKS_ALIAS) and a copy of the asset files (KBQA_SEARCH_ASSETS_DIR) that
// starts with v1 only.
import { randomUUID } from 'node:crypto';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { migrateIndex } from '../service/operations/indexMigration/migrate.ts';
import type { IndexMigrationDeps } from '../service/operations/indexMigration/plan.ts';
import { useIndex } from '../service/operations/indexMigration/swap.ts';
import { CHUNKS_ALIAS } from '../service/search/assets.ts';
import { makeUser } from './factories/accounts.ts';
import { dropAliasFamily } from './helpers/aliasFamily.ts';
import { copyAssets, repositoryRoot } from './helpers/assetFiles.ts';
import { startTestApp, testWithDatabase, type TestApp } from './helpers/app.ts';
import { createKb } from './helpers/documentsApi.ts';

type Body = Record<string, any>;

const test = testWithDatabase();

test('a v1 index serves metadata filters until migrated to v2, whose copy converts the metadata; rollback converts back', async (t) => {
  t.timeout(300_000);
  const alias = `${CHUNKS_ALIAS}-mm${randomUUID().replaceAll('-', '').slice(0, 10)}`;
  // v1 the highest version (v3's sentence vectors are test/sentenceVectorMigration.test.ts's).
  const assetsDir = copyAssets(['kbqa-chunks.v2.json', 'kbqa-chunks.v3.json']);
  let app: TestApp | undefined;
  try {
    app = await startTestApp({ KBQA_CHUNKS_ALIAS: alias, KBQA_SEARCH_ASSETS_DIR: assetsDir });
    const running = app;
    const deps: IndexMigrationDeps = {
      store: app.deps.store,
      search: app.deps.search,
      rag: app.deps.rag,
      config: app.deps.config,
    };
    const v1 = app.deps.search.indexName;
    t.true(v1.startsWith('kbqa-chunks-v1-'), v1);
    const user = await makeUser(app.deps.store);
    const kb = await createKb(app, user.key, 'metadata migration');
    const names = new Map<string, string>();
    const ingest = async (name: string, metadata: Body) => {
      const response = await running.call('POST', '/api/v1/documents', {
        key: user.key,
        body: { kb_id: kb, filename: `${name}.md`, content: `The ${name} note about harbour ferries.`, metadata },
      });
      t.is(response.status, 201, JSON.stringify(response.body));
      names.set(response.body.document.id, name);
    };
    const found = async (filters: Body) => {
      const response = await running.call('POST', '/api/v1/search', {
        key: user.key,
        body: { query: 'harbour ferries', knowledge_base_ids: [kb], filters, mode: 'hybrid', max_results: 50 },
      });
      t.is(response.status, 200, JSON.stringify(response.body));
      return (response.body.results as Body[]).map((chunk) => names.get(chunk.document_id)).sort();
    };
    const filters: Array<[Body, string[]]> = [
      [{ team: 'alpha' }, ['a', 'c']],
      [{ year: { $gte: 2021 } }, ['b', 'c']],
      [{ year: { $lt: -1 } }, ['d']],
      [{ year: 2020 }, ['a']],
      [{ published: { $gte: '2024-02-29T23:00:00-01:00', $lt: '2024-03-02' } }, ['a']],
      [{ tags: 'y' }, ['a']],
      [{ tags: { $nin: ['x'] } }, ['d']],
      [{ 'a.b': true }, ['a']],
      [{ 'a.b': { $exists: false } }, ['b', 'c', 'd']],
      [{ $or: [{ team: 'beta' }, { ratio: { $gt: 0.5 } }] }, ['b', 'd']],
    ];
    const expect = async (where: string, present: string[]) => {
      for (const [filter, expected] of filters)
        t.deepEqual(
          await found(filter),
          expected.filter((name) => present.includes(name)),
          `${where}: ${JSON.stringify(filter)}`,
        );
    };
    await ingest('a', { team: 'alpha', year: 2020, published: '2024-03-01', tags: ['x', 'y'], 'a.b': true });
    await ingest('b', { team: 'beta', year: 2025, ratio: 0.75 });
    await expect('v1', ['a', 'b']);

    // The upgrade: v2 is the current template. Start-up keeps the alias on v1 and reports the version as drift.
    copyFileSync(
      join(repositoryRoot, 'index-templates', 'kbqa-chunks.v2.json'),
      join(assetsDir, 'index-templates', 'kbqa-chunks.v2.json'),
    );
    await app.deps.search.applyAssets();
    t.is(app.deps.search.indexName, v1);
    t.true((await app.deps.search.indices.drift(v1, app.deps.rag.embedder)).some((entry) => entry.kind === 'version'));
    // Meanwhile v1 takes metadata and filters in its own layout.
    await ingest('c', { team: 'alpha', year: 2030 });
    await expect('v1 after the upgrade', ['a', 'b', 'c']);

    const migrated = await migrateIndex(deps, { knowledgeBaseIds: [kb], catchUpDelayMs: 2_500 });
    const v2 = v1.replace('kbqa-chunks-v1-', 'kbqa-chunks-v2-');
    t.like(migrated, { outcome: 'migrated', from: v1, to: v2, fill: 'reindex' });
    app.deps.search.forgetServingIndex();
    await ingest('d', { year: -2.5, tags: ['z'], ratio: 1 });
    await expect('v2', ['a', 'b', 'c', 'd']);
    const copied = await app.deps.search.request<{ hits: { hits: Array<{ _source: Body }> } }>(
      'POST',
      `/${v2}/_search`,
      {
        body: { query: { term: { filename: 'a.md' } }, _source: ['metadata', 'metadata_keys'] },
      },
    );
    t.deepEqual(copied.hits.hits[0]._source, {
      metadata: {
        str: ['team=alpha', 'published=2024-03-01', 'tags=x', 'tags=y'],
        num: ['year=c09f900000000000'],
        bool: ['a.b=true'],
        date: ['published=2024-03-01T00:00:00.000Z'],
      },
      metadata_keys: ['team', 'year', 'published', 'tags', 'a.b'],
    });
    const mapping = await app.deps.search.request<Record<string, { mappings: Body }>>('GET', `/${v2}/_mapping`);
    t.deepEqual(
      Object.keys(mapping[v2].mappings.properties.metadata.properties).sort(),
      ['bool', 'date', 'num', 'str'],
      'no key is a field of v2',
    );

    // Back to v1: its catch-up copies d from v2, converting the keywords back to typed fields.
    const rolledBack = await useIndex(deps, v1, { knowledgeBaseIds: [kb], catchUpDelayMs: 2_500 });
    t.is(rolledBack.to, v1);
    app.deps.search.forgetServingIndex();
    await expect('v1 after the rollback', ['a', 'b', 'c', 'd']);
  } finally {
    await app?.close();
    await dropAliasFamily(alias);
    rmSync(assetsDir, { recursive: true, force: true });
  }
});
