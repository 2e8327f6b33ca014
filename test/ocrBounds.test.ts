// Issue 32 §4's bound: a 200-page scan (one small image drawn on 200 pages, ~30 KB) would take ~9 min of OCR here.
// Its pages without a text layer are counted before the first OCR: over KBQA_OCR_MAX_PAGES (50) it fails at once,
// naming the limit, once; the API's memory does not move (OCR runs in the PDF reader's child process); another
// user's one-line document is ready meanwhile. The API runs as a process of its own, so its RSS is its alone.
import { openStore } from '../service/store/index.ts';
import { makeUser, makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { repeatedScanPdf } from './fixtures/scans.ts';
import { startApiProcess } from './helpers/apiProcess.ts';
import { memoryOf } from './helpers/processMemory.ts';
import { testWithDatabase } from './helpers/app.ts';
import { settled, upload } from './helpers/pdfUploads.ts';
import { WebClient } from './helpers/webClient.ts';

// The file's own database (the harness's): the API process's runner claims every job in its database.
const test = testWithDatabase();

test("a 200-page scan fails once naming KBQA_OCR_MAX_PAGES; the API's memory stays put; another user's one-line document is ready", async (t) => {
  const { databaseUrl } = t.context;
  const store = await openStore(databaseUrl, 5_000);
  const lines: string[] = [];
  const api = await startApiProcess({ KBQA_MONGODB_URL: databaseUrl }, 120_000, (line) => lines.push(line));
  try {
    const user = await makeWebUser(store);
    const browser = new WebClient(api.url);
    await browser.signIn(user.email, TEST_PASSWORD);
    const scan = await repeatedScanPdf(200);
    const before = memoryOf(api.pid);
    const uploaded = await upload(browser, user.defaultKnowledgeBaseId, 'archive-scan.pdf', scan);
    t.is(uploaded.status, 202);
    const id: string = uploaded.body.document.id;

    // Another user's one-line document, queued while the scan is read.
    const other = await makeUser(store, { label: 'other' });
    const started = Date.now();
    const queued = await fetch(`${api.url}/api/v1/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        kb_id: other.defaultKnowledgeBaseId,
        filename: 'note.txt',
        content: 'The ferry leaves at six.',
      }),
    });
    t.is(queued.status, 201, await queued.clone().text());
    const readyInMs = Date.now() - started;

    const document = await settled(browser, id);
    const after = memoryOf(api.pid);
    t.log(
      `the other user's document ready in ${readyInMs} ms; API peak RSS ${before.peak.toFixed(0)} → ${after.peak.toFixed(0)} MiB`,
    );
    t.like(document, {
      status: 'failed',
      error: 'the PDF has 200 scanned pages (no text layer) to read by OCR; the limit is 50 (KBQA_OCR_MAX_PAGES)',
    });
    t.true(after.peak - before.peak < 100, `the API's peak RSS rose by ${(after.peak - before.peak).toFixed(0)} MiB`);
    // Once: the failure is recorded and the job gone, so nothing claims it again.
    t.is(await store.findJob(id), null);
    t.is(api.exit(), null, 'the API process is still running');
  } finally {
    await api.kill();
    await store.close();
  }
});
