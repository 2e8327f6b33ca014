// PDFs in the web app, in the real Chromium: upload a generated multi-page PDF with the file picker, watch it reach
// ready, ask, and the citation shows the right page and links to the stored file at that page; a corrupt and an
// encrypted file end as failed with their messages.
import { corruptPdf, encryptedPdf, multiPagePdf } from '../fixtures/pdfs.ts';
import { makeWebUser, TEST_PASSWORD } from '../factories/accounts.ts';
import { newPage, screenshot, testWithBrowser } from '../helpers/browser.ts';

const test = testWithBrowser();

test('upload a PDF, it reaches ready, the answer cites its page and links to the file there; corrupt and encrypted fail with their messages', async (t) => {
  const { app, browser } = t.context;
  const user = await makeWebUser(app.deps.store, { label: 'pdf' });
  const page = await newPage(browser, app.baseUrl);
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('kb-row').first().waitFor();
  await page.goto(`/knowledge-bases/${user.defaultKnowledgeBaseId}`);

  await page.getByLabel('Upload files').setInputFiles([
    { name: 'handbook.pdf', mimeType: 'application/pdf', buffer: Buffer.from(await multiPagePdf()) },
    { name: 'broken.pdf', mimeType: 'application/pdf', buffer: Buffer.from(corruptPdf()) },
    { name: 'locked.pdf', mimeType: 'application/pdf', buffer: Buffer.from(await encryptedPdf()) },
  ]);
  const row = (filename: string) => page.locator(`[data-testid=document-row][data-filename="${filename}"]`);
  await row('handbook.pdf').and(page.locator('[data-status=ready]')).waitFor({ timeout: 60_000 });
  await row('broken.pdf').and(page.locator('[data-status=failed]')).waitFor({ timeout: 60_000 });
  await row('locked.pdf').and(page.locator('[data-status=failed]')).waitFor({ timeout: 60_000 });
  t.regex(await row('broken.pdf').innerText(), /the file is not a readable PDF \(damaged or not a PDF\)/);
  t.regex(await row('locked.pdf').innerText(), /the PDF is password-protected \(encrypted\)/);
  await screenshot(page, 'knowledge-base-pdf');
  const documentId = (await row('handbook.pdf').getAttribute('data-document-id')) as string;

  await page.goto('/ask');
  await page.getByLabel('Question').fill('How are tidal turbines inspected?');
  await page.getByRole('button', { name: 'Ask', exact: true }).click();
  const card = page.getByTestId('citation-card').first();
  await card.waitFor({ timeout: 30_000 });
  const pageLink = card.getByTestId('citation-page');
  t.is((await pageLink.innerText()).trim(), 'p. 2');
  const href = (await pageLink.getAttribute('href')) as string;
  t.is(href, `/api/web/documents/${documentId}/file#page=2`);
  await screenshot(page, 'ask-pdf');

  // The link's target is the stored original, with this session's cookie.
  const file = await page.context().request.get(href.split('#')[0]);
  t.is(file.status(), 200);
  t.is(file.headers()['content-type'], 'application/pdf');
  t.is(
    Buffer.from(await file.body())
      .subarray(0, 5)
      .toString(),
    '%PDF-',
  );
  await page.close();
});
