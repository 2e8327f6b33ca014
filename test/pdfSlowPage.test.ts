// Issue 31 §4: one slow PDF page held the one PDF reader for the PDF's whole time budget. A PDF gave the reader up
// only between two pages, so a one-page PDF whose page draws one 2 MiB content stream 90 times kept another user's
// one-line PDF, uploaded just after, waiting 21–33 s, until the slow one failed at its budget. Now a page still in
// progress a step after another PDF began to wait is stopped (its reader killed) and read again later: the other
// user's PDF is ready while the slow one is still in flight, and the slow one still ends at its budget.
import { makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { slowPagePdf } from './fixtures/hostilePdfs.ts';
import { textPdf } from './fixtures/pdfs.ts';
import { testWithApp } from './helpers/app.ts';
import { settled as settledDocument, upload } from './helpers/pdfUploads.ts';
import { WebClient } from './helpers/webClient.ts';

const test = testWithApp();

const settled = (status: string) => status === 'ready' || status === 'failed';

test("another user's one-line PDF is ready while one slow page of a PDF is still being read, and the slow PDF ends at its budget", async (t) => {
  const { app } = t.context;
  const hogger = await makeWebUser(app.deps.store, { label: 'slow-page' });
  const other = await makeWebUser(app.deps.store, { label: 'one-line' });
  const hoggerBrowser = new WebClient(app.baseUrl);
  await hoggerBrowser.signIn(hogger.email, TEST_PASSWORD);
  const otherBrowser = new WebClient(app.baseUrl);
  await otherBrowser.signIn(other.email, TEST_PASSWORD);

  // The page (90 draws of one 2 MiB stream), in a file padded to 8 MiB: a budget of 5 s + 2 s × 8 = 21 s,
  // which the page alone outlasts.
  const slow = await upload(hoggerBrowser, hogger.defaultKnowledgeBaseId, 'slow-page.pdf', slowPagePdf(90, 2, 8));
  t.is(slow.status, 202, JSON.stringify(slow.body));
  const slowId: string = slow.body.document.id;
  // The runner has given the slow PDF the reader (its job is leased) before the other user uploads.
  for (let attempt = 0; (await app.deps.store.findJob(slowId))?.lease_owner == null; attempt += 1) {
    if (attempt > 600) t.fail('the runner did not take the slow PDF within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  const small = await upload(
    otherBrowser,
    other.defaultKnowledgeBaseId,
    'one-line.pdf',
    await textPdf([['The ferry to the island leaves at seven every morning.']]),
  );
  t.is(small.status, 202, JSON.stringify(small.body));
  const smallId: string = small.body.document.id;
  const documentOf = async (browser: WebClient, id: string) =>
    (await browser.call('GET', `/api/web/documents/${id}`)).body.document;

  // Whichever settles first, as the server's states say: on the old reader the slow PDF failed at its budget first.
  let seen = { small: 'queued', slow: 'queued' };
  let slowSaidWaiting = false;
  while (!settled(seen.small) && !settled(seen.slow)) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const slowDocument = await documentOf(hoggerBrowser, slowId);
    slowSaidWaiting ||= slowDocument.progress?.pages?.waiting === true;
    seen = { small: (await documentOf(otherBrowser, smallId)).status, slow: slowDocument.status };
  }
  t.is(seen.small, 'ready', `the one-line PDF: ${seen.small}; the slow one: ${seen.slow}`);
  t.false(settled(seen.slow), `the slow PDF was still in flight when the one-line PDF was ready (${seen.slow})`);
  t.true(slowSaidWaiting, 'while the one-line PDF had the reader, the slow one said it waits for it (pages.waiting)');

  // Still bounded: the slow PDF fails at its budget (shared by its steps), after the one-line PDF was ready.
  const slowEnd = await settledDocument(hoggerBrowser, slowId);
  const smallEnd = await settledDocument(otherBrowser, smallId);
  t.is(slowEnd.status, 'failed');
  t.regex(slowEnd.error, /^the PDF took longer than \d+ s to read/);
  t.log(`ready at ${smallEnd.updated_at}; the slow PDF failed at ${slowEnd.updated_at}: ${slowEnd.error}`);
  t.true(Date.parse(smallEnd.updated_at) < Date.parse(slowEnd.updated_at), 'by the server clock, ready first');
  const smallDocument = await app.deps.store.findDocument(smallId);
  t.log(`the one-line PDF waited ${smallDocument?.queue_wait_ms} ms for the reader`);
});
