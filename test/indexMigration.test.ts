// `kbqa index migrate` against the real OpenSearch and FerretDB: a v2 template with a changed analyzer (a synonym)
// built beside the live index by _reindex while a query loop runs through the API, documents ingested during the
// migration, the alias moved in one _aliases call, the old index kept, rollback and drop-old; and a migration that
// re-chunks and re-embeds (a new chunk size), interrupted part-way and resumed.
//
// Scope: each test has an alias of its own (KBQA_CHUNKS_ALIAS=kbqa-chunks-<name>) and its own copy of the asset
// files (KBQA_SEARCH_ASSETS_DIR): the default alias and the repository's files stay as they are. Serial: each
// test's indices are its own, but the machine is small and a migration is heavy.
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runDoctor } from '../service/operations/doctor.ts';
import { migrateIndex } from '../service/operations/indexMigration/migrate.ts';
import type { IndexMigrationDeps } from '../service/operations/indexMigration/plan.ts';
import { dropOldIndices, oldIndices, useIndex } from '../service/operations/indexMigration/swap.ts';
import { CHUNKS_ALIAS, loadSearchAssets } from '../service/search/assets.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { dropAliasFamily } from './helpers/aliasFamily.ts';
import { startTestApp, testWithDatabase, type TestApp } from './helpers/app.ts';
import { until } from './helpers/apiProcess.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';

const test = testWithDatabase();
const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

/** A copy of the asset files in a temporary directory. */
function copyAssets(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kbqa-assets-'));
  for (const folder of ['index-templates', 'ingest-pipelines', 'search-pipelines'])
    cpSync(join(repositoryRoot, folder), join(dir, folder), { recursive: true });
  return dir;
}

/**
 * The repository's current template version (the highest file): each test starts on it and migrates to the next,
 * written by writeNextVersion. In the tests, `v1` names the index of the current version and `v2` the next one's.
 */
const CURRENT = loadSearchAssets().version;
const NEXT = CURRENT + 1;
const nextVersionIndex = (index: string) => index.replace(`kbqa-chunks-v${CURRENT}-`, `kbqa-chunks-v${NEXT}-`);

/** Writes index-templates/kbqa-chunks.v<NEXT>.json: the current version with `edit` applied to its analysis. */
function writeNextVersion(
  dir: string,
  edit: (analysis: { analyzer: Record<string, { filter: string[] }>; filter: Record<string, unknown> }) => void,
): void {
  const template = JSON.parse(readFileSync(join(dir, 'index-templates', `kbqa-chunks.v${CURRENT}.json`), 'utf8'));
  template.version = NEXT;
  edit(template.template.settings.analysis);
  writeFileSync(join(dir, 'index-templates', `kbqa-chunks.v${NEXT}.json`), JSON.stringify(template, null, 2));
}

const uniqueAlias = (label: string) => `${CHUNKS_ALIAS}-${label}${randomUUID().replaceAll('-', '').slice(0, 10)}`;

function migrationDeps(app: TestApp): IndexMigrationDeps {
  return { store: app.deps.store, search: app.deps.search, rag: app.deps.rag, config: app.deps.config };
}

/** The concrete indices behind the alias, straight from OpenSearch. */
async function aliasTargets(app: TestApp, alias: string): Promise<string[]> {
  const body = await app.deps.search.request<Record<string, unknown> & { status?: number }>('GET', `/_alias/${alias}`, {
    acceptStatuses: [404],
  });
  if (!body || body.status === 404) return [];
  return Object.keys(body).sort();
}

async function searchDocuments(
  app: TestApp,
  user: TestUser,
  kb: string,
  query: string,
  mode: 'bm25' | 'hybrid',
): Promise<{ status: number; ids: string[] }> {
  const response = await app.call('POST', '/api/v1/search', {
    key: user.key,
    body: { query, knowledge_base_ids: [kb], mode, max_results: 20 },
  });
  const results = (response.body?.results ?? []) as Array<{ document_id: string }>;
  return { status: response.status, ids: [...new Set(results.map((chunk) => chunk.document_id))] };
}

