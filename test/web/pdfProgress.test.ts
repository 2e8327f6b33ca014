// Issue 31 (the web walk): a 20 MB PDF said "Extracting page 1 of 1" with a full bar for ~10 s. Progress was
// written only once a page was done, so a PDF whose one page took seconds said "Waiting for a worker…" while it was
// read, then showed its only page done (a full bar) while its text was still being prepared. Now the row says what
// the reader does as it does it: the PDF is opened, page 1 of 1 is read (the bar empty, the characters read so far
// moving), then its text is prepared.
import { makeWebUser, TEST_PASSWORD } from '../factories/accounts.ts';
import { longPagePdf } from '../fixtures/hostilePdfs.ts';
import { newPage, screenshot, signInThroughPage, testWithBrowser } from '../helpers/browser.ts';
import { WebClient } from '../helpers/webClient.ts';

const test = testWithBrowser();

test('a 20 MB one-page PDF: its row says the page is being read, with the characters so far moving, and no full bar before the page is read', async (t) => {
  const { app, browser } = t.context;
  const person = await makeWebUser(app.deps.store, { label: 'large-pdf' });
  const page = await newPage(browser, app.baseUrl);
  await signInThroughPage(page, person.email);
  await page.goto(`/knowledge-bases/${person.defaultKnowledgeBaseId}`);
  await page.getByLabel('Upload files').waitFor();

  // One page of 80,000 words (seconds to read), in a file padded to 20 MiB (a time budget of 45 s).
  const words = 80_000;
  const pdf = longPagePdf(words, 20);
  // The page's characters once read whole ("word0" … "word79999").
  let pageCharacters = 0;
  for (let index = 0; index < words; index += 1) pageCharacters += `word${index}`.length;
  await page
    .getByLabel('Upload files')
    .setInputFiles([{ name: 'atlas.pdf', mimeType: 'application/pdf', buffer: Buffer.from(pdf) }]);
  const row = page.locator('[data-testid=document-row][data-filename="atlas.pdf"]');
  await row.waitFor({ timeout: 120_000 });

  // What the row said (its text, and its bar's value of max), read every 100 ms until the PDF's text is out of the
  // reader: the row says it is prepared or embedded, or the document settles.
  const said: { text: string; bar: string | null }[] = [];
  for (let seen = 0; seen < 1_200; seen += 1) {
    const status = (await row.getAttribute('data-status')) ?? '';
    const progress = row.getByTestId('ingestion-progress');
    const text = (await progress.count()) > 0 ? (await progress.innerText().catch(() => '')).trim() : '';
    const bars = row.getByRole('progressbar');
    const bar =
      (await bars.count()) > 0
        ? `${await bars.first().getAttribute('aria-valuenow')} of ${await bars.first().getAttribute('aria-valuemax')}`
        : null;
    const last = said.at(-1);
    if (text !== '' && (last?.text !== text || last.bar !== bar)) said.push({ text, bar });
    if (/^Reading page 1 of 1 \(/.test(text) && said.filter((entry) => entry.text.startsWith('Reading')).length === 2)
      await screenshot(page, 'knowledge-base-pdf-reading');
    if (status === 'ready' || status === 'failed' || /^(Preparing|Embedding)/.test(text)) break;
    await page.waitForTimeout(100);
  }
  t.log(`the row said: ${said.map(({ text, bar }) => (bar ? `${text} [${bar}]` : text)).join(' | ')}`);

  const reading = said.filter(({ text }) => /^Reading page 1 of 1 \(\d[\d,]* characters of text so far\)$/.test(text));
  // How many samples fall inside the page's reading depends on the machine's speed (the reader reports every 250 ms,
  // the page polls): what must hold is that the row said the page was being read, with a count short of the page.
  const counts = reading.map(({ text }) =>
    Number(
      text
        .slice(text.indexOf('(') + 1)
        .split(' ')[0]
        .replaceAll(',', ''),
    ),
  );
  t.true(
    counts.some((count) => count > 0 && count < pageCharacters),
    `while its page was read, the row counted the characters read so far (${counts.join(', ')} of ${pageCharacters})`,
  );
  t.true(
    reading.every(({ bar }) => bar === '0 of 1'),
    'the bar stays empty while the only page is read',
  );
  t.false(
    said.some(({ text, bar }) => /page 1 of 1/.test(text) && bar === '1 of 1'),
    'never "page 1 of 1" with a full bar',
  );
  t.true(
    said.some(({ text }) => /^(Preparing the text of 1 page…|Embedding \d+ of \d+)$/.test(text)),
    'then it says the text is prepared (or embedded)',
  );

  // The 20 MB PDF goes (its job stops, its reader is killed) rather than embedding its 40,000 words here.
  const documentId = (await row.getAttribute('data-document-id')) as string;
  const client = new WebClient(app.baseUrl);
  await client.signIn(person.email, TEST_PASSWORD);
  t.is((await client.call('DELETE', `/api/web/documents/${documentId}`)).status, 200);
  await page.close();
});
