// Issue 13, backup and restore: `kbqa backup create` → wipe → `kbqa backup restore` → ask, into an EMPTY stack of
// this file's own (a scratch OpenSearch node with its own port, data and path.repo under a temporary directory, and
// the harness's database of the file's own on the running FerretDB), so the shared stack's data is never touched.
// The second test makes the two halves of a backup disagree, as writes during a backup do, and shows restore
// reconciles them.
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ExecutionContext } from 'ava';
import { createApiKey, revokeApiKey } from '../service/commands/apiKeys.ts';
import { createBackup } from '../service/operations/backup/create.ts';
import type { BackupManifest, RestoreDeps, RestoreSummary } from '../service/operations/backup/manifest.ts';
import { restoreBackup } from '../service/operations/backup/restore.ts';
import { verifyBackup } from '../service/operations/backup/verify.ts';
import { runDoctor } from '../service/operations/doctor.ts';
import { migrateIndex } from '../service/operations/indexMigration/migrate.ts';
import { loadConfig, type Config } from '../service/config.ts';
import { BackupError } from '../service/errors.ts';
import { BGE_SMALL_EN } from '../service/rag/embedderIdentity.ts';
import { loadSearchAssets } from '../service/search/assets.ts';
import { openConfiguredSearchIndex } from '../service/search/index.ts';
import { BACKUP_COLLECTIONS, openStore } from '../service/store/index.ts';
import { stackPathsFor, type StackPaths } from '../stack/provision.ts';
import { portAnswers, startOpenSearchNode, stopOpenSearchNode, TRANSPORT_PORT_OFFSET } from '../stack/processes.ts';
import { makeUser, makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { textPdf } from './fixtures/pdfs.ts';
import { startTestApp, testWithDatabase, type TestApp } from './helpers/app.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';
import { dropDatabase, WebClient } from './helpers/webClient.ts';

interface Context {
  /** The scratch stack's settings, for the app and the kbqa command alike. */
  env: Record<string, string>;
  config: Config;
  paths: StackPaths;
  tempDir: string;
}

const test = testWithDatabase<Context>();
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The repository's current template version (the highest file): what a fresh stack's index is built from. */
const CURRENT = loadSearchAssets().version;
const run = promisify(execFile);

/** An HTTP port for the scratch node whose transport port (HTTP + 100) is free too. */
async function freeOpenSearchPort(): Promise<number> {
  for (let port = 9290; port < 9300; port += 1) {
    if (!(await portAnswers('127.0.0.1', port)) && !(await portAnswers('127.0.0.1', port + TRANSPORT_PORT_OFFSET)))
      return port;
  }
  throw new Error('no free port for a scratch OpenSearch node in 9290-9299 (and +100)');
}

test.before(async (t) => {
  const tempDir = mkdtempSync(join(tmpdir(), 'kbqa-backup-test-'));
  // OpenSearch runs as its own user when the tests run as root: it must reach its directories under this one.
  chmodSync(tempDir, 0o755);
  t.context.tempDir = tempDir;
  const port = await freeOpenSearchPort();
  t.context.env = {
    KBQA_OPENSEARCH_URL: `http://127.0.0.1:${port}`,
    KBQA_OPENSEARCH_NODES: '1',
    KBQA_OPENSEARCH_HEAP: '512m',
    KBQA_CHUNKS_SHARDS: '1',
    KBQA_CHUNKS_REPLICAS: '0',
    KBQA_CHUNKS_ALIAS: 'kbqa-chunks',
    KBQA_STACK_DATA_DIR: join(tempDir, 'stack'),
    KBQA_OPENSEARCH_SNAPSHOT_DIR: join(tempDir, 'stack', 'snapshots'),
    KBQA_MONGODB_URL: t.context.databaseUrl,
  };
  t.context.config = loadConfig({ ...process.env, ...t.context.env });
  t.context.paths = stackPathsFor(t.context.config);
  await startOpenSearchNode(t.context.config, t.context.paths, 1);
});

test.after.always(async (t) => {
  const { config, paths, tempDir } = t.context;
  if (config && paths) await stopOpenSearchNode(config, paths, 1).catch(() => undefined);
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
});

/** The kbqa command against the scratch stack: its exit code, stdout and stderr (never throws on a failure exit). */
async function kbqa(
  t: ExecutionContext<Context>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return kbqaWith(t.context.env, ...args);
}

async function kbqaWith(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['bin/kbqa.mjs', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      timeout: 400_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

const lastJsonLine = (stdout: string): any => JSON.parse(stdout.trim().split('\n').at(-1)!);

/** A request to the scratch node, failing loudly on anything but the accepted statuses. */
async function opensearch(
  t: ExecutionContext<Context>,
  method: string,
  path: string,
  accept: number[] = [200],
): Promise<any> {
  const response = await fetch(`${t.context.env.KBQA_OPENSEARCH_URL}${path}`, {
    method,
    signal: AbortSignal.timeout(30_000),
  });
  const body = await response.json().catch(() => null);
  if (!accept.includes(response.status))
    throw new Error(`${method} ${path} → ${response.status} ${JSON.stringify(body)}`);
  return body;
}

/**
 * Back to an empty stack: the database dropped; every index, index template, ingest and search pipeline and
 * snapshot repository deleted from the scratch node, and the snapshot directory emptied.
 */
async function wipe(t: ExecutionContext<Context>): Promise<void> {
  await dropDatabase(t.context.env.KBQA_MONGODB_URL);
  const indices = (await opensearch(t, 'GET', '/_cat/indices?format=json&h=index&expand_wildcards=all')) as Array<{
    index: string;
  }>;
  for (const { index } of indices)
    if (!index.startsWith('.')) await opensearch(t, 'DELETE', `/${encodeURIComponent(index)}`);
  const templates = (await opensearch(t, 'GET', '/_index_template')) as { index_templates: Array<{ name: string }> };
  for (const { name } of templates.index_templates) await opensearch(t, 'DELETE', `/_index_template/${name}`);
  for (const name of Object.keys((await opensearch(t, 'GET', '/_ingest/pipeline', [200, 404])) ?? {}))
    await opensearch(t, 'DELETE', `/_ingest/pipeline/${name}`);
  for (const name of Object.keys((await opensearch(t, 'GET', '/_search/pipeline', [200, 404])) ?? {}))
    await opensearch(t, 'DELETE', `/_search/pipeline/${name}`);
  for (const name of Object.keys(await opensearch(t, 'GET', '/_snapshot')))
    await opensearch(t, 'DELETE', `/_snapshot/${name}`);
  const snapshotDir = t.context.config.opensearch.snapshotDir;
  for (const entry of readdirSync(snapshotDir)) rmSync(join(snapshotDir, entry), { recursive: true, force: true });
  t.is(
    (await opensearch(t, 'GET', '/_cat/indices?format=json&h=index')).filter(
      (row: { index: string }) => !row.index.startsWith('.'),
    ).length,
    0,
  );
  t.is((await opensearch(t, 'GET', '/_alias/kbqa-chunks', [404])).status, 404, 'no chunk alias after the wipe');
}

/** A question about one document's own sentence: answered from it, citing it. */
async function assertAnswers(
  t: ExecutionContext<Context>,
  app: TestApp,
  key: string,
  kbId: string,
  documentId: string,
  question: string,
  expected: RegExp,
) {
  const response = await app.call('POST', '/api/v1/query', {
    key,
    body: { query: question, knowledge_base_ids: [kbId] },
  });
  t.is(response.status, 200, JSON.stringify(response.body));
  const cited = (response.body.citations as Array<{ document_id: string }>).map((citation) => citation.document_id);
  t.true(cited.includes(documentId), `${question} cites ${documentId}: ${JSON.stringify(response.body.citations)}`);
  t.regex(response.body.answer as string, expected, question);
}

/** Ids of a KB's live documents, through the API. */
async function listedIds(app: TestApp, key: string, kbId: string): Promise<string[]> {
  const response = await app.call('GET', `/api/v1/knowledge-bases/${kbId}/documents?limit=100`, { key });
  if (response.status !== 200) throw new Error(`listing ${kbId}: ${response.status} ${JSON.stringify(response.body)}`);
  return (response.body.documents as Array<{ id: string }>).map((document) => document.id).sort();
}

/** A document uploaded through the web app (PDFs come only that way) has finished ingesting. */
async function settled(browser: WebClient, documentId: string): Promise<{ status: string }> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const { body } = await browser.call('GET', `/api/web/documents/${documentId}`);
    if (body.document.status === 'ready' || body.document.status === 'failed') return body.document;
    if (Date.now() > deadline)
      throw new Error(`document ${documentId} did not settle: ${JSON.stringify(body.document)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const mode = (path: string) => statSync(path).mode & 0o777;

const SENTENCES = {
  lighthouse: {
    filename: 'lighthouse.md',
    content:
      "# Keeper's log\n\nThe Varrow Point lighthouse keeper winds the clockwork lens every four hours through the night.",
    question: 'How often does the Varrow Point lighthouse keeper wind the clockwork lens?',
    expected: /four hours/,
  },
  bakery: {
    filename: 'bakery.txt',
    content: 'The Quillan Street bakery proofs its rye dough for eleven hours in a cold cellar below the shop.',
    question: 'How long does the Quillan Street bakery proof its rye dough?',
    expected: /eleven hours/,
  },
  orchard: {
    filename: 'orchard.md',
    content: '# Grafting\n\nThe Tamsworth orchard grafts its pear saplings onto quince rootstock every March.',
    question: 'What rootstock does the Tamsworth orchard graft its pear saplings onto?',
    expected: /quince/,
  },
  ferry: {
    filename: 'ferry.pdf',
    content: 'The Ostrel ferry crosses the fjord at dawn carrying exactly forty bicycles and one mail sack.',
    question: 'How many bicycles does the Ostrel ferry carry across the fjord?',
    expected: /forty bicycles/,
  },
};

test.serial(
  'kbqa backup create → wipe → kbqa backup restore: every document listed under its id and answerable, the key and password work, the PDF intact',
  async (t) => {
    const { env } = t.context;
    const backupDir = join(t.context.tempDir, 'backups', 'first');
    const app = await startTestApp(env);
    let sourceChunks: number;
    let owner: Awaited<ReturnType<typeof makeWebUser>> & { key: string };
    let revokedKey: string;
    const ids: Record<keyof typeof SENTENCES, string> = { lighthouse: '', bakery: '', orchard: '', ferry: '' };
    let kitchenKb: string;
    let pdfBytes: Uint8Array;
    let conversationId = '';
    let conversationBefore: unknown;
    try {
      const webUser = await makeWebUser(app.deps.store, { label: 'backup' });
      owner = { ...webUser, key: (await createApiKey(app.deps.store, webUser.email, 'kept')).key };
      const revoked = await createApiKey(app.deps.store, webUser.email, 'revoked');
      await revokeApiKey(app.deps.store, revoked.record.id);
      revokedKey = revoked.key;
      kitchenKb = await createKb(app, owner.key, 'kitchen');
      for (const name of ['lighthouse', 'orchard'] as const) {
        ids[name] = (
          await ingest(app, owner.key, owner.defaultKnowledgeBaseId, SENTENCES[name].filename, SENTENCES[name].content)
        ).id;
      }
      ids.bakery = (await ingest(app, owner.key, kitchenKb, SENTENCES.bakery.filename, SENTENCES.bakery.content)).id;
      // The PDF: its original in GridFS, its text extracted by a job (a web session, which the backup leaves out).
      pdfBytes = await textPdf([[SENTENCES.ferry.content]]);
      const browser = new WebClient(app.baseUrl);
      await browser.signIn(owner.email, TEST_PASSWORD);
      const form = new FormData();
      form.append('file', new Blob([Buffer.from(pdfBytes)], { type: 'application/pdf' }), SENTENCES.ferry.filename);
      const uploaded = await fetch(`${app.baseUrl}/api/web/knowledge-bases/${owner.defaultKnowledgeBaseId}/uploads`, {
        method: 'POST',
        headers: { cookie: browser.cookie ?? '', 'x-csrf-token': browser.csrfToken ?? '' },
        body: form,
      });
      t.is(uploaded.status, 202);
      ids.ferry = ((await uploaded.json()) as { document: { id: string } }).document.id;
      t.is((await settled(browser, ids.ferry)).status, 'ready');
      sourceChunks = await app.deps.search.countChunks();
      t.true(sourceChunks >= 4);
      // A conversation with a rated answer: its messages and the feedback are records to keep.
      const started = await app.call('POST', '/api/v1/conversations', { key: owner.key, body: {} });
      conversationId = started.body.conversation.id;
      const turn = await app.call('POST', `/api/v1/conversations/${conversationId}/messages`, {
        key: owner.key,
        body: { query: SENTENCES.bakery.question },
      });
      t.is(turn.status, 200, JSON.stringify(turn.body));
      const rated = await app.call(
        'PUT',
        `/api/v1/conversations/${conversationId}/messages/${turn.body.message.id}/feedback`,
        {
          key: owner.key,
          body: { rating: 'down', comment: 'kept by the backup' },
        },
      );
      t.is(rated.status, 200);
      conversationBefore = (await app.call('GET', `/api/v1/conversations/${conversationId}`, { key: owner.key })).body;
    } finally {
      await app.close();
    }

    const created = await kbqa(t, 'backup', 'create', backupDir, '--json');
    t.is(created.code, 0, created.stderr);
    const manifest = lastJsonLine(created.stdout) as BackupManifest;
    t.is(manifest.format, 'kbqa-backup');
    t.deepEqual(manifest.opensearch.indices, [`kbqa-chunks-v${CURRENT}-bge-small-en-v1.5`]);
    t.is(manifest.opensearch.embedder.name, 'bge-small-en-v1.5');
    const collections = new Map<string, BackupManifest['mongo']['collections'][number]>(
      manifest.mongo.collections.map((collection) => [collection.name, collection]),
    );
    t.is(collections.get('documents')?.documents, 4);
    t.is(collections.get('users')?.documents, 1);
    t.is(collections.get('api_keys')?.documents, 2);
    t.is(collections.get('document_files.files')?.documents, 1, 'the PDF original');
    t.true((collections.get('document_files.chunks')?.documents ?? 0) >= 1);
    t.is(collections.get('conversations')?.documents, 1);
    t.is(collections.get('conversation_messages')?.documents, 2);
    t.false(collections.has('sessions'), 'web sessions are left out');
    t.true(manifest.mongo.skipped.includes('sessions'));
    t.true(
      Date.parse(manifest.opensearch.finished_at) <= Date.parse(manifest.mongo.started_at),
      'the snapshot, then the records',
    );
    // The export holds password hashes and key digests: the directory and every file are the owner's only.
    t.is(mode(backupDir), 0o700);
    t.is(mode(join(backupDir, 'manifest.json')), 0o600);
    for (const file of [...manifest.opensearch.files, ...manifest.mongo.collections])
      t.is(mode(join(backupDir, file.path)), 0o600, file.path);
    t.true(manifest.opensearch.files.length > 0);
    // The snapshot repository was only the way into DIR: nothing of it is left in the snapshot directory.
    t.deepEqual(readdirSync(t.context.config.opensearch.snapshotDir), []);

    const again = await kbqa(t, 'backup', 'create', backupDir);
    t.is(again.code, 1);
    t.regex(again.stderr, /is not empty: a backup goes into a new or empty directory/);

    await wipe(t);

    // A damaged copy is refused before anything is written.
    const damagedDir = join(t.context.tempDir, 'backups', 'damaged');
    cpSync(backupDir, damagedDir, { recursive: true });
    const usersFile = join(damagedDir, collections.get('users')!.path);
    writeFileSync(usersFile, readFileSync(usersFile, 'utf8').replace('"email":"', '"email":"x'));
    const refused = await kbqa(t, 'backup', 'restore', damagedDir);
    t.is(refused.code, 1);
    t.regex(
      refused.stderr,
      /is damaged \(nothing was restored\): mongo\/users\.jsonl: (its SHA-256 differs|\d+ bytes)/,
    );

    const restored = await kbqa(t, 'backup', 'restore', backupDir, '--json');
    t.is(restored.code, 0, restored.stderr);
    const summary = lastJsonLine(restored.stdout) as RestoreSummary;
    t.like(summary, {
      documents: 4,
      knowledge_bases: 2,
      users: 1,
      documents_rebuilt: 0,
      chunks_removed: 0,
      documents_with_chunks_removed: 0,
      consistent: true,
      remaining: null,
    });
    t.is(summary.chunks_restored, sourceChunks!);
    t.is(summary.chunks, sourceChunks!);
    t.is(summary.collections.documents, 4);

    // A second restore onto the restored stack is refused: it is not empty.
    const onto = await kbqa(t, 'backup', 'restore', backupDir);
    t.is(onto.code, 1);
    t.regex(
      onto.stderr,
      /the target is not empty \(MongoDB database kbqa_backup_\w+ holds records in .*users.*; OpenSearch index kbqa-chunks-v\d+-bge-small-en-v1\.5 holds \d+ chunk\(s\)\)/,
    );

    const restoredApp = await startTestApp(env);
    try {
      t.deepEqual(
        await listedIds(restoredApp, owner!.key, owner!.defaultKnowledgeBaseId),
        [ids.lighthouse, ids.orchard, ids.ferry].sort(),
      );
      t.deepEqual(await listedIds(restoredApp, owner!.key, kitchenKb!), [ids.bakery]);
      for (const name of Object.keys(SENTENCES) as Array<keyof typeof SENTENCES>) {
        const kb = name === 'bakery' ? kitchenKb! : owner!.defaultKnowledgeBaseId;
        await assertAnswers(
          t,
          restoredApp,
          owner!.key,
          kb,
          ids[name],
          SENTENCES[name].question,
          SENTENCES[name].expected,
        );
      }
      t.is(
        (await restoredApp.call('GET', '/api/v1/knowledge-bases', { key: revokedKey! })).status,
        401,
        'a revoked key stays revoked',
      );
      // The password (its hash came back) signs in; the PDF's original comes back byte for byte.
      const browser = new WebClient(restoredApp.baseUrl);
      await browser.signIn(owner!.email, TEST_PASSWORD);
      const file = await fetch(`${restoredApp.baseUrl}/api/web/documents/${ids.ferry}/file`, {
        headers: { cookie: browser.cookie ?? '' },
      });
      t.is(file.status, 200);
      t.deepEqual(Buffer.from(await file.arrayBuffer()), Buffer.from(pdfBytes!));
      t.true((await runDoctor(restoredApp.deps, { graceMs: 0 })).clean);
      // The conversation, its messages and the feedback came back as they were, and it goes on.
      const conversation = await restoredApp.call('GET', `/api/v1/conversations/${conversationId}`, {
        key: owner!.key,
      });
      t.deepEqual(conversation.body, conversationBefore);
      t.like(conversation.body.conversation.messages[1].feedback, { rating: 'down', comment: 'kept by the backup' });
      const next = await restoredApp.call('POST', `/api/v1/conversations/${conversationId}/messages`, {
        key: owner!.key,
        body: { query: 'And in what kind of room?' },
      });
      t.is(next.status, 200, JSON.stringify(next.body));
    } finally {
      await restoredApp.close();
    }
  },
);

/** A manifest edited to reach outside kbqa's data is refused by the check, before anything is written. */
async function refusesCraftedManifests(t: ExecutionContext<Context>, backupDir: string): Promise<void> {
  const manifest = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8')) as BackupManifest;
  const crafted = [
    {
      change: (m: any) => (m.opensearch.indices = ['customer-orders']),
      refused: /opensearch\.indices\.0: not a kbqa chunk index/,
    },
    { change: (m: any) => (m.mongo.collections[0].name = 'sessions'), refused: /mongo\.collections\.0\.name/ },
    { change: (m: any) => m.mongo.collections.push(m.mongo.collections[0]), refused: /a collection is listed twice/ },
    // Checked on the normalized path, which is the one a restore would copy from.
    {
      change: (m: any) => (m.opensearch.files[0].path = `opensearch/../${m.mongo.collections[0].path}`),
      refused:
        /is damaged \(nothing was restored\): opensearch\/\.\.\/mongo\/\S+: not a path inside the backup's opensearch\//,
    },
  ];
  for (const [n, { change, refused }] of crafted.entries()) {
    const dir = join(t.context.tempDir, 'backups', `crafted-${n}`);
    cpSync(backupDir, dir, { recursive: true });
    const edited = structuredClone(manifest);
    change(edited);
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(edited));
    const error = await t.throwsAsync(verifyBackup(dir), { instanceOf: BackupError });
    t.regex(error?.message ?? '', refused);
  }
  // A path with ./ in it is used as it was checked: normalized.
  const dotted = join(t.context.tempDir, 'backups', 'dotted');
  cpSync(backupDir, dotted, { recursive: true });
  const edited = structuredClone(manifest);
  edited.opensearch.files[0].path = edited.opensearch.files[0].path.replace('opensearch/', 'opensearch/./');
  writeFileSync(join(dotted, 'manifest.json'), JSON.stringify(edited));
  t.is((await verifyBackup(dotted)).opensearch.files[0].path, manifest.opensearch.files[0].path);
}

/**
 * A restore refuses while an API answers at the configured address, and one failing after the records are
 * imported and the chunk index restored undoes all of it: the target is as it was (an API started once on it: an
 * empty chunk index) and the restore can run again.
 */
async function failedRestoreLeavesNothing(t: ExecutionContext<Context>, backupDir: string): Promise<void> {
  const { config } = t.context;
  const store = await openStore(config.mongodb.url, config.mongodb.timeoutMs);
  const search = openConfiguredSearchIndex(config, BGE_SMALL_EN);
  const api = createServer((request, response) =>
    response.end(JSON.stringify(request.url === '/healthz' ? { status: 'ok' } : {})),
  );
  try {
    const { index } = await search.applyAssets();
    const deps: RestoreDeps = {
      store,
      search,
      config,
      embedder: BGE_SMALL_EN,
      documentDeps: () => Promise.reject(new Error('not reached')),
    };
    const target = async () => ({
      records: await store.nonEmptyCollections([...BACKUP_COLLECTIONS]),
      indices: (
        (await opensearch(t, 'GET', '/_cat/indices?format=json&h=index,docs.count')) as Array<{
          index: string;
          'docs.count': string;
        }>
      )
        .filter((row) => !row.index.startsWith('.'))
        .map((row) => `${row.index}:${row['docs.count']}`),
      repositories: Object.keys(await opensearch(t, 'GET', '/_snapshot')),
      snapshotDir: readdirSync(config.opensearch.snapshotDir),
    });
    const before = await target();
    t.deepEqual(before, { records: [], indices: [`${index}:0`], repositories: [], snapshotDir: [] });

    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const live = { ...config, host: '127.0.0.1', port: (api.address() as AddressInfo).port };
    const refused = await t.throwsAsync(restoreBackup({ ...deps, config: live }, backupDir), {
      instanceOf: BackupError,
    });
    t.regex(refused?.message ?? '', /a kbqa API answers at http:\/\/127\.0\.0\.1:\d+\/healthz: stop every API process/);
    t.deepEqual(await target(), before, 'refused before writing anything');

    let held: number[] = [];
    const failed = await t.throwsAsync(
      restoreBackup(deps, backupDir, {
        afterChunkRestore: async () => {
          t.true((await search.countChunks()) > 0, 'the chunks were restored before the failure');
          held = (await store.listJobs()).map((job) => job.not_before);
          throw new Error('injected failure');
        },
      }),
      { instanceOf: BackupError },
    );
    t.regex(failed?.message ?? '', /^the restore failed: injected failure\. Nothing of the backup was left behind/);
    // Imported jobs wait for the restore's release: an API running meanwhile could not take them.
    t.true(
      held.every((notBefore) => notBefore === Number.MAX_SAFE_INTEGER),
      JSON.stringify(held),
    );
    t.deepEqual(await target(), before, 'the target is as it was');
  } finally {
    api.close();
    await Promise.allSettled([store.close(), search.close()]);
  }
}

test.serial(
  'halves from different instants: restore rebuilds the chunks the snapshot missed and removes those no record claims',
  async (t) => {
    const { env } = t.context;
    await wipe(t);
    const backupDir = join(t.context.tempDir, 'backups', 'skewed');
    const app = await startTestApp(env);
    const user = await makeUser(app.deps.store, { label: 'skew' });
    const kb = user.defaultKnowledgeBaseId;
    let kept: string;
    let deleted: string;
    let replaced: string;
    let late: string;
    let deletedChunks: number;
    try {
      kept = (
        await ingest(
          app,
          user.key,
          kb,
          'kept.md',
          'The Harrowgate choir rehearses its winter carols in the old tram depot.',
        )
      ).id;
      const deletedDocument = await ingest(
        app,
        user.key,
        kb,
        'deleted.txt',
        'The Penwick quarry ships its slate north on flat barges each Tuesday.',
      );
      deleted = deletedDocument.id;
      deletedChunks = deletedDocument.chunks;
      replaced = (
        await ingest(app, user.key, kb, 'replaced.md', 'The Lorn Valley dairy churns its butter by hand on Fridays.')
      ).id;
      const manifest = await createBackup(
        { store: app.deps.store, search: app.deps.search, config: app.deps.config, embedder: app.deps.rag.embedder },
        backupDir,
        {
          // Between the snapshot and the records export, as live writes would: one document replaced, one new, one gone.
          afterSnapshot: async () => {
            const put = await app.call('PUT', `/api/v1/documents/${replaced}`, {
              key: user.key,
              body: { content: 'The Lorn Valley dairy now churns its butter with a water wheel on Mondays.' },
            });
            t.is(put.status, 201, JSON.stringify(put.body));
            late = (
              await ingest(
                app,
                user.key,
                kb,
                'late.md',
                'The Brisk Hollow observatory opens its dome to visitors on moonless nights.',
              )
            ).id;
            t.is((await app.call('DELETE', `/api/v1/documents/${deleted}`, { key: user.key })).status, 200);
          },
        },
      );
      t.is(manifest.mongo.collections.find((collection) => collection.name === 'documents')?.documents, 3);
    } finally {
      await app.close();
    }

    await wipe(t);
    await refusesCraftedManifests(t, backupDir);
    await failedRestoreLeavesNothing(t, backupDir);
    const restored = await kbqa(t, 'backup', 'restore', backupDir, '--json');
    t.is(restored.code, 0, restored.stderr);
    const summary = lastJsonLine(restored.stdout) as RestoreSummary;
    t.is(summary.documents, 3);
    t.true(summary.consistent, summary.remaining ?? '');
    // The late document and the replacement's new version were not in the snapshot: rebuilt from the stored texts.
    t.is(summary.documents_rebuilt, 2, JSON.stringify(summary));
    // The deleted document's chunks were: removed (the replaced version's too, by its retire job or the reconcile).
    t.is(summary.documents_with_chunks_removed, 1);
    t.true(summary.chunks_removed >= deletedChunks!);

    const restoredApp = await startTestApp(env);
    try {
      t.deepEqual(await listedIds(restoredApp, user.key, kb), [kept!, replaced!, late!].sort());
      await assertAnswers(
        t,
        restoredApp,
        user.key,
        kb,
        kept!,
        'Where does the Harrowgate choir rehearse its winter carols?',
        /tram depot/,
      );
      await assertAnswers(
        t,
        restoredApp,
        user.key,
        kb,
        late!,
        'When does the Brisk Hollow observatory open its dome to visitors?',
        /moonless nights/,
      );
      await assertAnswers(
        t,
        restoredApp,
        user.key,
        kb,
        replaced!,
        'How does the Lorn Valley dairy churn its butter?',
        /water wheel/,
      );
      const { search, store } = restoredApp.deps;
      t.is(await search.countChunks({ document_id: deleted! }), 0, 'no chunk of the deleted document');
      const replacedRecord = await store.findDocument(replaced!);
      t.is(
        await search.countChunks({ document_id: replaced! }),
        replacedRecord!.chunks,
        'only the live version of the replaced document',
      );
      const search2 = await restoredApp.call('POST', '/api/v1/query', {
        key: user.key,
        body: {
          query: 'Which day does the Lorn Valley dairy churn butter by hand?',
          knowledge_base_ids: [kb],
          include_chunks: true,
        },
      });
      t.false(
        (search2.body.chunks as Array<{ text: string }>).some((chunk) => chunk.text.includes('by hand on Fridays')),
        'the replaced text is gone',
      );
      t.true((await runDoctor(restoredApp.deps, { graceMs: 0 })).clean);
    } finally {
      await restoredApp.close();
    }
    t.deepEqual(readdirSync(t.context.config.opensearch.snapshotDir), [], 'no restore repository left behind');
  },
);

test.serial(
  'a backup after a migration: the live v2 index (not the kept v1) is snapshotted, restored behind the alias, and answers',
  async (t) => {
    await wipe(t);
    // The asset files of this test: the current version first (named v1 here), then the next (v2: the same analysis, so
    // the migration copies by _reindex).
    const assetsDir = join(t.context.tempDir, 'assets');
    for (const folder of ['index-templates', 'ingest-pipelines', 'search-pipelines'])
      cpSync(join(ROOT, folder), join(assetsDir, folder), { recursive: true });
    const env = { ...t.context.env, KBQA_SEARCH_ASSETS_DIR: assetsDir };
    const v1 = `kbqa-chunks-v${CURRENT}-bge-small-en-v1.5`;
    const v2 = `kbqa-chunks-v${CURRENT + 1}-bge-small-en-v1.5`;
    const backupDir = join(t.context.tempDir, 'backups', 'migrated');
    let app = await startTestApp(env);
    let user: Awaited<ReturnType<typeof makeUser>>;
    let documentId: string;
    try {
      user = await makeUser(app.deps.store, { label: 'migrated' });
      documentId = (
        await ingest(app, user.key, user.defaultKnowledgeBaseId, SENTENCES.orchard.filename, SENTENCES.orchard.content)
      ).id;
    } finally {
      await app.close();
    }
    const template = JSON.parse(
      readFileSync(join(assetsDir, 'index-templates', `kbqa-chunks.v${CURRENT}.json`), 'utf8'),
    );
    writeFileSync(
      join(assetsDir, 'index-templates', `kbqa-chunks.v${CURRENT + 1}.json`),
      JSON.stringify({ ...template, version: CURRENT + 1 }),
    );
    app = await startTestApp(env);
    try {
      const migrated = await migrateIndex(
        { store: app.deps.store, search: app.deps.search, rag: app.deps.rag, config: app.deps.config },
        { catchUpDelayMs: 2_500 },
      );
      t.like(migrated, { outcome: 'migrated', from: v1, to: v2 });
    } finally {
      await app.close();
    }

    const created = await kbqaWith(env, 'backup', 'create', backupDir, '--json');
    t.is(created.code, 0, created.stderr);
    const manifest = lastJsonLine(created.stdout) as BackupManifest;
    t.deepEqual(manifest.opensearch.indices, [v2], 'only the index the alias points to');
    t.deepEqual(manifest.opensearch.left_out, [v1], 'the kept one is named as left out');
    t.is(manifest.opensearch.index_template, `kbqa-chunks-v${CURRENT + 1}`);
    t.true(created.stderr.includes(`not in the backup: ${v1} (kept beside the alias by a migration`), created.stderr);

    await wipe(t);
    const restored = await kbqaWith(env, 'backup', 'restore', backupDir, '--json');
    t.is(restored.code, 0, restored.stderr);
    t.like(lastJsonLine(restored.stdout) as RestoreSummary, { documents: 1, documents_rebuilt: 0, consistent: true });
    t.deepEqual(
      Object.keys(await opensearch(t, 'GET', '/_alias/kbqa-chunks')),
      [v2],
      'the alias came back with its index',
    );

    const restoredApp = await startTestApp(env);
    try {
      await assertAnswers(
        t,
        restoredApp,
        user!.key,
        user!.defaultKnowledgeBaseId,
        documentId!,
        SENTENCES.orchard.question,
        SENTENCES.orchard.expected,
      );
      t.deepEqual((await restoredApp.deps.search.searchIndexDetail()).drift, [], 'v2 is what the files say');
      t.true((await runDoctor(restoredApp.deps, { graceMs: 0 })).clean);
    } finally {
      await restoredApp.close();
    }
  },
);