/** Chunks in one concrete index matching these fields, by _count (not the search the migration's checks use). */
async function countIn(app: TestApp, index: string, fields: Record<string, string | number>): Promise<number> {
  await app.deps.search.request('POST', `/${index}/_refresh`, { idempotent: true });
  const filter = Object.entries(fields).map(([field, value]) => ({ term: { [field]: value } }));
  return (
    await app.deps.search.request<{ count: number }>('POST', `/${index}/_count`, {
      body: { query: { bool: { filter } } },
    })
  ).count;
}

/** Distinct documents and chunks of one KB in one concrete index. */
async function indexCounts(app: TestApp, index: string, kb: string): Promise<{ documents: number; chunks: number }> {
  await app.deps.search.request('POST', `/${index}/_refresh`, { idempotent: true });
  const body = await app.deps.search.request<{
    hits: { total: { value: number } };
    aggregations: { documents: { value: number } };
  }>('POST', `/${index}/_search`, {
    body: {
      size: 0,
      track_total_hits: true,
      query: { term: { knowledge_base_id: kb } },
      aggs: { documents: { cardinality: { field: 'document_id' } } },
    },
  });
  return { documents: body.aggregations.documents.value, chunks: body.hits.total.value };
}

const FLEET = (index: number) =>
  `# Fleet note ${index}\n\nVessel ${index} carries cargo crate ${index * 3} between harbour ${index % 4} and the north pier; the crew checks ropes at dawn.`;
const AUTOMOBILE =
  '# Garage\n\nThe automobile is parked in the long shed behind the workshop, under a green tarpaulin.';

