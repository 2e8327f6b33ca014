// Issue 22 §2: a PDF whose stream inflates without bound. Read in the API's process (pdfjs keeps decoded streams
// outside V8's heap, so a worker's resourceLimits do not bound them), a 1 MB upload inflating to 1 GiB took the API
// from 676 to 2,913 MB, and a process that died would have had the job retried. Now each PDF is read by a process of
// its own under an address-space limit (KBQA_PDF_MAX_MEMORY_MB): the document fails once, as too large, naming the
// limit, and the API's memory does not move. The API runs as a process of its own here, so its RSS is its alone.
import { openStore } from '../service/store/index.ts';
import { makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { flateBombPdf } from './fixtures/hostilePdfs.ts';
import { multiPagePdf } from './fixtures/pdfs.ts';
import { memoryOf, startApiProcess } from './helpers/apiProcess.ts';
import { testWithDatabase } from './helpers/app.ts';
import { settled, upload } from './helpers/pdfUploads.ts';
import { WebClient } from './helpers/webClient.ts';

// The file's own database (the harness's): the API process's runner claims every job in its database.
const test = testWithDatabase();

// Low (the floor is 64): the reader reaches it within a second or two even on a loaded machine, well inside the
// upload's time budget (5 s + 2 s a MiB), so the failure is the memory's, not the clock's.
const MEMORY_MB = 96;
const INFLATED_MIB = 512;

test(`a PDF inflating to ${INFLATED_MIB} MiB fails once as too large, naming the ${MEMORY_MB} MB limit, and the API's peak RSS stays put`, async (t) => {
  const { databaseUrl } = t.context;
  const store = await openStore(databaseUrl, 5_000);
  const lines: string[] = [];
  const api = await startApiProcess(
    { KBQA_MONGODB_URL: databaseUrl, KBQA_PDF_MAX_MEMORY_MB: String(MEMORY_MB) },
    120_000,
    (line) => lines.push(line),
  );
  try {
    const user = await makeWebUser(store);
    const browser = new WebClient(api.url);
    await browser.signIn(user.email, TEST_PASSWORD);
    // An ordinary PDF first: whatever reading a PDF costs the API once is in the baseline.
    const ordinary = await upload(browser, user.defaultKnowledgeBaseId, 'handbook.pdf', await multiPagePdf());
    t.is((await settled(browser, ordinary.body.document.id)).status, 'ready');

    const bomb = await flateBombPdf(INFLATED_MIB);
    t.true(bomb.byteLength < 1024 * 1024, `the upload is ${bomb.byteLength} bytes`);
    const before = memoryOf(api.pid);
    const uploaded = await upload(browser, user.defaultKnowledgeBaseId, 'bomb.pdf', bomb);
    t.is(uploaded.status, 202);
    const id: string = uploaded.body.document.id;
    let sampled = before.rss;
    const sampler = setInterval(() => (sampled = Math.max(sampled, memoryOf(api.pid).rss)), 100);
    const document = await settled(browser, id).finally(() => clearInterval(sampler));
    const after = memoryOf(api.pid);
    t.log(
      `API RSS ${before.rss.toFixed(0)} MiB before, highest sample ${sampled.toFixed(0)} MiB; peak ${before.peak.toFixed(0)} → ${after.peak.toFixed(0)} MiB`,
    );

    t.like(document, {
      status: 'failed',
      error: `the PDF needs more than the ${MEMORY_MB} MB of memory allowed to read it (its compressed contents expand too far)`,
    });
    // Read in the API, the stream's buffers alone would be ≥ 512 MiB (issue 22 measured 2.2 times the inflated size).
    t.true(after.peak - before.peak < 100, `the API's peak RSS rose by ${(after.peak - before.peak).toFixed(0)} MiB`);
    // Once: the failure is recorded and the job gone, so nothing claims it again; the reader hit its limit once.
    t.is(await store.findJob(id), null);
    t.is(lines.filter((line) => line.includes(id) && line.includes('a PDF hit a reading limit')).length, 1, api.tail());
    t.is(api.exit(), null, 'the API process is still running');
  } finally {
    await api.kill();
    await store.close();
  }
});
