// Issue 9: ingestion as a durable job with a status, and the document lifecycle beyond the contract (GET, PUT,
// DELETE, retry). Against the real stack; the API processes of the crash tests are in ingestRecovery.test.ts.
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { prefersRespondAsync } from '../service/http/routes/documents.schema.ts';
import { shareKnowledgeBase } from '../service/commands/accounts.ts';
import { runDoctor } from '../service/operations/doctor.ts';
import { newJob } from '../service/jobs/jobRecord.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { until } from './helpers/apiProcess.ts';
import { startTestApp, testWithApp, type TestApp } from './helpers/app.ts';
import { INGEST_FIELDS, ISO_UTC, LIST_ITEM_FIELDS, createKb, ingest, sortedKeys } from './helpers/documentsApi.ts';

const test = testWithApp<{ owner: TestUser; viewer: TestUser; stranger: TestUser }>({
  env: { KBQA_CHUNK_TOKENS: '256' },
});
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

const DOCUMENT_FIELDS = [
  'chunks',
  'created_at',
  'filename',
  'id',
  'kind',
  'knowledge_base_id',
  'metadata',
  'source',
  'status',
  'title',
  'total_chunks',
  'updated_at',
];
const ASYNC = { prefer: 'respond-async' };

test.before(async (t) => {
  // 256-token chunks: the ledgers here are sized so that their ingestion takes several embedding steps to watch.
  const { store } = t.context.app.deps;
  t.context.owner = await makeUser(store, { label: 'lifecycle-owner' });
  t.context.viewer = await makeUser(store, { label: 'lifecycle-viewer' });
  t.context.stranger = await makeUser(store, { label: 'lifecycle-stranger' });
});

/** Distinct sentences about `topic`: ~90 bytes each, so `count` sets the size (and the number of chunks). */
function ledger(topic: string, count: number): string {
  return Array.from(
    { length: count },
    (_, index) => `Entry ${index} of the ${topic} ledger records crate ${index * 7} bound for pier ${index % 13}.`,
  ).join(' ');
}

/** A KB of the owner's shared with the viewer (sharing is the admin CLI's command in v1). */
async function sharedKb(
  t: { context: { app: TestApp; owner: TestUser; viewer: TestUser } },
  name: string,
): Promise<string> {
  const { app, owner, viewer } = t.context;
  const kb = await createKb(app, owner.key, name);
  await shareKnowledgeBase(app.deps.store, kb, { email: viewer.email }, true);
  return kb;
}

async function getDocument(app: TestApp, key: string, id: string) {
  return app.call('GET', `/api/v1/documents/${id}`, { key });
}

/** Polls GET until the status is one of `until`; returns every body seen. */
async function follow(app: TestApp, key: string, id: string, until: string[], timeoutMs = 120_000) {
  const seen: any[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await getDocument(app, key, id);
    if (response.status !== 200) throw new Error(`GET ${id}: ${response.status} ${JSON.stringify(response.body)}`);
    seen.push(response.body.document);
    if (until.includes(response.body.document.status)) return seen;
    if (Date.now() > deadline) throw new Error(`document ${id} stayed ${response.body.document.status}`);
    await sleep(25);
  }
}

async function listedIds(app: TestApp, key: string, kb: string): Promise<string[]> {
  const response = await app.call('GET', `/api/v1/knowledge-bases/${kb}/documents`, { key });
  return response.body.documents.map((document: { id: string }) => document.id);
}

/** The document versions among a query's chunks of this document (chunk ids are `<document>:<version>:<index>`). */
async function versionsSeen(app: TestApp, key: string, kb: string, documentId: string, question: string) {
  const response = await app.call('POST', '/api/v1/query', {
    key,
    body: { query: question, knowledge_base_ids: [kb], include_chunks: true, max_results: 10 },
  });
  if (response.status !== 200) throw new Error(`query: ${response.status} ${JSON.stringify(response.body)}`);
  const ours = response.body.chunks.filter((chunk: { document_id: string }) => chunk.document_id === documentId);
  return {
    chunks: ours.length,
    versions: new Set<string>(ours.map((chunk: { id: string }) => chunk.id.split(':')[1])),
  };
}

