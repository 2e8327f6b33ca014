// Issue 32 §2 in the real Chromium: each new kind uploaded from test/fixtures/real with the file picker reaches
// ready (an image by OCR); the document page of
// a workbook shows its rows as a table; a deck's citation names its slide and opens the document page there.
import { readFile } from 'node:fs/promises';
import { makeWebUser, TEST_PASSWORD } from '../factories/accounts.ts';
import { newPage, screenshot, testWithBrowser } from '../helpers/browser.ts';

const test = testWithBrowser();

const FILES = ['office.docx', 'office.odt', 'page.html', 'deck.pptx', 'rows.xlsx', 'rows.csv', 'scanned.png'];

test('every kind uploads from the picker and reaches ready; a workbook shows as a table; a slide is cited and opened', async (t) => {
  const { app, browser } = t.context;
  const user = await makeWebUser(app.deps.store, { label: 'kinds' });
  const page = await newPage(browser, app.baseUrl);
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('kb-row').first().waitFor();
  await page.goto(`/knowledge-bases/${user.defaultKnowledgeBaseId}`);

  const accept = (await page.getByLabel('Upload files').getAttribute('accept')) ?? '';
  for (const extension of ['.docx', '.odt', '.pptx', '.xlsx', '.csv', '.html', '.htm', '.png', '.jpg', '.tiff'])
    t.true(accept.split(',').includes(extension), `accept lists ${extension}`);

  await page.getByLabel('Upload files').setInputFiles(
    await Promise.all(
      FILES.map(async (name) => ({
        name,
        mimeType: 'application/octet-stream',
        buffer: await readFile(new URL(`../fixtures/real/${name}`, import.meta.url)),
      })),
    ),
  );
  const row = (filename: string) => page.locator(`[data-testid=document-row][data-filename="${filename}"]`);
  // Every kind becomes ready, the scan too (read by OCR).
  for (const name of FILES) await row(name).and(page.locator('[data-status=ready]')).waitFor({ timeout: 120_000 });
  t.regex(await row('deck.pptx').innerText(), /PowerPoint/);
  t.regex(await row('rows.xlsx').innerText(), /Excel/);
  await screenshot(page, 'knowledge-base-kinds');

  // The workbook's document page: its rows as a table with the header's names.
  const workbookId = (await row('rows.xlsx').getAttribute('data-document-id')) as string;
  await page.goto(`/documents/${workbookId}`);
  const table = page.getByTestId('passage-table').first();
  await table.waitFor({ timeout: 30_000 });
  const headers = await table.locator('th').allInnerTexts();
  t.true(headers.includes('Variety') && headers.includes('Tonnes picked'), headers.join(' | '));
  t.truthy(await table.locator('tr', { hasText: "Cox's Orange Pippin" }).locator('td', { hasText: '187' }).count());
  t.regex(await page.getByTestId('document-kind').innerText(), /Excel · Download original/);
  await screenshot(page, 'document-xlsx');

  // The deck's citation names slide 2 and opens the document page at it.
  const deckId = (await page.request
    .get(`/api/web/knowledge-bases/${user.defaultKnowledgeBaseId}/documents`)
    .then(
      async (response) =>
        ((await response.json()) as { documents: Array<{ id: string; filename: string }> }).documents.find(
          (document) => document.filename === 'deck.pptx',
        )!.id,
    )) as string;
  await page.goto('/ask');
  await page.getByLabel('Question').fill('How many crates of apples did the pickers fill?');
  await page.getByRole('button', { name: 'Ask', exact: true }).click();
  await page.getByTestId('citation-card').first().waitFor({ timeout: 30_000 });
  const slideLink = page.getByTestId('citation-slide').first();
  await slideLink.waitFor({ timeout: 10_000 });
  t.is((await slideLink.innerText()).trim(), 'slide 2');
  t.is(await slideLink.getAttribute('href'), `/documents/${deckId}#slide-2`);
  await screenshot(page, 'ask-pptx');
  await slideLink.click();
  const target = page.locator('#slide-2');
  await target.waitFor({ timeout: 30_000 });
  t.regex(await target.innerText(), /11,600 crates/);
  t.regex(await target.getByTestId('passage-slide').innerText(), /slide 2/);
  await page.close();
});
