// Issue 8 §3: a delete racing an ingest leaves nothing of the KB behind; a permanent delete is repeatable; and
// `kbqa doctor` finds (and with --fix removes or rebuilds) whatever a crash or an outage left.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ExecutionContext } from 'ava';
import { MongoClient } from 'mongodb';
import { runDoctor } from '../service/operations/doctor.ts';
import { reindexDocuments } from '../service/commands/documents.ts';
import { UpstreamUnavailableError } from '../service/errors.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';
import { holdChunkIndexing } from './helpers/holdIndexing.ts';

const test = testWithApp<{ user: TestUser; other: TestUser }>();
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

test.before(async (t) => {
  t.context.user = await makeUser(t.context.app.deps.store, { label: 'race' });
  t.context.other = await makeUser(t.context.app.deps.store, { label: 'race-other' });
});

/** ~60 KB of distinct sentences: enough chunks that an ingest takes a while. */
function longText(seed: string): string {
  return Array.from(
    { length: 600 },
    (_, index) => `Sentence ${index} of the ${seed} ledger records shipment ${index * 7} to depot ${index % 13}.`,
  ).join(' ');
}

/** Nothing carrying this KB's id is stored anywhere, and the doctor agrees. */
async function assertNothingLeft(t: ExecutionContext<{ app: TestApp }>, kbId: string) {
  const { store, search } = t.context.app.deps;
  t.is(await search.countChunks({ knowledge_base_id: kbId }), 0, 'no chunk');
  t.deepEqual((await store.listDocuments(kbId, {})).items, [], 'no document record');
  t.deepEqual(await store.listDocumentContentIds(kbId), [], 'no stored content');
  const report = await runDoctor(t.context.app.deps, { knowledgeBaseIds: [kbId], graceMs: 0 });
  t.true(report.clean, JSON.stringify(report));
}

for (const mode of ['hard', 'soft'] as const) {
  const query = mode === 'hard' ? '?permanent=true' : '';

  test.serial(
    `${mode} delete while an ingest is between embedding and indexing: the ingest answers 404 and leaves nothing`,
    async (t) => {
      const { app, user } = t.context;
      const kb = await createKb(app, user.key, `race held ${mode}`);
      // Hold the ingest right before it writes, delete the KB, then let the ingest go on: the worst interleaving.
      const { atIndexing, release, restore } = holdChunkIndexing(app.deps.search);
      try {
        const ingesting = app.call('POST', '/api/v1/documents', {
          key: user.key,
          body: { kb_id: kb, filename: 'held.txt', content: longText('held') },
        });
        await atIndexing;
        const deleted = await app.call('DELETE', `/api/v1/knowledge-bases/${kb}${query}`, { key: user.key });
        t.deepEqual(deleted.body, { deleted: true, mode });
        release();
        const response = await ingesting;
        t.is(response.status, 404, JSON.stringify(response.body));
        t.deepEqual(response.body, { error: { code: 'not_found', message: `knowledge base ${kb} not found` } });
      } finally {
        restore();
      }
      await assertNothingLeft(t, kb);
    },
  );

  test.serial(`${mode} delete 1 s into three concurrent 60 KB ingests: nothing of the KB remains`, async (t) => {
    const { app, user } = t.context;
    const kb = await createKb(app, user.key, `race live ${mode}`);
    const ingests = ['a', 'b', 'c'].map((name) =>
      app.call('POST', '/api/v1/documents', {
        key: user.key,
        body: { kb_id: kb, filename: `${name}.txt`, content: longText(name) },
      }),
    );
    await sleep(1000);
    const deleted = await app.call('DELETE', `/api/v1/knowledge-bases/${kb}${query}`, { key: user.key });
    t.deepEqual(deleted.body, { deleted: true, mode });
    for (const response of await Promise.all(ingests)) {
      // Whichever finished before the delete was acknowledged (201) and then removed by it; the rest see the KB gone.
      t.true(response.status === 201 || response.status === 404, `${response.status} ${JSON.stringify(response.body)}`);
    }
    if (mode === 'hard') {
      await assertNothingLeft(t, kb);
      t.is(await app.deps.store.findKnowledgeBaseIncludingDeleted(kb), null, 'the KB record is gone');
    } else {
      // Soft: whatever was acknowledged before the delete stays stored (restorable); nothing was added after it.
      const record = await app.deps.store.findKnowledgeBaseIncludingDeleted(kb);
      t.true(record?.deleted_at instanceof Date);
      const report = await runDoctor(app.deps, { knowledgeBaseIds: [kb], graceMs: 0 });
      t.true(report.clean, JSON.stringify(report));
      // A permanent delete of the soft-deleted KB (its owner's erasure request) then removes all of it.
      const purged = await app.call('DELETE', `/api/v1/knowledge-bases/${kb}?permanent=true`, { key: user.key });
      t.deepEqual(purged.body, { deleted: true, mode: 'hard' });
      await assertNothingLeft(t, kb);
    }
  });
}

