// Scans end to end (issue 32 §4): a committed scan uploaded through the web app's upload is read by OCR in the PDF
// reader's process, becomes ready, shows its scanned page and confidence on the document page, and answers a
// question with a citation marked scanned. (The bounds: ocrBounds.test.ts.)
import { makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { scannedPdfPage } from './fixtures/scans.ts';
import { testWithApp } from './helpers/app.ts';
import { settled, upload } from './helpers/pdfUploads.ts';
import { WebClient } from './helpers/webClient.ts';

// A generous page budget: the machine running the suite can be loaded many times over (this test is about what
// OCR reads, not its speed; the speed is the bench's: `npm run bench -- --only ocr`).
const test = testWithApp({ env: { KBQA_OCR_PAGE_MS: '120000' } });

test('a committed scan uploaded in the web app is read by OCR: ready, its page flagged as scanned, a question answered with a citation marked scanned', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const browser = new WebClient(app.baseUrl);
  await browser.signIn(user.email, TEST_PASSWORD);
  const uploaded = await upload(browser, user.defaultKnowledgeBaseId, 'scanned-notice.pdf', scannedPdfPage());
  t.is(uploaded.status, 202);
  const document = await settled(browser, uploaded.body.document.id);
  t.is(document.status, 'ready', JSON.stringify(document));
  t.is(document.scanned_pages.length, 1);
  t.like(document.scanned_pages[0], { page: 1, low_confidence: false });
  t.true(document.scanned_pages[0].confidence >= 70, `confidence ${document.scanned_pages[0].confidence}`);

  const asked = await browser.call('POST', '/api/web/query', {
    body: {
      query: 'How many bottles of juice did the orchard sell last year?',
      knowledge_base_ids: [user.defaultKnowledgeBaseId],
      include_chunks: true,
    },
  });
  t.is(asked.status, 200, JSON.stringify(asked.body));
  t.true(asked.body.answer.includes('23,400'), asked.body.answer);
  t.like(asked.body.citations[0], { document_id: document.id, page_start: 1, page_end: 1, scanned: true });
  t.true(asked.body.chunks[0].text.includes('23,400 bottles'));
});