test('Prefer: respond-async is read as RFC 7240 says: any token of a list, case-insensitive, with values and parameters', (t) => {
  t.true(prefersRespondAsync('respond-async'));
  t.true(prefersRespondAsync('Respond-Async'));
  t.true(prefersRespondAsync('wait=10, respond-async'));
  t.true(prefersRespondAsync(['return=minimal', ' respond-async ; foo=bar']));
  t.false(prefersRespondAsync('return=minimal'));
  t.false(prefersRespondAsync('respond-asynchronously'));
  t.false(prefersRespondAsync(undefined));
});

test.serial(
  'Prefer: respond-async → 202 at once; the status moves queued → processing → ready with progress; listed and searchable only when ready',
  async (t) => {
    const { app, owner } = t.context;
    const kb = await createKb(app, owner.key, 'async ingest');
    const content = ledger('walrus', 700);
    const response = await app.call('POST', '/api/v1/documents', {
      key: owner.key,
      headers: ASYNC,
      body: { kb_id: kb, filename: 'walrus.txt', content },
    });
    t.is(response.status, 202, JSON.stringify(response.body));
    t.is(response.headers.get('preference-applied'), 'respond-async');
    const document = response.body.document;
    t.is(response.headers.get('location'), `/api/v1/documents/${document.id}`);
    t.deepEqual(sortedKeys(document), [...DOCUMENT_FIELDS, 'progress'].sort());
    t.is(document.status, 'queued');
    t.is(document.knowledge_base_id, kb);
    t.regex(document.created_at, ISO_UTC);

    // While it is not ready: not listed, and no chunk of it is retrieved.
    const seen: any[] = [];
    let checkedWhileProcessing = false;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const current = (await getDocument(app, owner.key, document.id)).body.document;
      seen.push(current);
      if (current.status === 'ready' || current.status === 'failed' || Date.now() > deadline) break;
      if (current.status === 'processing' && current.progress.embedded > 0 && !checkedWhileProcessing) {
        const listed = (await listedIds(app, owner.key, kb)).includes(document.id);
        const retrieved = await versionsSeen(
          app,
          owner.key,
          kb,
          document.id,
          'Which pier is crate 70 of the walrus ledger bound for?',
        );
        // Only a check that began and ended while it was processing counts: it may have gone ready in between.
        if ((await getDocument(app, owner.key, document.id)).body.document.status === 'processing') {
          checkedWhileProcessing = true;
          t.false(listed, 'not listed while processing');
          t.is(retrieved.chunks, 0, 'no chunk of a document that is not ready is retrieved');
        }
      }
      await sleep(25);
    }
    const statuses = seen.map((body) => body.status).filter((status, index, all) => status !== all[index - 1]);
    t.deepEqual(statuses, statuses[0] === 'queued' ? ['queued', 'processing', 'ready'] : ['processing', 'ready']);
    t.true(checkedWhileProcessing, 'observed it processing with progress');
    const progress = seen.filter((body) => body.status === 'processing').map((body) => body.progress);
    const total = progress.at(-1).total;
    t.true(total > 1);
    t.true(
      progress.every((step, index) => step.embedded >= (progress[index - 1]?.embedded ?? 0)),
      'progress never goes back',
    );
    t.true(
      progress.some((step) => step.embedded > 0 && step.embedded < total),
      'progress was seen part-way',
    );

    const ready = seen.at(-1);
    t.deepEqual(sortedKeys(ready), DOCUMENT_FIELDS, 'no progress or error once ready');
    t.is(ready.chunks, total);
    t.true(Date.parse(ready.updated_at) >= Date.parse(ready.created_at));
    t.true((await listedIds(app, owner.key, kb)).includes(document.id));
    await app.deps.search.refreshChunks();
    t.is(await app.deps.search.countChunks({ document_id: document.id }), ready.chunks);
    const retrieved = await versionsSeen(
      app,
      owner.key,
      kb,
      document.id,
      'Which pier is crate 70 of the walrus ledger bound for?',
    );
    t.true(retrieved.chunks > 0);
    t.true((await runDoctor(app.deps, { knowledgeBaseIds: [kb], graceMs: 0 })).clean);
  },
);

