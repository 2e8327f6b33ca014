// Per-user quotas (issue 22, item 7): documents waiting for ingestion (429 with Retry-After), stored documents and
// bytes (413 naming the limit and the usage), kept in a usage record by user id; and failed uploads' originals
// removed after KBQA_FAILED_UPLOAD_RETENTION_DAYS. A database of this file's own: the retention sweep is global.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { IngestRunner } from '../service/jobs/runner.ts';
import { purgeFailedUploads, recountUsage } from '../service/commands/quotas.ts';
import type { Config } from '../service/config.ts';
import { makeUser, makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { serveVariant, testWithApp, type TestApp } from './helpers/app.ts';
import { callJson } from './helpers/http.ts';
import { WebClient } from './helpers/webClient.ts';
import { corruptPdf } from './fixtures/pdfs.ts';

interface Context {
  app: TestApp;
  databaseUrl: string;
}

const test = testWithApp<Omit<Context, 'app'>>();
const ROOT = fileURLToPath(new URL('..', import.meta.url));

type Quotas = Config['quotas'];

/** The app with other quotas, and optionally a job runner that never runs (so queued documents stay queued). */
async function withQuotas(app: TestApp, quotas: Partial<Quotas>, options: { idle?: boolean } = {}) {
  const jobs = options.idle ? new IngestRunner(app.deps, { claims: 'own' }) : app.deps.jobs;
  const served = await serveVariant({ ...app.deps, jobs }, (config) => ({
    ...config,
    quotas: { ...config.quotas, ...quotas },
  }));
  return {
    call: (method: string, path: string, body: unknown, key: string, headers: Record<string, string> = {}) =>
      callJson(served.baseUrl, method, path, { key, body, headers }),
    close: () => served.close(),
  };
}

const text = (bytes: number) => `# Notes\n\n${'a'.repeat(bytes - 9)}`;

test('beyond KBQA_MAX_QUEUED_DOCUMENTS_PER_USER waiting documents: 429 with Retry-After; other users are not held back', async (t) => {
  const { app } = t.context;
  const [user, other] = [await makeUser(app.deps.store), await makeUser(app.deps.store)];
  const api = await withQuotas(app, { maxQueuedDocuments: 2 }, { idle: true });
  const async = { prefer: 'respond-async' };
  try {
    const post = (who: typeof user, name: string) =>
      api.call(
        'POST',
        '/api/v1/documents',
        { kb_id: who.defaultKnowledgeBaseId, filename: name, content: `# ${name}\n\nSome text.` },
        who.key,
        async,
      );
    const queued = [await post(user, 'one.md'), await post(user, 'two.md')];
    t.deepEqual(
      queued.map((answer) => answer.status),
      [202, 202],
    );
    const third = await post(user, 'three.md');
    t.is(third.status, 429);
    t.is(third.body.error.code, 'rate_limited');
    t.regex(
      third.body.error.message,
      /^2 documents of yours are waiting for ingestion \(the limit is 2\); retry in \d+ s$/,
    );
    t.true(Number(third.headers.get('retry-after')) >= 1);
    t.is((await post(other, 'theirs.md')).status, 202, 'another user has a queue of their own');

    // One leaves the queue (deleted): one more fits.
    t.is(
      (await api.call('DELETE', `/api/v1/documents/${queued[0].body.document.id}`, undefined, user.key)).status,
      200,
    );
    t.is((await post(user, 'three.md')).status, 202);
  } finally {
    await api.close();
  }
});

test('beyond KBQA_MAX_DOCUMENTS_PER_USER: 413 naming the limit and the usage; a deletion makes room', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const api = await withQuotas(app, { maxDocuments: 2 });
  try {
    const post = (name: string) =>
      api.call(
        'POST',
        '/api/v1/documents',
        { kb_id: user.defaultKnowledgeBaseId, filename: name, content: `# ${name}\n\nSome text.` },
        user.key,
      );
    const first = await post('one.md');
    t.is(first.status, 201);
    t.is((await post('two.md')).status, 201);
    const third = await post('three.md');
    t.is(third.status, 413);
    t.is(third.body.error.code, 'payload_too_large');
    t.is(third.body.error.message, 'document quota reached: 2 of 2 documents stored; delete some first');
    t.is((await api.call('DELETE', `/api/v1/documents/${first.body.document.id}`, undefined, user.key)).status, 200);
    t.is((await post('three.md')).status, 201);
    t.like(await app.deps.store.findUsage(user.id), { documents: 2 });
  } finally {
    await api.close();
  }
});

