// The pages a person reads after adding documents, in the real Chromium: a document's own page (its text rendered
// safely, its passages, the KB's name, where it came from), what the upload area and the list say while and after
// documents are ingested (every file named, a failure not announced as started, Remove where a retry cannot help, a
// cancel dialog whose buttons say what they do), a PDF's title from its metadata, and the retrieved-chunks table.
import type { Browser, Page } from 'playwright-core';
import { makeWebUser } from '../factories/accounts.ts';
import { corruptPdf, textPdf } from '../fixtures/pdfs.ts';
import type { TestApp } from '../helpers/app.ts';
import { newPage, screenshotBothWidths, signInThroughPage, testWithBrowser } from '../helpers/browser.ts';

const test = testWithBrowser();

const NOTES = [
  '# Canteen hours',
  '',
  'The canteen opens at **noon** and closes at *three*; `badge` required.',
  '',
  '- Soup on Mondays',
  '- Fish on Fridays',
  '',
  '<script>window.pwned = 1</script><img src="x" onerror="window.pwned = 2">',
  '',
  '## varro/w-/guide',
  '',
  'Visitors sign the varro guide book at the front desk before the tour.',
  '',
].join('\n');

/** A signed-in owner on a KB of their own named `name`; returns its id. */
async function ownKnowledgeBase(page: Page, name: string): Promise<string> {
  const session = await (await page.context().request.get('/api/web/session')).json();
  const created = await page.context().request.post('/api/web/knowledge-bases', {
    headers: { 'X-CSRF-Token': session.csrf_token },
    data: { name },
  });
  return (await created.json()).knowledge_base.id;
}

/** A new user, signed in, on their Default knowledge base's page. */
async function ownerOnDefaultKnowledgeBase({ app, browser }: { app: TestApp; browser: Browser }, label: string) {
  const user = await makeWebUser(app.deps.store, { label });
  const page = await newPage(browser, app.baseUrl);
  await signInThroughPage(page, user.email);
  await page.goto(`/knowledge-bases/${user.defaultKnowledgeBaseId}`);
  return { user, page };
}

const row = (page: Page, filename: string) => page.locator(`[data-testid=document-row][data-filename="${filename}"]`);

async function pasteText(page: Page, filename: string, text: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Filename', exact: true }).fill(filename);
  await page.getByRole('textbox', { name: 'Text', exact: true }).fill(text);
  await page.getByRole('button', { name: 'Add text' }).click();
  await row(page, filename).and(page.locator('[data-status=ready]')).waitFor({ timeout: 60_000 });
}