test.serial(
  'without Prefer the contract holds: 201 with chunks once searchable; the list keeps exactly its fields',
  async (t) => {
    const { app, owner } = t.context;
    const kb = await createKb(app, owner.key, 'sync ingest');
    const response = await app.call('POST', '/api/v1/documents', {
      key: owner.key,
      headers: { prefer: 'return=minimal' },
      body: {
        kb_id: kb,
        filename: 'otters.md',
        content: '# Otters\n\nSea otters hold hands while they sleep so they do not drift apart.',
      },
    });
    t.is(response.status, 201);
    t.is(response.headers.get('preference-applied'), null);
    t.deepEqual(sortedKeys(response.body.document), INGEST_FIELDS);
    const listed = await app.call('GET', `/api/v1/knowledge-bases/${kb}/documents`, { key: owner.key });
    t.deepEqual(listed.body.documents.map(sortedKeys), [LIST_ITEM_FIELDS]);
    const got = await getDocument(app, owner.key, response.body.document.id);
    t.is(got.body.document.status, 'ready');
    t.is(got.body.document.chunks, response.body.document.chunks);
  },
);

test.serial(
  'a document with nothing to index fails: status failed with the reason, nothing searchable, not listed; retry fails the same way',
  async (t) => {
    const { app, owner } = t.context;
    const kb = await createKb(app, owner.key, 'failing ingest');
    const response = await app.call('POST', '/api/v1/documents', {
      key: owner.key,
      headers: ASYNC,
      body: { kb_id: kb, filename: 'marks.txt', content: '!!! ??? ... --- ***' },
    });
    t.is(response.status, 202);
    const id = response.body.document.id;
    const failed = (await follow(app, owner.key, id, ['ready', 'failed'])).at(-1);
    t.is(failed.status, 'failed');
    t.is(failed.error, 'content: has no text to index (no letters or digits)');
    t.deepEqual(sortedKeys(failed), [...DOCUMENT_FIELDS, 'error'].sort());
    t.is(await app.deps.search.countChunks({ document_id: id }), 0);
    t.deepEqual(await listedIds(app, owner.key, kb), []);
    const kbs = await app.call('GET', '/api/v1/knowledge-bases', { key: owner.key });
    t.is(
      kbs.body.knowledge_bases.find((item: { id: string }) => item.id === kb).document_count,
      0,
      'the count is of listed documents',
    );

    const retried = await app.call('POST', `/api/v1/documents/${id}/retry`, { key: owner.key, headers: ASYNC });
    t.is(retried.status, 202);
    t.is((await follow(app, owner.key, id, ['ready', 'failed'])).at(-1).status, 'failed');
    // Without Prefer a failing ingest is all-or-nothing, as in v1: 400 and no document at all.
    const sync = await app.call('POST', '/api/v1/documents', {
      key: owner.key,
      body: { kb_id: kb, filename: 'marks.txt', content: '!!! ???' },
    });
    t.is(sync.status, 400);
    t.deepEqual(sync.body, {
      error: { code: 'bad_request', message: 'content: has no text to index (no letters or digits)' },
    });
    const ready = await app.call('POST', `/api/v1/documents/${id}/retry`, { key: owner.key });
    t.is(ready.status, 400, 'a retry that waits answers the failure itself');
    t.true((await runDoctor(app.deps, { knowledgeBaseIds: [kb], graceMs: 0 })).clean);
  },
);

