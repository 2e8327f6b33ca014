// Issue 22 §3: one user's PDFs stalled everyone's ingestion. Four PDFs of 2,000 pages sharing one large stream each
// took an ingest slot while they waited for the one PDF reader, which each held for the flat 120 s; another user's
// queued text document stayed queued for minutes. Now a PDF waiting for the reader holds no slot, claims are fair
// between users, and a PDF's time budget scales with its size and pages.
import { makeUser, makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { sharedStreamPdf } from './fixtures/hostilePdfs.ts';
import { testWithApp } from './helpers/app.ts';
import { upload } from './helpers/pdfUploads.ts';
import { WebClient } from './helpers/webClient.ts';

const test = testWithApp();

/** Polls `read` every 200 ms until `done` holds of what it read (at most `timeoutMs`, then the last reading). */
async function watch<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    value = await read();
  }
  return value;
}

const settled = (status: string) => status === 'ready' || status === 'failed';

test("four hog PDFs of one user: another user's queued text document is ready while they are all still in flight", async (t) => {
  const { app } = t.context;
  t.is(app.deps.config.ingestion.concurrency, 4, 'as many hogs as ingest slots');
  const hogger = await makeWebUser(app.deps.store, { label: 'hogger' });
  const browser = new WebClient(app.baseUrl);
  await browser.signIn(hogger.email, TEST_PASSWORD);
  const hog = sharedStreamPdf(2_000, 2);
  const hogs: string[] = [];
  for (let index = 0; index < 4; index += 1) {
    const uploaded = await upload(browser, hogger.defaultKnowledgeBaseId, `hog-${index}.pdf`, hog);
    t.is(uploaded.status, 202);
    hogs.push(uploaded.body.document.id);
  }
  const statusOf = async (id: string) =>
    (await browser.call('GET', `/api/web/documents/${id}`)).body.document.status as string;
  // The runner has taken a hog (its reader is reading it) before the other user's document is queued. Read from the
  // job's lease, not the status: a hog reads ~8 s a page, and on a loaded machine its first page (which turns the
  // status to processing) may never finish within its budget.
  const leased = async () =>
    (await Promise.all(hogs.map((id) => app.deps.store.findJob(id)))).some((job) => job?.lease_owner != null);
  t.true(await watch(leased, (taken) => taken, 60_000), 'the runner took a hog within 60 s');

  const other = await makeUser(app.deps.store, { label: 'patient' });
  const queued = await app.call('POST', '/api/v1/documents', {
    key: other.key,
    headers: { prefer: 'respond-async' },
    body: {
      kb_id: other.defaultKnowledgeBaseId,
      filename: 'notes.md',
      content: 'The harbour opens at six. Ferries leave on the hour.',
    },
  });
  t.is(queued.status, 202, JSON.stringify(queued.body));
  const queuedAt = Date.now();
  // The hogs still in flight when it was queued (on a loaded machine the first may have run out its budget already).
  const atQueue = await Promise.all(hogs.map(statusOf));
  const inFlight = hogs.filter((_, index) => !settled(atQueue[index]));
  t.true(inFlight.length > 0, `hogs in flight when the text document was queued: ${atQueue.join(', ')}`);
  const otherId: string = queued.body.document.id;
  const otherStatus = async () =>
    (await app.call('GET', `/api/v1/documents/${otherId}`, { key: other.key })).body.document.status as string;

  // Whichever settles first: the text document, or any hog in flight when it was queued (on the old runner, the
  // first hog at its 120 s limit, its slot the first to free).
  try {
    const seen = await watch(
      async () => ({ text: await otherStatus(), hogs: await Promise.all(inFlight.map(statusOf)) }),
      ({ text, hogs: statuses }) => settled(text) || statuses.some(settled),
      180_000,
    );
    t.log(
      `seen ${((Date.now() - queuedAt) / 1000).toFixed(1)} s after queueing: the text document ${seen.text}; the hogs ${seen.hogs.join(', ')}`,
    );
    t.is(seen.text, 'ready', `the text document: ${seen.text}; the hogs: ${seen.hogs.join(', ')}`);
    t.deepEqual(
      seen.hogs.filter(settled),
      [],
      `no hog in flight at queueing settled before the text document was ready: ${seen.hogs.join(', ')}`,
    );
  } finally {
    // The hogs go (their reader is killed when the app closes, after this test).
    for (const id of hogs) await browser.call('DELETE', `/api/web/documents/${id}`);
  }
});