test.serial('an ingest into a KB deleted before it started is refused and writes nothing', async (t) => {
  const { app, user } = t.context;
  const kb = await createKb(app, user.key, 'deleted first');
  await app.call('DELETE', `/api/v1/knowledge-bases/${kb}`, { key: user.key });
  const response = await app.call('POST', '/api/v1/documents', {
    key: user.key,
    body: { kb_id: kb, filename: 'late.txt', content: 'too late' },
  });
  t.is(response.status, 403);
  t.is(await app.deps.search.countChunks({ knowledge_base_id: kb }), 0);
});

test.serial('a permanent delete that failed half-way (503) can be retried, and then removes everything', async (t) => {
  const { app, user, other } = t.context;
  const kb = await createKb(app, user.key, 'purge retry');
  await ingest(app, user.key, kb, 'one.txt', longText('one').slice(0, 4000));
  const store = app.deps.store;
  const original = store.deleteDocumentsOfKnowledgeBase;
  store.deleteDocumentsOfKnowledgeBase = async () => {
    throw new UpstreamUnavailableError('mongodb', 'the metadata store is unavailable; retry later');
  };
  let failed;
  try {
    failed = await app.call('DELETE', `/api/v1/knowledge-bases/${kb}?permanent=true`, { key: user.key });
  } finally {
    store.deleteDocumentsOfKnowledgeBase = original;
  }
  t.is(failed.status, 503);
  // Half-way: invisible (soft-deleted), chunks gone, records still there.
  t.is((await app.call('GET', `/api/v1/knowledge-bases/${kb}`, { key: user.key })).status, 404);
  t.is((await store.listDocuments(kb, {})).items.length, 1);

  // Only the owner may repeat it; to anyone else the KB does not exist.
  const stranger = await app.call('DELETE', `/api/v1/knowledge-bases/${kb}?permanent=true`, { key: other.key });
  t.is(stranger.status, 404);
  // A soft delete of a soft-deleted KB is still 404: there is nothing visible to delete.
  t.is((await app.call('DELETE', `/api/v1/knowledge-bases/${kb}`, { key: user.key })).status, 404);

  const retried = await app.call('DELETE', `/api/v1/knowledge-bases/${kb}?permanent=true`, { key: user.key });
  t.deepEqual(retried.body, { deleted: true, mode: 'hard' });
  await assertNothingLeft(t, kb);
  t.is(await store.findKnowledgeBaseIncludingDeleted(kb), null);
  // And once the record is gone, the KB is gone: 404.
  t.is((await app.call('DELETE', `/api/v1/knowledge-bases/${kb}?permanent=true`, { key: user.key })).status, 404);
});

test.serial(
  "removing a document's chunks also removes chunks acknowledged but not yet refreshed (a failed multi-batch ingest)",
  async (t) => {
    const { app, user } = t.context;
    const { search, rag } = app.deps;
    const kb = await createKb(app, user.key, 'unrefreshed');
    const documentId = randomUUID();
    const vector = await rag.embedQuestion('unrefreshed chunk');
    const chunks = Array.from({ length: 5 }, (_, index) => ({
      chunk_id: `${documentId}:1:${index}`,
      knowledge_base_id: kb,
      document_id: documentId,
      document_version: 1,
      filename: 'partial.txt',
      title: 'partial',
      heading_path: [],
      chunk_index: index,
      page_start: null,
      page_end: null,
      text: `partial chunk ${index}`,
      embedding: vector,
      embedder: rag.embedder.modelName,
      created_at: new Date().toISOString(),
    }));
    // An earlier batch of an ingest: acknowledged, not refreshed (only the last batch refreshes).
    await search.indexChunks(chunks);
    await search.deleteChunksOfDocument(documentId);
    await search.refreshChunks();
    t.is(await search.countChunks({ document_id: documentId }), 0);
  },
);