test.serial(
  'an outage that outlasts the attempts fails the document with an actionable error; retry after recovery makes it ready',
  async (t) => {
    const { owner } = t.context;
    const app = await startTestApp({ KBQA_INGEST_MAX_ATTEMPTS: '1' });
    try {
      const kb = await createKb(app, owner.key, 'embedder outage');
      const models = app.deps.rag.models;
      const original = models.embedPassages;
      models.embedPassages = async () => {
        throw new Error('injected: the model worker died');
      };
      let id: string;
      try {
        const response = await app.call('POST', '/api/v1/documents', {
          key: owner.key,
          headers: ASYNC,
          body: { kb_id: kb, filename: 'gulls.txt', content: ledger('gull', 40) },
        });
        id = response.body.document.id;
        const failed = (await follow(app, owner.key, id, ['ready', 'failed'])).at(-1);
        t.is(failed.status, 'failed');
        t.is(failed.error, `the embedder is unavailable; retry the document (POST /api/v1/documents/${id}/retry)`);
        t.false(failed.error.includes('injected'), 'the internal reason stays in the log');
        t.is(await app.deps.search.countChunks({ document_id: id }), 0);
      } finally {
        models.embedPassages = original;
      }
      const retried = await app.call('POST', `/api/v1/documents/${id}/retry`, { key: owner.key });
      t.is(retried.status, 201, JSON.stringify(retried.body));
      t.deepEqual(sortedKeys(retried.body.document), INGEST_FIELDS);
      t.is((await getDocument(app, owner.key, id)).body.document.status, 'ready');
      t.deepEqual(await listedIds(app, owner.key, kb), [id]);
      const again = await app.call('POST', `/api/v1/documents/${id}/retry`, { key: owner.key });
      t.is(again.status, 409, 'only a failed document is retried');
      t.is(again.body.error.code, 'conflict');
    } finally {
      await app.close();
    }
  },
);

test.serial(
  "GET: any role that reaches the KB; 404 for others and for unknown ids; PUT and DELETE are the owner's (403 for a viewer)",
  async (t) => {
    const { app, owner, viewer, stranger } = t.context;
    const kb = await sharedKb(t, 'roles');
    const document = await ingest(
      app,
      owner.key,
      kb,
      'puffins.md',
      '# Puffins\n\nPuffins carry a dozen fish crosswise in their beaks.',
    );
    t.is((await getDocument(app, owner.key, document.id)).status, 200);
    t.is((await getDocument(app, viewer.key, document.id)).status, 200);
    const hidden = await getDocument(app, stranger.key, document.id);
    t.deepEqual(hidden.body, { error: { code: 'not_found', message: `document ${document.id} not found` } });
    t.is(hidden.status, 404);
    t.is((await getDocument(app, owner.key, '00000000-0000-4000-8000-000000000000')).status, 404);
    for (const [method, path, body] of [
      ['PUT', `/api/v1/documents/${document.id}`, { content: 'Puffins nest in burrows.' }],
      ['DELETE', `/api/v1/documents/${document.id}`, undefined],
      ['POST', `/api/v1/documents/${document.id}/retry`, undefined],
    ] as const) {
      const asViewer = await app.call(method, path, { key: viewer.key, body });
      t.is(asViewer.status, 403, `${method} ${path} as a viewer`);
      t.is(asViewer.body.error.code, 'forbidden');
      t.is((await app.call(method, path, { key: stranger.key, body })).status, 404, `${method} ${path} as a stranger`);
    }
    t.is((await getDocument(app, owner.key, document.id)).body.document.filename, 'puffins.md', 'nothing changed');
  },
);

