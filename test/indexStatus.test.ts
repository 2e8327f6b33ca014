// `kbqa index status` and /readyz's search_index detail: no drift on a clean alias; an analysis edited in place in the
// template file is reported (with the command to run) while /readyz stays 200; status reads and changes nothing.
//
// Scope: an alias of its own (KBQA_CHUNKS_ALIAS) and a copy of the asset files (KBQA_SEARCH_ASSETS_DIR) it edits.
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { formatIndexStatus } from '../service/operations/indexMigration/format.ts';
import { indexStatus } from '../service/operations/indexMigration/status.ts';
import { CHUNKS_ALIAS, loadSearchAssets } from '../service/search/assets.ts';
import { dropAliasFamily } from './helpers/aliasFamily.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';

interface Context {
  app: TestApp;
  alias: string;
  assetsDir: string;
}

const test = testWithApp<Omit<Context, 'app'>>({
  env: (t) => {
    t.context.alias = `${CHUNKS_ALIAS}-st${randomUUID().replaceAll('-', '').slice(0, 10)}`;
    t.context.assetsDir = mkdtempSync(join(tmpdir(), 'kbqa-assets-'));
    for (const folder of ['index-templates', 'ingest-pipelines', 'search-pipelines']) {
      cpSync(join(repositoryRoot, folder), join(t.context.assetsDir, folder), { recursive: true });
    }
    return { KBQA_CHUNKS_ALIAS: t.context.alias, KBQA_SEARCH_ASSETS_DIR: t.context.assetsDir };
  },
});
const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The current template version (the highest file), and the next one. */
const { version } = loadSearchAssets();
const next = version + 1;
const templateFile = (dir: string) => join(dir, 'index-templates', `kbqa-chunks.v${version}.json`);

test.after.always(async (t) => {
  if (t.context.alias) await dropAliasFamily(t.context.alias);
  rmSync(t.context.assetsDir, { recursive: true, force: true });
});

/** What status must not change: the index's settings and mappings, the alias, the installed template. */
async function clusterState(app: TestApp, alias: string): Promise<unknown> {
  const index = app.deps.search.indexName;
  const settings = await app.deps.search.request<Record<string, unknown>>('GET', `/${index}/_settings`);
  const mappings = await app.deps.search.request<Record<string, unknown>>('GET', `/${index}/_mapping`);
  const aliases = await app.deps.search.request<Record<string, unknown>>('GET', `/_alias/${alias}`);
  const template = await app.deps.search.request<Record<string, unknown>>(
    'GET',
    `/_index_template/kbqa-chunks-v${version}${alias.slice(CHUNKS_ALIAS.length)}`,
  );
  return { settings, mappings, aliases, template };
}

test.serial('a clean alias: no drift in status nor /readyz', async (t) => {
  const { app, alias } = t.context;
  const status = await indexStatus({ search: app.deps.search, embedder: app.deps.rag.embedder });
  t.is(status.alias, alias);
  t.is(status.live, app.deps.search.indexName);
  t.is(status.target as string | null, status.live);
  t.deepEqual(status.drift, []);
  t.is(status.command, null);
  t.deepEqual(
    status.indices.map((entry) => [
      entry.index,
      entry.live,
      entry.template_version,
      entry.embedder,
      entry.migration_state,
    ]),
    [[app.deps.search.indexName, true, version, app.deps.rag.embedder.modelName, 'live']],
  );
  t.is(status.pipelines.ingest, 'kbqa-chunks-v1');
  t.regex(formatIndexStatus(status), /no drift/);
  const ready = await app.call('GET', '/readyz');
  t.is(ready.status, 200);
  // Public: the drift's kinds and the command, never index names (health.ts).
  t.deepEqual(ready.body.search_index, { drift: [], command: null });
});

test.serial(
  'an analysis edited in place: status and /readyz report it with the command, and status changes nothing',
  async (t) => {
    const { app, alias, assetsDir } = t.context;
    const original = readFileSync(templateFile(assetsDir), 'utf8');
    const edited = JSON.parse(original);
    edited.template.settings.analysis.filter.english_stemmer.language = 'light_english';
    writeFileSync(templateFile(assetsDir), JSON.stringify(edited, null, 2));
    try {
      const before = await clusterState(app, alias);
      const status = await indexStatus({ search: app.deps.search, embedder: app.deps.rag.embedder });
      const kinds = status.drift.map((entry) => entry.kind).sort();
      t.deepEqual(kinds, ['analysis', 'index_template']);
      const analysis = status.drift.find((entry) => entry.kind === 'analysis')!;
      t.is(analysis.asset, `index-templates/kbqa-chunks.v${version}.json`);
      t.regex(analysis.detail, /english_stemmer\.language: cluster english, file light_english/);
      // Edited in place: the live index is this version's, so the way out is a new version, then a migration.
      t.is(
        status.command,
        `copy index-templates/kbqa-chunks.v${version}.json to index-templates/kbqa-chunks.v${next}.json, then kbqa index migrate`,
      );
      t.regex(formatIndexStatus(status), /kbqa index migrate/);
      t.deepEqual(await clusterState(app, alias), before, 'status read only');

      // /readyz: still ready, with the drift as detail (its probe caches drift for a few seconds).
      const deadline = Date.now() + 20_000;
      let ready = await app.call('GET', '/readyz');
      while ((ready.body.search_index?.drift?.length ?? 0) === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        ready = await app.call('GET', '/readyz');
      }
      t.is(ready.status, 200);
      t.is(ready.body.status, 'ready');
      t.deepEqual(ready.body.components, { opensearch: 'ok', mongodb: 'ok', embedder: 'ok', splitter: 'ok' });
      t.deepEqual([...ready.body.search_index.drift].sort(), ['analysis', 'index_template']);
      // The same command as `kbqa index status`: edited in place, a plain migrate would find nothing to do.
      t.is(ready.body.search_index.command, status.command);
      t.is(
        ready.body.search_index.command,
        `copy index-templates/kbqa-chunks.v${version}.json to index-templates/kbqa-chunks.v${next}.json, then kbqa index migrate`,
      );
      t.false(JSON.stringify(ready.body).includes(alias), 'no index or alias name');
      t.false(JSON.stringify(ready.body).includes('english_stemmer'), 'no analysis diff');

      // Start-up with the edited file keeps the index as it is (no analysis change) and reports the same drift.
      const applied = await app.deps.search.applyAssets();
      t.true(applied.drift.some((entry) => entry.kind === 'analysis'));
      const settings = await app.deps.search.request<
        Record<string, { settings: { index: { analysis: { filter: { english_stemmer: { language: string } } } } } }>
      >('GET', `/${applied.index}/_settings`);
      t.is(settings[applied.index].settings.index.analysis.filter.english_stemmer.language, 'english');
    } finally {
      writeFileSync(templateFile(assetsDir), original);
      await app.deps.search.applyAssets();
    }
  },
);

test.serial('the CLI: kbqa index status --json exits 0 and names the alias', async (t) => {
  const { alias, assetsDir } = t.context;
  const run = spawnSync(
    join(repositoryRoot, 'node_modules/.bin/node'),
    [join(repositoryRoot, 'service/cli/kbqa.ts'), 'index', 'status', '--json'],
    {
      env: { ...process.env, KBQA_CHUNKS_ALIAS: alias, KBQA_SEARCH_ASSETS_DIR: assetsDir, KBQA_LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  t.is(run.status, 0, run.stderr);
  const status = JSON.parse(run.stdout);
  t.is(status.alias, alias);
  t.deepEqual(status.drift, []);
});
