// Issue 24 §2: a 6-page PDF sat at "Waiting for a worker…" for about 75 s behind another user's 60-page PDF, and did
// not say why. Now a PDF that is slow to read gives the reader up after a step when another waits, so the small one
// waits for one step of the big one, not all of it; and while it waits its row says how many documents are ahead.
import { makeWebUser, TEST_PASSWORD } from '../factories/accounts.ts';
import { drawingBehindTextPdf, manualPdf } from '../fixtures/pdfs.ts';
import { newPage, screenshot, signInThroughPage, testWithBrowser } from '../helpers/browser.ts';
import { upload } from '../helpers/pdfUploads.ts';
import { WebClient } from '../helpers/webClient.ts';

/**
 * Steps of 4 s: the small PDF waits long enough for the page (refreshed once a second while something is in flight)
 * to show it waiting, and the big one (~140 ms a page, 120 pages: ~17 s on an idle machine, more on a busy one) is
 * always cut into several steps. With 60 pages and 8 s steps an idle machine read the big one in one step and the
 * race to ready was a toss-up. test/pdfSteps.test.ts shows the interleaving with short steps.
 */
const STEP_MS = 4_000;
const BIG_PAGES = 120;
const test = testWithBrowser({ env: { KBQA_PDF_STEP_MS: String(STEP_MS) } });

test("a 6-page PDF uploaded while another user's 120-page one is read is ready first, and says what is ahead of it while it waits", async (t) => {
  const { app, browser } = t.context;
  const [big, small] = await Promise.all([drawingBehindTextPdf(BIG_PAGES, 200_000), manualPdf(6)]);

  const bigOwner = await makeWebUser(app.deps.store, { label: 'big-pdf' });
  const bigClient = new WebClient(app.baseUrl);
  await bigClient.signIn(bigOwner.email, TEST_PASSWORD);
  const person = await makeWebUser(app.deps.store, { label: 'small-pdf' });
  const page = await newPage(browser, app.baseUrl);
  await signInThroughPage(page, person.email);
  await page.goto(`/knowledge-bases/${person.defaultKnowledgeBaseId}`);
  await page.getByLabel('Upload files').waitFor();

  const bigUpload = await upload(bigClient, bigOwner.defaultKnowledgeBaseId, `survey-${BIG_PAGES}.pdf`, big);
  t.is(bigUpload.status, 202, JSON.stringify(bigUpload.body));
  const bigId: string = bigUpload.body.document.id;
  const bigDocument = async () => (await bigClient.call('GET', `/api/web/documents/${bigId}`)).body.document;
  // The big PDF is being read (its first page extracted) before the small one is uploaded.
  for (
    let seen = await bigDocument();
    seen.status === 'queued' || (seen.progress?.pages?.done ?? 0) === 0;
    seen = await bigDocument()
  ) {
    if (seen.status === 'ready' || seen.status === 'failed')
      throw new Error(`the big PDF settled before it was seen being read: ${JSON.stringify(seen)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  await page
    .getByLabel('Upload files')
    .setInputFiles([{ name: 'leaflet-6.pdf', mimeType: 'application/pdf', buffer: Buffer.from(small.pdf) }]);
  const row = page.locator('[data-testid=document-row][data-filename="leaflet-6.pdf"]');
  await row.waitFor();
  // What the row said while the small PDF waited, read every 50 ms until it settles.
  const said = new Set<string>();
  for (let status = ''; status !== 'ready' && status !== 'failed';) {
    status = (await row.getAttribute('data-status')) ?? '';
    const progress = row.getByTestId('ingestion-progress');
    const text = (await progress.count()) > 0 ? (await progress.innerText().catch(() => '')).trim() : '';
    if (/ahead/.test(text) && ![...said].some((earlier) => /ahead/.test(earlier)))
      await screenshot(page, 'knowledge-base-queued');
    if (text !== '') said.add(text);
    await page.waitForTimeout(50);
  }
  const bigWhenSmallReady = await bigDocument();
  // Server-measured: the small PDF's wait (queued → it had the reader) against the big one's steps (the reader held),
  // and which became ready first by the server's clock (the page polls once a second: what it shows may lag).
  const smallId = (await row.getAttribute('data-document-id')) as string;
  const smallRecord = await app.deps.store.findDocument(smallId);
  const bigRecord = await app.deps.store.findDocument(bigId);
  const waited = smallRecord?.queue_wait_ms;
  const step = bigRecord?.longest_step_ms;
  t.log(`the small PDF's row said: ${[...said].join(' | ')}`);
  t.log(
    `the small PDF waited ${waited} ms; the big one's longest step held the reader ${step} ms; the big one: ${JSON.stringify(bigWhenSmallReady.progress ?? bigWhenSmallReady.status)}`,
  );
  t.is(await row.getAttribute('data-status'), 'ready');
  if (smallRecord?.status !== 'ready' || !bigRecord) return t.fail('both documents are on record, the small one ready');
  t.true(
    bigRecord.status !== 'ready' || bigRecord.updated_at.getTime() > smallRecord.updated_at.getTime(),
    `the small PDF is ready before the big one: small ready at ${smallRecord.updated_at.toISOString()}, the big one ${bigRecord.status} at ${bigRecord.updated_at.toISOString()}`,
  );
  t.true(
    [...said].some((text) => /^(1 document|\d+ documents) ahead$/.test(text)),
    `the waiting small PDF says how many documents are ahead of it; it said: ${[...said].join(' | ')}`,
  );
  if (typeof waited !== 'number' || typeof step !== 'number')
    return t.fail(`the waits are recorded on the documents: ${waited}, ${step}`);
  // One step of the big one, plus the claim's round trips (within one poll interval).
  t.true(waited <= step + app.deps.config.ingestion.pollMs, `waited ${waited} ms; one step is ${step} ms`);

  await bigClient.call('DELETE', `/api/web/documents/${bigId}`);
  await page.close();
});
