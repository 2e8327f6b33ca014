// Durable ingestion across real process deaths: an API process SIGKILLed in the middle of an async ingest, one
// SIGTERMed in the middle of a long one (it gives the job back at once), and one SIGTERMed with a short one in
// hand (it finishes it first). The API processes are real `node service/main.ts` children (helpers/apiProcess.ts);
// an in-process app is the witness of what was stored (store, chunk index, doctor) and makes the user.
//
// The children claim every claimable job in their database, as a deployed instance does: the file's own (the
// harness's). The chunk index is shared; every check here is scoped to this file's documents and KBs, and each test
// deletes its KB permanently when it ends.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ExecutionContext } from 'ava';
import { runDoctor } from '../service/operations/doctor.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { startApiProcess, type ApiProcess, type ProcessExit } from './helpers/apiProcess.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { createKb } from './helpers/documentsApi.ts';

interface Context {
  app: TestApp;
  user: TestUser;
  /** Every child started, killed in `after.always`. */
  processes: ApiProcess[];
  /** The file's database (the harness's): the children's too. */
  databaseUrl: string;
}

const test = testWithApp<Omit<Context, 'app'>>({
  beforeClose: async (t) => {
    await Promise.allSettled((t.context.processes ?? []).map((child) => child.kill()));
  },
});

/** What every child runs with: short leases and polls, so a dead holder's job is taken again within seconds. */
const CHILD_ENV = { KBQA_JOB_LEASE_MS: '2000', KBQA_JOB_POLL_MS: '200' };

test.before(async (t) => {
  t.context.processes = [];
  t.context.user = await makeUser(t.context.app.deps.store, { label: 'recovery' });
});

async function spawnApi(t: ExecutionContext<Context>, env: Record<string, string> = {}): Promise<ApiProcess> {
  const child = await startApiProcess({ KBQA_MONGODB_URL: t.context.databaseUrl, ...CHILD_ENV, ...env });
  t.context.processes.push(child);
  // Gone before the next test starts: a process left running would claim that test's jobs.
  t.teardown(async () => {
    await child.kill();
  });
  return child;
}

/**
 * A KB deleted permanently once the test ends (teardowns run last-registered first: after the test's processes are
 * killed), with its documents, chunks and any job a failed test left, which the next test's processes would take.
 */
async function newKb(t: ExecutionContext<Context>, name: string): Promise<string> {
  const { app, user } = t.context;
  const kb = await createKb(app, user.key, name);
  t.teardown(async () => {
    const deleted = await app.call('DELETE', `/api/v1/knowledge-bases/${kb}?permanent=true`, { key: user.key });
    if (deleted.status !== 200)
      throw new Error(`could not delete KB ${kb}: ${deleted.status} ${JSON.stringify(deleted.body)}`);
  });
  return kb;
}

/**
 * A paragraph no other text here resembles, long enough to be a chunk of its own (a single sentence inside a chunk
 * of ledger lines falls under the relevance floor): the question below retrieves it, and only it.
 */
const FACT = [
  'The lighthouse at Corrin Point was repainted vermilion in 1987 by its keeper, Maud Elsworth.',
  'Before 1987 the Corrin Point lighthouse had been white with a black lantern gallery.',
  'Maud Elsworth chose vermilion so that fishing boats could see the Corrin Point tower against the snow of the headland.',
  'The repainting of the lighthouse took her the whole summer of 1987, one band of the tower each week.',
].join(' ');
const QUESTION = 'What colour was the Corrin Point lighthouse repainted in 1987?';

/**
 * ~250 KB of distinct ledger sentences (about 300 chunks: a minute of embedding on a 2-core machine, several
 * seconds on a big one), with FACT near the end, where the process killed mid-way had not got to.
 */
function bigText(seed: string, sentences = 3000): string {
  const lines = Array.from(
    { length: sentences },
    (_, index) => `Sentence ${index} of the ${seed} ledger records shipment ${index * 7} to depot ${index % 13}.`,
  );
  const at = Math.floor(sentences * 0.95);
  return `${lines.slice(0, at).join(' ')}\n\n${FACT}\n\n${lines.slice(at).join(' ')}`;
}

interface DocumentView {
  id: string;
  knowledge_base_id: string;
  status: 'queued' | 'processing' | 'ready' | 'failed';
  chunks: number;
  total_chunks: number;
  progress?: { embedded: number; total: number };
  error?: string;
}