test.serial(
  'a changed analyzer migrates by _reindex under a query loop: no failed query, counts equal, one alias swap, rollback, drop-old',
  async (t) => {
    t.timeout(300_000);
    const alias = uniqueAlias('mig');
    const assetsDir = copyAssets();
    const app = await startTestApp({ KBQA_CHUNKS_ALIAS: alias, KBQA_SEARCH_ASSETS_DIR: assetsDir });
    try {
      const user = await makeUser(app.deps.store);
      const kb = await createKb(app, user.key, 'migration');
      const garage = await ingest(app, user.key, kb, 'garage.md', AUTOMOBILE);
      for (let index = 0; index < 8; index += 1) await ingest(app, user.key, kb, `fleet-${index}.md`, FLEET(index));
      const v1 = app.deps.search.indexName;
      t.deepEqual(await aliasTargets(app, alias), [v1]);
      // Before: "car" is not "automobile" to BM25.
      t.false((await searchDocuments(app, user, kb, 'car', 'bm25')).ids.includes(garage.id));

      writeNextVersion(assetsDir, (analysis) => {
        analysis.filter.kbqa_vehicle_synonyms = { type: 'synonym', synonyms: ['car, automobile'] };
        analysis.analyzer.kbqa_english.filter.splice(2, 0, 'kbqa_vehicle_synonyms');
      });
      const v2 = nextVersionIndex(v1);

      // The query loop (through the API) and an alias poller, the whole time.
      let running = true;
      const queries = { sent: 0, atSwap: -1, failed: [] as string[] };
      const aliasSeen = new Set<string>();
      const queryLoop = (async () => {
        while (running) {
          const mode = queries.sent % 2 === 0 ? 'hybrid' : 'bm25';
          const result = await searchDocuments(app, user, kb, 'cargo crate at the north pier', mode).catch(
            (error: unknown) => ({ status: 0, ids: [String(error)] }),
          );
          queries.sent += 1;
          if (result.status !== 200) queries.failed.push(`${mode} ${result.status} ${result.ids.join(',')}`);
        }
      })();
      const aliasPoller = (async () => {
        while (running) {
          aliasSeen.add((await aliasTargets(app, alias)).join('+') || '(none)');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();

      // One query answered on v1 before the migration starts (a small _reindex can swap before a loaded machine answers).
      await until('a first query answered', 60_000, () => queries.sent >= 1);

      const during: string[] = [];
      let ingestDuring: Promise<void> = Promise.resolve();
      const migration = migrateIndex(migrationDeps(app), {
        knowledgeBaseIds: [kb],
        onProgress: (done, total) => {
          // Documents ingested while the target fills (written to the live v1 index, copied by the catch-up).
          if (done === 1 && total > 1 && during.length === 0) {
            ingestDuring = (async () => {
              for (let index = 100; index < 102; index += 1)
                during.push((await ingest(app, user.key, kb, `fleet-${index}.md`, FLEET(index))).id);
            })();
          }
        },
        // And one right after the swap (the serving index may still be cached as v1 in this process).
        afterSwap: async () => {
          queries.atSwap = queries.sent;
          await ingestDuring;
          during.push((await ingest(app, user.key, kb, 'fleet-200.md', FLEET(200))).id);
        },
      });
      const outcome = await migration;
      await ingestDuring;
      // A few more queries after the swap, then stop the loops.
      const sentAtSwap = queries.sent;
      await until('queries after the migration', 30_000, async () => queries.sent >= sentAtSwap + 5);
      running = false;
      await Promise.all([queryLoop, aliasPoller]);

      t.is(outcome.outcome, 'migrated');
      t.is(outcome.fill, 'reindex');
      t.is(outcome.from, v1);
      t.is(outcome.to, v2);
      // The loop spanned the swap: queries answered before it and after it (a bound a loaded machine still meets).
      t.true(queries.sent >= 3, `${queries.sent} queries ran`);
      t.true(queries.atSwap >= 1, `${queries.atSwap} queries answered before the swap`);
      t.true(queries.sent > queries.atSwap, 'queries answered after the swap');
      t.deepEqual(queries.failed, [], 'no query failed');
      // Never on none, never on two: only v1, then only v2.
      t.deepEqual([...aliasSeen].sort(), [v1, v2].sort());
      t.deepEqual(await aliasTargets(app, alias), [v2]);

      // Counts: every document of the store in v2; the documents both hold, with as many chunks.
      t.is(during.length, 3);
      const documents = await app.deps.store.listDocumentSummaries([kb]);
      t.is(documents.filter((document) => document.live_version !== null).length, 12);
      const after = await indexCounts(app, v2, kb);
      t.is(after.documents, 12);
      t.is(
        after.chunks,
        documents.reduce((sum, document) => sum + document.chunks, 0),
      );
      const before = await indexCounts(app, v1, kb);
      // Counted by _count, apart from the migration: v2 holds every live document's chunks, as many as the records say,
      // and each document the old index holds has as many chunks in both.
      t.is(
        await countIn(app, v2, { knowledge_base_id: kb }),
        documents.reduce((sum, document) => sum + document.chunks, 0),
      );
      for (const document of documents) {
        const inOld = await countIn(app, v1, { document_id: document._id });
        if (inOld > 0)
          t.is(
            await countIn(app, v2, { document_id: document._id }),
            inOld,
            `${document._id}: as many chunks in ${v2} as in ${v1}`,
          );
      }
      // What the check saw when the alias moved: the copied versions' chunks equal in both, the rest rebuilt.
      t.is((outcome.chunks.source ?? 0) + (outcome.chunks.rebuilt ?? 0), outcome.chunks.target);
      for (const id of during)
        t.true(
          (await app.deps.search.countChunks({ document_id: id })) > 0,
          `${id} (ingested during the migration) is in ${v2}`,
        );
      // The 9 it had when the migration started; the 2 ingested during the fill land in it only when they finish before
      // the swap, which on a database of the file's own (quick store reads) the fill often does not leave time for.
      t.true(before.documents >= 9, `the old index is kept, with what it had: ${before.documents} documents`);

      // The analyzer change shows: "car" now finds the automobile (once this process's serving cache moved to v2).
      await until('the synonym to take effect', 30_000, async () =>
        (await searchDocuments(app, user, kb, 'car', 'bm25')).ids.includes(garage.id),
      );

      // Rollback: one _aliases call back to v1 (caught up with what v2 got since), where "car" is not "automobile".
      const rolledBack = await useIndex(migrationDeps(app), null, { catchUpDelayMs: 2_500, knowledgeBaseIds: [kb] });
      t.is(rolledBack.to, v1);
      t.deepEqual(await aliasTargets(app, alias), [v1]);
      await until(
        'rollback to take effect',
        30_000,
        async () => !(await searchDocuments(app, user, kb, 'car', 'bm25')).ids.includes(garage.id),
      );
      t.is(
        (await indexCounts(app, v1, kb)).documents,
        12,
        'caught up with the documents ingested during the migration',
      );

      // Forward again, then drop the old index: the alias stays, queries answer.
      await useIndex(migrationDeps(app), v2, { catchUpDelayMs: 2_500, knowledgeBaseIds: [kb] });
      t.deepEqual(
        (await oldIndices(app.deps.search)).map((entry) => entry.index),
        [v1],
      );

      // A catch-up after the swap left unfinished (v2 `swapped`, as when ingestions outlast the wait): drop-old refuses
      // and names `kbqa index use v2`, which finishes it (`kbqa index migrate` can only for the current template
      // version's index, and a rolled-back one is not).
      const admin = app.deps.search.indices;
      const v2Meta = (await admin.meta(v2))!;
      t.is(v2Meta.migration.state, 'live');
      await admin.setMeta(v2, { ...v2Meta, migration: { ...v2Meta.migration, state: 'swapped' } });
      const unfinished = await t.throwsAsync(dropOldIndices(app.deps.search, [v1]));
      t.true(unfinished?.message.includes(`kbqa index use ${v2}`), unfinished?.message);
      const finished = await useIndex(migrationDeps(app), v2, { catchUpDelayMs: 500, knowledgeBaseIds: [kb] });
      t.is(finished.outcome, 'caught-up');
      t.is(finished.from, v1);
      t.deepEqual(finished.unrebuildable, []);
      t.is((await admin.meta(v2))?.migration.state, 'live');
      t.deepEqual(await aliasTargets(app, alias), [v2]);
      // Live and finished: naming it again is refused.
      await t.throwsAsync(useIndex(migrationDeps(app), v2, { knowledgeBaseIds: [kb] }), {
        message: /already points to/,
      });
      t.deepEqual(await dropOldIndices(app.deps.search, [v1]), [v1]);
      t.deepEqual(await aliasTargets(app, alias), [v2]);
      t.is(
        (await app.deps.search.request<{ status?: number }>('GET', `/${v1}`, { acceptStatuses: [404] })).status,
        404,
      );
      await until('queries on v2 after drop-old', 30_000, async () =>
        (await searchDocuments(app, user, kb, 'car', 'bm25')).ids.includes(garage.id),
      );

      // Nothing left to do.
      t.is((await migrateIndex(migrationDeps(app), { knowledgeBaseIds: [kb] })).outcome, 'up-to-date');
    } finally {
      await app.close();
      await dropAliasFamily(alias);
      rmSync(assetsDir, { recursive: true, force: true });
    }
  },
);

test.serial(
  'a new chunk size migrates by re-chunking and re-embedding the stored originals; an interrupted fill resumes',
  async (t) => {
    t.timeout(300_000);
    const alias = uniqueAlias('res');
    const assetsDir = copyAssets();
    let app = await startTestApp({ KBQA_CHUNKS_ALIAS: alias, KBQA_SEARCH_ASSETS_DIR: assetsDir });
    let closed = false;
    try {
      const user = await makeUser(app.deps.store);
      const kb = await createKb(app, user.key, 'resume');
      // One paragraph of ~100 tokens each: one chunk at 256 tokens, several at 32.
      const logbook = (index: number) =>
        [0, 1, 2, 3]
          .map(
            (line) =>
              `Vessel ${index} carried crate ${index * 10 + line} from harbour ${line} to the north pier, where the crew checked every rope at dawn.`,
          )
          .join(' ');
      for (let index = 0; index < 6; index += 1)
        await ingest(app, user.key, kb, `logbook-${index}.txt`, logbook(index));
      const v1 = app.deps.search.indexName;
      const chunksBefore = (await indexCounts(app, v1, kb)).chunks;
      await app.close();
      closed = true;

      // A smaller chunk size is an ingest-time change: a new template version (unchanged otherwise) and a re-embed.
      writeNextVersion(assetsDir, () => {});
      app = await startTestApp({
        KBQA_CHUNKS_ALIAS: alias,
        KBQA_SEARCH_ASSETS_DIR: assetsDir,
        KBQA_CHUNK_TOKENS: '32',
        KBQA_CHUNK_OVERLAP_TOKENS: '0',
      });
      closed = false;
      // Start-up kept serving v1 (no second index behind the alias), and says what differs.
      t.deepEqual(await aliasTargets(app, alias), [v1]);
      const detail = await app.deps.search.searchIndexDetail();
      t.deepEqual(detail.drift.map((entry) => entry.kind).sort(), ['chunking', 'version']);

      const stopped = await migrateIndex(migrationDeps(app), { stopAfterVersions: 2, knowledgeBaseIds: [kb] });
      t.is(stopped.outcome, 'stopped');
      t.is(stopped.fill, 'rebuild');
      const v2 = nextVersionIndex(v1);
      t.deepEqual(await aliasTargets(app, alias), [v1], 'an interrupted migration leaves the alias where it was');
      const partial = await indexCounts(app, v2, kb);
      t.true(partial.documents >= 1 && partial.documents < 6, `${partial.documents} documents after the interruption`);

      // An ingestion held in build across the swap: it resolved v1 before the swap and goes live after the migration's
      // catch-up gave up waiting for it, so only the ingestion itself can put its version in v2.
      const rag = app.deps.rag;
      const embedSegments = rag.embedSegments.bind(rag);
      let enteredEmbed: () => void = () => {};
      const entered = new Promise<void>((resolve) => (enteredEmbed = resolve));
      let release: () => void = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      rag.embedSegments = async (title, segments, modelName) => {
        if (segments.some((segment) => segment.text.includes('Vessel 300 '))) {
          enteredEmbed();
          await released;
        }
        return embedSegments(title, segments, modelName);
      };
      let resumed: Awaited<ReturnType<typeof migrateIndex>> | undefined;
      let heldIngest: ReturnType<typeof ingest> | undefined;
      try {
        heldIngest = ingest(app, user.key, kb, 'logbook-300.txt', logbook(300));
        await entered;
        resumed = await migrateIndex(migrationDeps(app), {
          catchUpDelayMs: 2_500,
          inFlightWaitMs: 1_000,
          knowledgeBaseIds: [kb],
        });
        t.is(resumed.left_in_flight, 1, 'the held ingestion was still running after the swap');
        // Its catch-up unfinished, the old index may still be written to: drop-old refuses.
        const refused = await t.throwsAsync(dropOldIndices(app.deps.search, [v1], app.deps.store));
        t.regex(refused?.message ?? '', /catch-up after the swap is unfinished/);
      } finally {
        release();
        rag.embedSegments = embedSegments;
      }
      const late = await heldIngest!;
      t.true((await countIn(app, v2, { document_id: late.id })) > 0, `${late.id}, built across the swap, is in ${v2}`);
      t.true((await countIn(app, v1, { document_id: late.id })) > 0, `${late.id} was written to ${v1} first`);
      t.is(resumed!.outcome, 'migrated');
      t.is(resumed!.fill, 'rebuild');
      t.true(resumed!.rebuilt <= 6 - partial.documents + 1, `resumed: ${resumed!.rebuilt} rebuilt`);
      t.deepEqual(await aliasTargets(app, alias), [v2]);
      const after = await indexCounts(app, v2, kb);
      t.is(after.documents, 7);
      t.true(after.chunks > chunksBefore, `smaller chunks: ${after.chunks} > ${chunksBefore}`);
      // The records carry the new counts (those rebuilt by the interrupted run too): each its document's in v2, and
      // `kbqa doctor` finds nothing.
      t.is(resumed!.chunk_counts_updated, 6);
      for (const document of await app.deps.store.listDocumentSummaries([kb])) {
        t.is(
          document.chunks,
          await app.deps.search.countChunks({ document_id: document._id }),
          `${document._id}'s record`,
        );
        t.true(
          document.total_chunks >= document.chunks,
          `${document._id}: total_chunks ${document.total_chunks} ≥ chunks ${document.chunks}`,
        );
      }
      const doctor = await runDoctor(app.deps, { knowledgeBaseIds: [kb], graceMs: 0 });
      t.true(doctor.clean, JSON.stringify(doctor));
      // The re-run finishes the catch-up (v2 was left `swapped`): nothing was missing, the held ingestion wrote its
      // version to v2 itself. Then every live version complete and nothing else: a fresh diff finds nothing to do.
      const finished = await migrateIndex(migrationDeps(app), { catchUpDelayMs: 500, knowledgeBaseIds: [kb] });
      t.is(finished.outcome, 'caught-up');
      t.is(finished.copied + finished.rebuilt, 0, 'nothing left to copy or rebuild');
      t.is((await migrateIndex(migrationDeps(app), { knowledgeBaseIds: [kb] })).outcome, 'up-to-date');
    } finally {
      if (!closed) await app.close();
      await dropAliasFamily(alias);
      rmSync(assetsDir, { recursive: true, force: true });
    }
  },
);