test.serial(
  'PUT validates like POST: 400 for bad content or filename, 409 while an ingestion is in flight',
  async (t) => {
    const { app, owner } = t.context;
    const kb = await createKb(app, owner.key, 'put validation');
    const document = await ingest(app, owner.key, kb, 'terns.txt', 'Arctic terns fly from pole to pole every year.');
    const path = `/api/v1/documents/${document.id}`;
    for (const body of [
      {},
      { content: '' },
      { content: 'x', filename: 'a/b.txt' },
      { content: 'x', filename: 'paper.pdf' },
      { content: 'x\u0000' },
    ]) {
      const response = await app.call('PUT', path, { key: owner.key, body });
      t.is(response.status, 400, JSON.stringify(body));
      t.is(response.body.error.code, 'bad_request');
    }
    const queued = await app.call('PUT', path, {
      key: owner.key,
      headers: ASYNC,
      body: { content: ledger('tern', 300) },
    });
    t.is(queued.status, 202);
    t.is(queued.body.document.status, 'queued');
    const conflict = await app.call('PUT', path, { key: owner.key, body: { content: 'Terns again.' } });
    t.is(conflict.status, 409);
    t.is(conflict.body.error.code, 'conflict');
    t.is((await follow(app, owner.key, document.id, ['ready', 'failed'])).at(-1).status, 'ready');
  },
);

test.serial(
  'PUT swaps versions: a query loop sees the old version, then the new one, never both and never neither',
  async (t) => {
    const { app, owner } = t.context;
    const kb = await createKb(app, owner.key, 'swap');
    const question = 'Which pier is crate 140 of the heron ledger bound for?';
    const first = await ingest(app, owner.key, kb, 'heron.txt', ledger('heron', 300));
    let stop = false;
    const observations: Array<{ chunks: number; versions: string[] }> = [];
    const loop = (async () => {
      while (!stop) {
        const seen = await versionsSeen(app, owner.key, kb, first.id, question);
        observations.push({ chunks: seen.chunks, versions: [...seen.versions] });
      }
    })();
    await sleep(300);
    const replaced = await app.call('PUT', `/api/v1/documents/${first.id}`, {
      key: owner.key,
      body: { filename: 'heron-v2.txt', content: ledger('heron', 420) },
    });
    t.is(replaced.status, 201, JSON.stringify(replaced.body));
    t.deepEqual(sortedKeys(replaced.body.document), INGEST_FIELDS);
    t.is(replaced.body.document.id, first.id);
    t.is(replaced.body.document.filename, 'heron-v2.txt');
    // Keep querying across the retirement of the old version (its chunks go a moment after the swap).
    while ((await app.deps.store.findJob(first.id)) !== null) await sleep(100);
    await sleep(300);
    stop = true;
    await loop;

    t.true(observations.length >= 10, `${observations.length} queries`);
    for (const [index, observation] of observations.entries()) {
      t.true(observation.chunks > 0, `query ${index} saw no chunk of the document`);
      t.is(observation.versions.length, 1, `query ${index} saw versions ${observation.versions.join(', ')}`);
    }
    const order = observations
      .map((observation) => observation.versions[0])
      .filter((version, index, all) => version !== all[index - 1]);
    t.deepEqual(order, ['1', '2'], 'the old version until the swap, the new one after');

    const got = (await getDocument(app, owner.key, first.id)).body.document;
    t.is(got.status, 'ready');
    t.is(got.filename, 'heron-v2.txt');
    t.is(got.title, 'heron-v2');
    t.is(got.chunks, replaced.body.document.chunks);
    t.true(got.chunks > first.chunks);
    await app.deps.search.refreshChunks();
    t.is(
      await app.deps.search.countChunks({ document_id: first.id }),
      got.chunks,
      "only the new version's chunks remain",
    );
    t.is(await app.deps.store.findDocumentContent(first.id), ledger('heron', 420), 'the stored text is the new one');
    t.deepEqual(await listedIds(app, owner.key, kb), [first.id]);
    t.true((await runDoctor(app.deps, { knowledgeBaseIds: [kb], graceMs: 0 })).clean);
  },
);