test('a document page shows its text rendered safely, its passages, its KB by name and "Pasted text"', async (t) => {
  const { app, browser } = t.context;
  const user = await makeWebUser(app.deps.store, { label: 'doc-page' });
  const page = await newPage(browser, app.baseUrl);
  await signInThroughPage(page, user.email);
  const kbId = await ownKnowledgeBase(page, 'Field notes');
  await page.goto(`/knowledge-bases/${kbId}`);
  await pasteText(page, 'canteen.md', NOTES);
  await row(page, 'canteen.md').getByRole('link', { name: 'canteen.md' }).click();
  await page.waitForURL('**/documents/*');

  const breadcrumb = page.getByRole('navigation', { name: 'Breadcrumb' });
  await breadcrumb.getByRole('link', { name: 'Field notes' }).waitFor();
  t.is(await page.getByTestId('document-source').innerText(), 'Pasted text');

  const text = page.getByRole('region', { name: 'Text' });
  await text.getByRole('heading', { name: 'Canteen hours' }).waitFor();
  t.is(await text.locator('strong').innerText(), 'noon');
  t.is(await text.locator('em').innerText(), 'three');
  t.is(await text.getByRole('listitem').count(), 2);
  // Raw HTML is shown as the characters it is, never parsed: no element made, nothing run.
  t.regex(await text.innerText(), /<script>window\.pwned = 1<\/script><img src="x" onerror="window\.pwned = 2">/);
  t.is(await page.locator('main script, main img').count(), 0);
  t.is(await page.evaluate(() => (window as { pwned?: number }).pwned), undefined);

  const documentId = new URL(page.url()).pathname.split('/').pop() as string;
  const record = await (await page.context().request.get(`/api/web/documents/${documentId}`)).json();
  const passages = page.getByTestId('passage');
  await passages.first().waitFor();
  t.true(record.document.chunks >= 1);
  t.is(await passages.count(), record.document.chunks);
  t.regex(await page.getByRole('region', { name: /^Passages/ }).innerText(), /Visitors sign the varro guide book/);
  await screenshotBothWidths(page, 'document-markdown');
  await page.setViewportSize({ width: 375, height: 812 });
  t.true((await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 0, 'fits 375 px');
  await page.close();
});

test('PDFs: every uploaded file is named, a failure is not announced as started, its title comes from the PDF, and a broken one offers Remove, not Retry', async (t) => {
  const { user, page } = await ownerOnDefaultKnowledgeBase(t.context, 'doc-pdf');
  const pdf = await textPdf(
    [
      ['Tidal turbines are inspected every spring by the harbour crew.'],
      ['Blades are replaced after ten years of service.'],
    ],
    { title: 'Tidal Turbine Handbook' },
  );
  await page.getByLabel('Upload files').setInputFiles([
    { name: 'handbook-v3.pdf', mimeType: 'application/pdf', buffer: Buffer.from(pdf) },
    { name: 'broken.pdf', mimeType: 'application/pdf', buffer: Buffer.from(corruptPdf()) },
  ]);
  await row(page, 'handbook-v3.pdf').and(page.locator('[data-status=ready]')).waitFor({ timeout: 60_000 });
  await row(page, 'broken.pdf').and(page.locator('[data-status=failed]')).waitFor({ timeout: 60_000 });

  const status = page.getByTestId('ingestion-summary');
  await status.getByText(/broken\.pdf.*failed/).waitFor();
  const said = await status.innerText();
  t.regex(said, /handbook-v3\.pdf/, 'both files are named');
  t.notRegex(said, /ingestion has started/);

  t.is(
    await row(page, 'broken.pdf').getByRole('button', { name: 'Retry' }).count(),
    0,
    'a retry cannot read a broken file',
  );
  t.is(await row(page, 'broken.pdf').getByRole('button', { name: 'Remove' }).count(), 1);
  t.regex(await row(page, 'handbook-v3.pdf').innerText(), /Tidal Turbine Handbook/);
  await screenshotBothWidths(page, 'knowledge-base-uploads');

  await row(page, 'handbook-v3.pdf').getByRole('link', { name: 'handbook-v3.pdf' }).click();
  await page.getByRole('heading', { name: 'Tidal Turbine Handbook', level: 1 }).waitFor();
  t.is(await page.getByTestId('document-source').innerText(), 'Uploaded file');
  const passages = page.getByTestId('passage');
  await passages.first().waitFor();
  t.regex(await page.getByRole('region', { name: /^Passages/ }).innerText(), /p\. 1[\s\S]*inspected every spring/);
  t.truthy(await page.getByRole('link', { name: 'Open PDF' }).first().getAttribute('href'));
  await screenshotBothWidths(page, 'document-pdf');

  await page.goto(`/knowledge-bases/${user.defaultKnowledgeBaseId}`);
  await row(page, 'broken.pdf').getByRole('button', { name: 'Remove' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
  await row(page, 'broken.pdf').waitFor({ state: 'detached' });
  t.is(await row(page, 'handbook-v3.pdf').count(), 1);
  await page.close();
});

test('the cancel dialog names its actions: "Stop ingestion" and "Keep going"', async (t) => {
  const { user, page } = await ownerOnDefaultKnowledgeBase(t.context, 'doc-cancel');
  await pasteText(page, 'slow.md', '# Slow\n\nA document shown as still processing.\n');
  // The list says it is still processing (a real ingestion of this size ends before a click could land).
  await page.route('**/documents?include=status', async (route) => {
    const response = await route.fetch();
    const body = await response.json();
    for (const document of body.documents)
      Object.assign(document, { status: 'processing', progress: { embedded: 0, total: 1 } });
    await route.fulfill({ response, json: body });
  });
  await page.reload();
  await row(page, 'slow.md').and(page.locator('[data-status=processing]')).waitFor();
  await row(page, 'slow.md').getByTestId('cancel-ingestion').click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Stop ingestion' }).waitFor();
  t.is(await dialog.getByRole('button', { name: 'Keep going' }).count(), 1);
  t.is(await dialog.getByRole('button', { name: /^(Cancel|Confirm)$/ }).count(), 0);
  await dialog.getByRole('button', { name: 'Keep going' }).click();
  await dialog.waitFor({ state: 'hidden' });
  t.is(await row(page, 'slow.md').count(), 1, 'nothing was removed');
  await page.close();
});

test('the retrieved-chunks table keeps a heading path and a score on one line on a desktop', async (t) => {
  const { user, page } = await ownerOnDefaultKnowledgeBase(t.context, 'doc-chunks');
  await pasteText(page, 'visitors.md', NOTES);
  await page.goto('/ask');
  await page.getByLabel('Question').fill('Where do visitors sign the varro guide book?');
  await page.getByLabel('Show retrieved chunks').check();
  await page.getByRole('button', { name: 'Ask', exact: true }).click();
  await page.getByTestId('chunk-row').first().waitFor({ timeout: 30_000 });
  /** Lines a cell's text (or the part of it from `part` on, `part.length` long) takes: the distinct tops of its line boxes. */
  const lines = (cell: string, part?: string) =>
    page
      .getByTestId('chunk-row')
      .first()
      .locator(`td[data-label="${cell}"]`)
      .evaluate((element, part) => {
        const range = document.createRange();
        const text = Array.from(element.childNodes).find(
          (node) => node.nodeType === Node.TEXT_NODE && (!part || node.textContent?.includes(part)),
        );
        if (part && text) {
          const start = (text.textContent as string).indexOf(part);
          range.setStart(text, start);
          range.setEnd(text, start + part.length);
        } else {
          range.selectNodeContents(element);
        }
        return new Set(Array.from(range.getClientRects(), (rect) => Math.round(rect.top))).size;
      }, part);
  t.regex(
    await page.getByTestId('chunk-row').first().locator('td[data-label="Heading path"]').innerText(),
    /varro\/w-\/guide/,
  );
  t.is(await lines('Heading path', 'varro/w-/guide'), 1);
  t.is(await lines('Score'), 1);
  t.is(await lines('Similarity'), 1);
  await screenshotBothWidths(page, 'ask-chunks');
  await page.close();
});

test('the same file chosen again is not uploaded twice: the page says so and offers Replace', async (t) => {
  const { page } = await ownerOnDefaultKnowledgeBase(t.context, 'doc-duplicate');
  const file = {
    name: 'twice.md',
    mimeType: 'text/markdown',
    buffer: Buffer.from('# Twice\n\nThe same note, chosen twice.\n'),
  };
  await page.getByLabel('Upload files').setInputFiles([file]);
  await row(page, 'twice.md').and(page.locator('[data-status=ready]')).waitFor({ timeout: 60_000 });

  await page.getByLabel('Upload files').setInputFiles([file]);
  const duplicate = page.getByTestId('duplicate-row');
  await duplicate.waitFor();
  t.regex(await duplicate.innerText(), /twice\.md is already in this knowledge base, with the same content/);
  t.is(await page.getByTestId('document-row').count(), 1, 'no second document');

  const replaced = page.waitForResponse(
    (response) => response.request().method() === 'PUT' && response.url().includes('/api/web/documents/'),
  );
  await duplicate.getByRole('button', { name: 'Replace' }).click();
  t.is((await replaced).status(), 202);
  await duplicate.waitFor({ state: 'detached' });
  await row(page, 'twice.md').and(page.locator('[data-status=ready]')).waitFor({ timeout: 60_000 });
  t.is(await page.getByTestId('document-row').count(), 1);
  await page.close();
});