test('beyond KBQA_MAX_STORAGE_BYTES_PER_USER: 413 naming the bytes, for a new document and a larger replacement', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const api = await withQuotas(app, { maxStorageBytes: 1_000 });
  try {
    const kb = user.defaultKnowledgeBaseId;
    const first = await api.call(
      'POST',
      '/api/v1/documents',
      { kb_id: kb, filename: 'a.md', content: text(600) },
      user.key,
    );
    t.is(first.status, 201);
    const second = await api.call(
      'POST',
      '/api/v1/documents',
      { kb_id: kb, filename: 'b.md', content: text(600) },
      user.key,
    );
    t.is(second.status, 413);
    t.is(
      second.body.error.message,
      'storage quota exceeded: this needs 600 more bytes, 600 of 1000 bytes are in use; delete some documents first',
    );
    // A replacement is charged what it adds: 900 fits where 600 were, 1,100 does not.
    t.is(
      (await api.call('PUT', `/api/v1/documents/${first.body.document.id}`, { content: text(900) }, user.key)).status,
      201,
    );
    const larger = await api.call(
      'PUT',
      `/api/v1/documents/${first.body.document.id}`,
      { content: text(1_100) },
      user.key,
    );
    t.is(larger.status, 413);
    t.is(
      larger.body.error.message,
      'storage quota exceeded: this needs 200 more bytes, 900 of 1000 bytes are in use; delete some documents first',
    );
    t.like(await app.deps.store.findUsage(user.id), { documents: 1, bytes: 900 });
    t.is((await api.call('DELETE', `/api/v1/documents/${first.body.document.id}`, undefined, user.key)).status, 200);
    t.like(await app.deps.store.findUsage(user.id), { documents: 0, bytes: 0 });
  } finally {
    await api.close();
  }
});

test('concurrent ingestions never take the usage past the quota, and a recount agrees with the record', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const api = await withQuotas(app, { maxDocuments: 3 });
  try {
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_unused, index) =>
        api.call(
          'POST',
          '/api/v1/documents',
          { kb_id: user.defaultKnowledgeBaseId, filename: `n${index}.md`, content: `# N${index}\n\nText.` },
          user.key,
        ),
      ),
    );
    t.deepEqual(answers.map((answer) => answer.status).sort(), [201, 201, 201, 413, 413, 413, 413, 413]);
    const recorded = await app.deps.store.findUsage(user.id);
    t.like(recorded, { documents: 3 });
    t.deepEqual(await recountUsage(app.deps.store, user.id), {
      documents: recorded?.documents,
      bytes: recorded?.bytes,
    });
  } finally {
    await api.close();
  }
});

test('drift is repaired by `kbqa users recount-usage`: the record is set from the documents again', async (t) => {
  const { app, databaseUrl } = t.context;
  const user = await makeUser(app.deps.store);
  const api = await withQuotas(app, {});
  try {
    t.is(
      (
        await api.call(
          'POST',
          '/api/v1/documents',
          { kb_id: user.defaultKnowledgeBaseId, filename: 'kept.md', content: text(100) },
          user.key,
        )
      ).status,
      201,
    );
  } finally {
    await api.close();
  }
  // A lost update (a process dying between writes, or two FerretDB writers at once) leaves the record wrong.
  await app.deps.store.releaseUsage(user.id, { documents: 5, bytes: 5_000 });
  t.like(await app.deps.store.findUsage(user.id), { documents: -4, bytes: -4_900 });
  const cli = promisify(execFile);
  const env = { ...process.env, KBQA_MONGODB_URL: databaseUrl, KBQA_LOG_LEVEL: 'silent' };
  const { stdout } = await cli(
    process.execPath,
    ['bin/kbqa.mjs', 'users', 'recount-usage', '--email', user.email, '--json'],
    { cwd: ROOT, env },
  );
  t.deepEqual(JSON.parse(stdout), { user_id: user.id, documents: 1, bytes: 100 });
  t.like(await app.deps.store.findUsage(user.id), { documents: 1, bytes: 100 });
});

test("a failed upload's original is removed after KBQA_FAILED_UPLOAD_RETENTION_DAYS, with its document and usage", async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const browser = new WebClient(app.baseUrl);
  await browser.signIn(user.email, TEST_PASSWORD);
  const form = new FormData();
  form.append('file', new Blob([Buffer.from(corruptPdf())], { type: 'application/pdf' }), 'broken.pdf');
  const uploaded = await fetch(`${app.baseUrl}/api/web/knowledge-bases/${user.defaultKnowledgeBaseId}/uploads`, {
    method: 'POST',
    headers: { cookie: browser.cookie ?? '', 'x-csrf-token': browser.csrfToken ?? '' },
    body: form,
  });
  t.is(uploaded.status, 202);
  const documentId: string = (await uploaded.json()).document.id;
  let document = (await browser.call('GET', `/api/web/documents/${documentId}`)).body.document;
  for (let attempt = 0; attempt < 600 && document.status !== 'failed'; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    document = (await browser.call('GET', `/api/web/documents/${documentId}`)).body.document;
  }
  t.is(document.status, 'failed');
  const fileId = (await app.deps.store.findDocument(documentId))?.file_id as string;
  t.truthy(await app.deps.store.findFile(fileId));
  t.like(await app.deps.store.findUsage(user.id), { documents: 1, bytes: corruptPdf().length });

  const retentionMs = 3_600_000;
  t.deepEqual(await purgeFailedUploads(app.deps.store, retentionMs), [], 'within the retention it stays');
  t.truthy(await app.deps.store.findFile(fileId));

  const later = new Date(Date.now() + retentionMs + 60_000);
  t.deepEqual(await purgeFailedUploads(app.deps.store, retentionMs, later), [documentId]);
  t.is(await app.deps.store.findFile(fileId), null, 'the original is gone');
  t.is((await browser.call('GET', `/api/web/documents/${documentId}`)).status, 404);
  t.like(await app.deps.store.findUsage(user.id), { documents: 0, bytes: 0 });
});