test.serial('a failed replacement keeps the old version live and listed; the document shows the failure', async (t) => {
  const { app, owner } = t.context;
  const kb = await createKb(app, owner.key, 'failed replacement');
  const first = await ingest(app, owner.key, kb, 'cranes.md', '# Cranes\n\nCranes dance in pairs before they mate.');
  const response = await app.call('PUT', `/api/v1/documents/${first.id}`, {
    key: owner.key,
    headers: ASYNC,
    body: { content: '*** ---' },
  });
  t.is(response.status, 202);
  const failed = (await follow(app, owner.key, first.id, ['ready', 'failed'])).at(-1);
  t.is(failed.status, 'failed');
  t.is(failed.filename, 'cranes.md');
  t.is(failed.chunks, first.chunks);
  t.deepEqual(
    await listedIds(app, owner.key, kb),
    [first.id],
    'still listed: its old version is what retrieval serves',
  );
  t.is((await versionsSeen(app, owner.key, kb, first.id, 'What do cranes do before they mate?')).chunks, first.chunks);
  t.true((await runDoctor(app.deps, { knowledgeBaseIds: [kb], graceMs: 0 })).clean);
});

test.serial(
  'DELETE removes the record, the stored text and every chunk, also while the document is still ingesting',
  async (t) => {
    const { app, owner } = t.context;
    const kb = await createKb(app, owner.key, 'delete');
    const ready = await ingest(app, owner.key, kb, 'ibis.txt', ledger('ibis', 60));
    const ingesting = await app.call('POST', '/api/v1/documents', {
      key: owner.key,
      headers: ASYNC,
      body: { kb_id: kb, filename: 'egret.txt', content: ledger('egret', 600) },
    });
    await follow(app, owner.key, ingesting.body.document.id, ['processing', 'ready']);
    for (const id of [ready.id, ingesting.body.document.id]) {
      const deleted = await app.call('DELETE', `/api/v1/documents/${id}`, { key: owner.key });
      t.is(deleted.status, 200);
      t.deepEqual(deleted.body, { deleted: true });
      t.is((await getDocument(app, owner.key, id)).status, 404);
      t.is(
        (await app.call('DELETE', `/api/v1/documents/${id}`, { key: owner.key })).status,
        404,
        'a second delete finds nothing',
      );
    }
    // The ingesting one stops at its next step and removes what it wrote meanwhile. A step embeds up to 8 segments with
    // their sentence vectors, seconds on a loaded machine: this waits for that (at most 60 s), not a fixed time.
    const chunksLeft = async () => {
      await app.deps.search.refreshChunks();
      return app.deps.search.countChunks({ knowledge_base_id: kb });
    };
    const ingestingId = ingesting.body.document.id as string;
    await until(
      'the deleted ingestion to stop and remove its chunks',
      60_000,
      async () => (await chunksLeft()) === 0 && (await app.deps.store.findJob(ingestingId)) === null,
    );
    t.is(await chunksLeft(), 0, 'no chunk');
    t.deepEqual(await app.deps.store.listDocumentContentIds(kb), [], 'no stored text');
    t.is(await app.deps.store.findJob(ingesting.body.document.id), null, 'no job');
    t.deepEqual(await listedIds(app, owner.key, kb), []);
    t.true((await runDoctor(app.deps, { knowledgeBaseIds: [kb], graceMs: 0 })).clean);
  },
);

test.serial(
  "kbqa docs reindex rebuilds a KB's documents as jobs from their stored text, under the same ids",
  async (t) => {
    const { app, owner } = t.context;
    const kb = await createKb(app, owner.key, 'reindex');
    const documents = [
      await ingest(app, owner.key, kb, 'storks.md', '# Storks\n\nWhite storks return to the same nest every spring.'),
      await ingest(app, owner.key, kb, 'owls.txt', 'Barn owls hunt by sound alone in complete darkness.'),
    ];
    const { stdout, stderr } = await run(process.execPath, ['bin/kbqa.mjs', 'docs', 'reindex', '--kb', kb, '--json'], {
      cwd: ROOT,
      env: process.env,
      timeout: 180_000,
    });
    const outcome = JSON.parse(stdout.trim().split('\n').at(-1)!);
    t.deepEqual(
      { ...outcome, rebuilt: outcome.rebuilt.sort() },
      { rebuilt: documents.map((document) => document.id).sort(), skipped: [], failed: [] },
    );
    t.true(stderr.includes('reindex: 2/2'), stderr);
    for (const document of documents) {
      const got = (await getDocument(app, owner.key, document.id)).body.document;
      t.is(got.status, 'ready');
      t.is(got.chunks, document.chunks);
      t.is(await app.deps.search.countChunks({ document_id: document.id, document_version: 2 }), document.chunks);
      t.is(await app.deps.search.countChunks({ document_id: document.id }), document.chunks, 'version 1 is gone');
    }
    t.true((await runDoctor(app.deps, { knowledgeBaseIds: [kb], graceMs: 0 })).clean);
    const usage = await run(process.execPath, ['bin/kbqa.mjs', 'docs', 'reindex'], {
      cwd: ROOT,
      env: process.env,
    }).catch((error: { code: number; stderr: string }) => error);
    t.is((usage as { code: number }).code, 2);
  },
);