test.serial(
  'kbqa doctor finds orphan chunks, orphan contents, documents without a KB and documents missing chunks; --fix mends all four',
  async (t) => {
    const { app, user } = t.context;
    const { store, search } = app.deps;
    const kbOrphans = await createKb(app, user.key, 'doctor orphans');
    const kbGone = await createKb(app, user.key, 'doctor kb gone');

    // 1. Chunks whose document record never got written (a crash between indexing and recording).
    const crashed = await ingest(
      app,
      user.key,
      kbOrphans,
      'crashed.txt',
      'The crashed ingest wrote its chunks about the lighthouse keeper.',
    );
    const mongo = await MongoClient.connect(app.deps.config.mongodb.url);
    try {
      await mongo
        .db()
        .collection('documents')
        .deleteOne({ _id: crashed.id as unknown as never });
      // 2. A stored content whose document record is gone, and no chunks.
      await mongo
        .db()
        .collection('document_contents')
        .insertOne({ _id: randomUUID() as unknown as never, knowledge_base_id: kbOrphans, content: 'stray' });
    } finally {
      await mongo.close();
    }
    // 3. Documents whose chunks are missing: rebuilt from the stored original by --fix.
    const lost = await ingest(
      app,
      user.key,
      kbOrphans,
      'lost.md',
      '# Tides\n\nThe spring tide peaks two days after the full moon.',
    );
    await search.deleteChunksOfDocument(lost.id);
    // 4. A document whose KB record is gone.
    const stranded = await ingest(app, user.key, kbGone, 'stranded.txt', 'Stranded text about the old mill.');
    await store.deleteKnowledgeBaseRecord(kbGone);

    const scope = [kbOrphans, kbGone];
    const report = await runDoctor(app.deps, { knowledgeBaseIds: scope, graceMs: 0 });
    t.false(report.clean);
    t.deepEqual(
      report.orphan_chunks.map((orphan) => orphan.document_id),
      [crashed.id],
    );
    t.is(report.orphan_contents.length, 2, "the crashed document's content and the stray one");
    t.deepEqual(
      report.documents_without_knowledge_base.map((orphan) => orphan.document_id),
      [stranded.id],
    );
    t.deepEqual(report.documents_missing_chunks, [
      { document_id: lost.id, knowledge_base_id: kbOrphans, expected: lost.chunks, indexed: 0 },
    ]);

    // Within the grace period an orphan-looking chunk may be an ingest in flight: not reported.
    const fresh = await runDoctor(app.deps, { knowledgeBaseIds: scope });
    t.deepEqual(fresh.orphan_chunks, []);

    // The CLI, report only: exit 0, the same findings as JSON.
    const { stdout } = await run(
      process.execPath,
      ['bin/kbqa.mjs', 'doctor', '--kb', kbOrphans, '--grace', '0s', '--json'],
      { cwd: ROOT, env: process.env, timeout: 120_000 },
    );
    const cliReport = JSON.parse(stdout.trim().split('\n').at(-1)!);
    t.false(cliReport.clean);
    t.deepEqual(
      cliReport.orphan_chunks.map((orphan: { document_id: string }) => orphan.document_id),
      [crashed.id],
    );

    const rebuild = async (ids: string[]) => {
      const outcome = await reindexDocuments(app.deps, ids);
      return [...outcome.failed, ...outcome.skipped];
    };
    const fixed = await runDoctor(app.deps, { knowledgeBaseIds: scope, graceMs: 0, fix: true, rebuild });
    t.deepEqual(fixed.fixed, {
      chunks_removed_for_documents: 1,
      stale_versions_removed: 0,
      contents_removed: 2,
      documents_removed: 1,
      documents_requeued: 0,
      jobs_removed: 0,
      claim_tokens_removed: 0,
      // The crashed document's record went without its usage, and the stranded one's KB: the owner's record is recounted.
      usage_recounted: 1,
      documents_rebuilt: 1,
      not_rebuildable: [],
      // Conversation leftovers are looked for across the database (operations/conversationDoctor.ts): none here.
      messages_removed: 0,
      conversations_removed: 0,
    });
    const after = await runDoctor(app.deps, { knowledgeBaseIds: scope, graceMs: 0 });
    t.true(after.clean, JSON.stringify(after));
    t.is(
      await search.countChunks({ document_id: lost.id }),
      lost.chunks,
      'the lost chunks were rebuilt from the stored original',
    );
    const answer = await app.call('POST', '/api/v1/query', {
      key: user.key,
      body: { query: 'When does the spring tide peak?', knowledge_base_ids: [kbOrphans] },
    });
    t.is(answer.body.citations[0]?.document_id, lost.id);
  },
);