async function ingestAsync(
  api: ApiProcess,
  key: string,
  kb: string,
  filename: string,
  content: string,
): Promise<DocumentView> {
  const response = await api.call('POST', '/api/v1/documents', {
    key,
    headers: { prefer: 'respond-async' },
    body: { kb_id: kb, filename, content },
  });
  if (response.status !== 202)
    throw new Error(`async ingest of ${filename}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.document as DocumentView;
}

async function readDocument(api: ApiProcess, key: string, id: string): Promise<DocumentView> {
  const response = await api.call('GET', `/api/v1/documents/${id}`, { key });
  if (response.status !== 200)
    throw new Error(`GET document ${id}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.document as DocumentView;
}

/** Polls GET through `api` until `until(document)`; a document that ends (ready, failed) first is an error. */
async function pollDocument(
  api: ApiProcess,
  key: string,
  id: string,
  until: (document: DocumentView) => boolean,
  timeoutMs: number,
  onEach?: () => Promise<void>,
): Promise<DocumentView> {
  const deadline = Date.now() + timeoutMs;
  let last: DocumentView | undefined;
  while (Date.now() < deadline) {
    await onEach?.();
    last = await readDocument(api, key, id);
    if (until(last)) return last;
    if (last.status === 'ready' || last.status === 'failed')
      throw new Error(`document ${id} ended before the awaited state: ${JSON.stringify(last)}`);
    await sleep(100);
  }
  throw new Error(
    `document ${id} did not reach the awaited state within ${timeoutMs / 1000} s; last: ${JSON.stringify(last)}\n${api.tail()}`,
  );
}

const midIngest = (document: DocumentView) =>
  document.status === 'processing' &&
  document.progress !== undefined &&
  document.progress.embedded > 0 &&
  document.progress.embedded < document.progress.total;

/** The process's exit, or null if it did not exit within `timeoutMs`. */
async function exitWithin(api: ApiProcess, timeoutMs: number): Promise<ProcessExit | null> {
  return Promise.race([api.exited, sleep(timeoutMs).then(() => null)]);
}

/** Indexed chunks of the document, every one of them searchable (a refresh first). */
async function indexedChunks(app: TestApp, id: string, version?: number): Promise<number> {
  await app.deps.search.refreshChunks();
  return app.deps.search.countChunks(
    version === undefined ? { document_id: id } : { document_id: id, document_version: version },
  );
}

/** A ready document as the API shows it, the chunk index agrees exactly, no job is left, the doctor finds nothing. */
async function assertFinished(
  t: ExecutionContext<Context>,
  document: DocumentView,
  kb: string,
  expectedChunks: number,
) {
  const { app } = t.context;
  t.is(document.status, 'ready', JSON.stringify(document));
  t.is(document.progress, undefined, 'no progress once ready');
  t.is(document.error, undefined, 'no error');
  t.is(document.chunks, expectedChunks, 'as many chunks as the split made (the total the progress showed)');
  t.true(document.total_chunks >= document.chunks, `total_chunks ${document.total_chunks} ≥ chunks ${document.chunks}`);
  t.is(
    await indexedChunks(app, document.id),
    document.chunks,
    "the index holds exactly the document's chunks: none twice, none missing",
  );
  t.is(await indexedChunks(app, document.id, 1), document.chunks, 'all of them of version 1');
  t.is(await app.deps.store.findJob(document.id), null, 'the job record is gone');
  const report = await runDoctor(app.deps, { knowledgeBaseIds: [kb], graceMs: 0 });
  t.true(report.clean, JSON.stringify(report));
}

/** The unique sentence is found, from the document, and cited. */
async function assertAnswersFrom(t: ExecutionContext<Context>, api: ApiProcess, kb: string, id: string) {
  const answer = await api.call('POST', '/api/v1/query', {
    key: t.context.user.key,
    body: { query: QUESTION, knowledge_base_ids: [kb], include_chunks: true },
  });
  t.is(answer.status, 200, JSON.stringify(answer.body));
  const chunks = answer.body.chunks as Array<{ document_id: string; text: string }>;
  t.true(
    chunks.some((chunk) => chunk.document_id === id && chunk.text.includes('repainted vermilion in 1987')),
    'the chunk with the fact is retrieved',
  );
  t.true(
    (answer.body.citations as Array<{ document_id: string }>).some((citation) => citation.document_id === id),
    JSON.stringify(answer.body.citations),
  );
}

/**
 * Polls the document through `api` until ready, reading the job record meanwhile: the highest attempt count seen, and
 * when `api` was first seen holding the job.
 */
async function followToReady(t: ExecutionContext<Context>, api: ApiProcess, id: string, timeoutMs: number) {
  const { app, user } = t.context;
  let attempts = 0;
  let claimedAt: number | null = null;
  const document = await pollDocument(
    api,
    user.key,
    id,
    (current) => current.status === 'ready',
    timeoutMs,
    async () => {
      const job = await app.deps.store.findJob(id);
      if (!job) return;
      attempts = Math.max(attempts, job.attempts);
      if (claimedAt === null && job.lease_owner?.includes(`:${api.pid}:`)) claimedAt = Date.now();
    },
  );
  return { document, attempts, claimedAt, readyAt: Date.now() };
}

test.serial(
  'an API process SIGKILLed mid-ingest: another process finishes the document, exactly its chunks, the doctor finds nothing',
  async (t) => {
    const { app, user } = t.context;
    const kb = await newKb(t, 'sigkill recovery');
    const a = await spawnApi(t);
    const queued = await ingestAsync(a, user.key, kb, 'ledger.txt', bigText(`kill-${randomUUID().slice(0, 8)}`));
    t.is(queued.status, 'queued');
    const id = queued.id;
    const began = Date.now();

    const midway = await pollDocument(a, user.key, id, midIngest, 60_000);
    const held = await app.deps.store.findJob(id);
    t.true(held?.lease_owner?.includes(`:${a.pid}:`), `A holds the job: ${JSON.stringify(held)}`);
    const killed = await a.kill();
    t.is(killed.signal, 'SIGKILL');
    const killedAfterMs = Date.now() - began;

    const total = midway.progress!.total;
    const left = await app.deps.store.findDocument(id);
    t.not(left?.status, 'ready', 'not ready when A died');
    const job = await app.deps.store.findJob(id);
    t.truthy(job, 'the job record outlives its process');
    t.is(job?.attempts, 1);
    t.true(job?.lease_owner?.includes(`:${a.pid}:`), 'still leased to the dead process (until the lease lapses)');
    const partial = await indexedChunks(app, id);
    t.true(partial > 0 && partial < total, `A had indexed part of the document: ${partial} of ${total} chunks`);

    const bStarted = Date.now();
    const b = await spawnApi(t);
    const { document, attempts, claimedAt, readyAt } = await followToReady(t, b, id, 120_000);
    t.true(attempts >= 2, `the job was attempted again (attempts seen: ${attempts})`);
    t.not(claimedAt, null, 'B held the job');
    t.log(
      `A killed ${(killedAfterMs / 1000).toFixed(1)} s into the ingest at ${midway.progress!.embedded}/${total} embedded (${partial} chunks indexed); ` +
        `B held it ${(((claimedAt ?? readyAt) - bStarted) / 1000).toFixed(1)} s after its spawn (start-up, lease lapse), then ready in ${((readyAt - (claimedAt ?? readyAt)) / 1000).toFixed(1)} s`,
    );

    await assertFinished(t, document, kb, total);
    await assertAnswersFrom(t, b, kb, id);
  },
);

test.serial(
  'an API process SIGTERMed mid-ingest gives the job back and exits promptly; another process finishes it',
  async (t) => {
    const { app, user } = t.context;
    const kb = await newKb(t, 'sigterm release');
    const a = await spawnApi(t, { KBQA_SHUTDOWN_GRACE_MS: '500' });
    const { id } = await ingestAsync(a, user.key, kb, 'ledger.txt', bigText(`term-${randomUUID().slice(0, 8)}`));
    const began = Date.now();
    const midway = await pollDocument(a, user.key, id, midIngest, 60_000);

    const signalled = Date.now();
    a.signal('SIGTERM');
    const exit = await exitWithin(a, 15_000);
    t.truthy(exit, `A exits within 15 s of SIGTERM:\n${a.tail()}`);
    if (!exit) return;
    const exitMs = exit.at - signalled;
    t.is(exit.code, 0, a.tail());
    t.is(exit.signal, null);

    const job = await app.deps.store.findJob(id);
    t.truthy(job, 'the job record is kept for another process');
    t.is(job?.lease_owner, null, 'the lease was released, not left to lapse');
    t.is(job?.lease_until, null);
    t.is(job?.attempts, 1);
    const left = await app.deps.store.findDocument(id);
    t.not(left?.status, 'ready', 'A did not finish the ingest before exiting');

    const bStarted = Date.now();
    const b = await spawnApi(t);
    const { document, attempts, claimedAt, readyAt } = await followToReady(t, b, id, 120_000);
    t.true(attempts >= 2, `attempts seen: ${attempts}`);
    t.not(claimedAt, null, 'B held the job');
    // B ran the whole document again (a re-run starts clean): that is what A would have had to wait for.
    const fullIngestMs = readyAt - (claimedAt ?? bStarted);
    t.log(
      `SIGTERM ${((signalled - began) / 1000).toFixed(1)} s into the ingest at ${midway.progress!.embedded}/${midway.progress!.total} embedded; ` +
        `A exited ${exitMs} ms later (code ${exit.code}); B's full re-run took ${(fullIngestMs / 1000).toFixed(1)} s`,
    );
    t.true(
      exitMs * 2 < fullIngestMs,
      `A exited in ${exitMs} ms: well under a full ingest (${fullIngestMs} ms), so it did not wait for it`,
    );

    await assertFinished(t, document, kb, midway.progress!.total);
  },
);

/**
 * A short async ingest through A, then SIGTERM with a generous grace. `when` is the moment of the SIGTERM: once A
 * is seen holding the job (A finishes it before exiting: the document is ready with no other process running), or
 * as soon as the 202 is in (A may not have claimed it yet: then it exits without it, holding no lease, and the
 * queued job is any process's — the next one to start finishes it).
 */
async function sigtermWithShortIngest(t: ExecutionContext<Context>, when: 'accepted' | 'held') {
  const { app, user } = t.context;
  const kb = await newKb(t, `sigterm finish ${when}`);
  const a = await spawnApi(t, { KBQA_SHUTDOWN_GRACE_MS: '30000' });
  // ~20 KB (about 25 chunks): a few seconds of work at most, well within the grace period.
  const { id, status } = await ingestAsync(
    a,
    user.key,
    kb,
    'short.txt',
    bigText(`short-${randomUUID().slice(0, 8)}`, 250),
  );
  t.is(status, 'queued');
  let before = 'queued';
  if (when === 'held') {
    const deadline = Date.now() + 10_000;
    while (!(await app.deps.store.findJob(id))?.lease_owner?.includes(`:${a.pid}:`)) {
      if (Date.now() > deadline)
        throw new Error(
          `A did not take the job within 10 s: ${JSON.stringify(await app.deps.store.findJob(id))}\n${a.tail()}`,
        );
      await sleep(10);
    }
    before = (await app.deps.store.findDocument(id))?.status ?? 'missing';
    t.not(before, 'ready', 'the ingest was still in flight');
  }
  const signalled = Date.now();
  a.signal('SIGTERM');

  const exit = await exitWithin(a, 60_000);
  t.truthy(exit, `A exits within 60 s of SIGTERM:\n${a.tail()}`);
  if (!exit) return;
  t.is(exit.code, 0, a.tail());
  t.is(exit.signal, null);
  t.log(`SIGTERM with the document ${before}; A exited ${exit.at - signalled} ms later (grace 30 s)`);

  // No process runs now: whatever the document is, A left it so.
  let stored = await app.deps.store.findDocument(id);
  const job = await app.deps.store.findJob(id);
  // Whatever else happened, a process that exited must not hold a lease: another process would wait for it to lapse.
  t.false(
    Boolean(job?.lease_owner),
    `A exited still holding the job's lease (neither finished nor released): ${JSON.stringify(job)}`,
  );
  if (when === 'held' || stored?.status === 'ready') {
    t.is(
      stored?.status,
      'ready',
      `finished before exiting; document ${JSON.stringify(stored)}, job ${JSON.stringify(job)}`,
    );
    t.is(job, null, 'no job left');
  } else {
    t.is(stored?.status, 'queued', `never claimed, so still queued: ${JSON.stringify(stored)}`);
    t.is(job?.attempts, 0, 'a claim given back at shutdown does not count as an attempt');
    t.log('A exited before running the job: a new process takes it');
    const b = await spawnApi(t);
    await followToReady(t, b, id, 120_000);
    stored = await app.deps.store.findDocument(id);
  }
  if (stored?.status !== 'ready') return;
  t.true(stored.chunks > 0);
  t.is(await indexedChunks(app, id), stored.chunks, 'exactly its chunks');
  const report = await runDoctor(app.deps, { knowledgeBaseIds: [kb], graceMs: 0 });
  t.true(report.clean, JSON.stringify(report));
}

test.serial(
  'an API process SIGTERMed right after accepting a short async ingest leaves no lease behind; the job is finished by whoever runs next',
  async (t) => {
    await sigtermWithShortIngest(t, 'accepted');
  },
);

test.serial('an API process SIGTERMed while it runs a short ingest finishes it before exiting', async (t) => {
  await sigtermWithShortIngest(t, 'held');
});