test("the main thread never loads ONNX Runtime: every inference runs in the model pool's worker threads", async (t) => {
  // A fresh process loads the service's RAG module, embeds and answers, then lists the CommonJS modules it loaded
  // (ONNX Runtime's Node binding is one). Importing the embedder module afterwards must show it, or the check is void.
  const script = `
    import { createRequire } from 'node:module';
    const { loadConfig } = await import(${JSON.stringify(new URL('../service/config.ts', import.meta.url).href)});
    const { loadRag } = await import(${JSON.stringify(new URL('../service/rag/index.ts', import.meta.url).href)});
    const rag = await loadRag(loadConfig());
    await rag.embedQuestion('hello');
    await rag.embedSegments('t', [{ text: 'a passage', heading_path: [] }]);
    const loaded = () => Object.keys(createRequire(import.meta.url).cache).filter((path) => path.includes('onnxruntime')).length;
    const before = loaded();
    await import(${JSON.stringify(new URL('../service/rag/bgeEmbeddings.ts', import.meta.url).href)});
    console.log(JSON.stringify({ before, after: loaded(), workers: rag.models.workers }));
    await rag.close();
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: process.env,
    timeout: 120_000,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  t.is(result.before, 0, 'ONNX Runtime was not loaded on the main thread');
  t.true(result.after > 0, 'the check does see ONNX Runtime once the main thread loads it');
  t.true(result.workers >= 1);
});

test.serial(
  'over a thousand ingestions in flight in one KB: a query still answers, all their versions excluded in one clause',
  async (t) => {
    const { app, owner } = t.context;
    const kb = await createKb(app, owner.key, 'many in flight');
    const visible = await ingest(
      app,
      owner.key,
      kb,
      'kites.md',
      '# Kites\n\nBox kites fly steadily in strong, gusty wind.',
    );
    const now = Date.now();
    // More than OpenSearch's 1,024-clause limit, had each hidden version been a clause of its own. Jobs held far into
    // the future by a holder that does not exist: nobody runs them; they only hide their versions. One insertMany
    // (a thousand single inserts would keep FerretDB busy for seconds).
    const jobs = Array.from({ length: 1100 }, (_, index) =>
      newJob(
        { _id: `in-flight-${now}-${index}`, knowledge_base_id: kb },
        { version: 1, content_id: 'none', filename: 'x.txt', title: 'x', replaces: null },
        'async',
        'nobody',
        3_600_000,
      ),
    );
    const mongo = await MongoClient.connect(app.deps.config.mongodb.url);
    try {
      await mongo
        .db()
        .collection('ingest_jobs')
        .insertMany(jobs as never[]);
      t.is((await app.deps.store.listHiddenChunkVersions([kb])).length, 1100);
      const response = await app.call('POST', '/api/v1/query', {
        key: owner.key,
        body: { query: 'How do box kites fly?', knowledge_base_ids: [kb], include_chunks: true },
      });
      t.is(response.status, 200, JSON.stringify(response.body));
      t.is(response.body.citations[0]?.document_id, visible.id);
    } finally {
      await app.deps.store.deleteJobsOfKnowledgeBase(kb);
      await mongo.close();
    }
  },
);
