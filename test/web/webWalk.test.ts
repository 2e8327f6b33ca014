// What a walk through the web app as new users found (issue 31), in Chromium at a desktop's 1280×800 and a phone's
// 390×844: the sign-in pause warns and says how to get back in, focus goes to the message; dialogs name their action;
// citations sit after the period and are 24×24 tap targets; a phone's document list heads each row with its title;
// /docs links back to the app; and the pages say refusals in their own words, not the API's.
import type { Browser, Page } from 'playwright-core';
import { createApiKey } from '../../service/commands/apiKeys.ts';
import { makeWebUser, uniqueEmail } from '../factories/accounts.ts';
import type { TestApp } from '../helpers/app.ts';
import { newPage, signInThroughPage, testWithBrowser } from '../helpers/browser.ts';
import { createKb, ingest } from '../helpers/documentsApi.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fakeOpenAI.ts';

const PHONE = { width: 390, height: 844 };
const CARE =
  '# Camera care\n\nWipe the lens with a chamois cloth. Keep the camera in a dry bag when it rains on the hills.\n';
const REPLY = 'Wipe the lens with a chamois cloth [1]. Keep the camera in a dry bag [1] .';

let fake: FakeOpenAI | undefined;
const test = testWithBrowser({
  env: async () => {
    fake = await startFakeOpenAI();
    fake.script({ reply: REPLY });
    return { KBQA_OPENAI_BASE_URL: fake.baseUrl, KBQA_OPENAI_API_KEY: 'test', KBQA_OPENAI_MODELS: 'gpt-test' };
  },
});
test.after.always(() => fake?.close());

async function phonePage(browser: Browser, baseUrl: string): Promise<Page> {
  const page = await newPage(browser, baseUrl, { viewport: 'phone' });
  await page.setViewportSize(PHONE);
  return page;
}

/** One sign-in: what the message says, and whether focus went to it (not <body>, where the busy button left it). */
async function trySignIn(page: Page, email: string, password: string): Promise<{ said: string; focused: boolean }> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  const answered = page.waitForResponse((response) => response.url().endsWith('/api/web/session'));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await answered;
  const alert = page.getByRole('alert');
  await alert.waitFor();
  const focused = await page
    .waitForFunction(() => document.activeElement?.getAttribute('role') === 'alert', undefined, { timeout: 5_000 })
    .then(() => true)
    .catch(() => false);
  // Once the button is no longer busy, the page has shown this answer.
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  return { said: (await alert.innerText()).trim(), focused };
}

test('sign-in warns with two tries left, says the pause and how to get back in, with focus on the message', async (t) => {
  const { app, browser } = t.context;
  const page = await newPage(browser, app.baseUrl);
  await page.goto('/sign-in');
  // An email with no account: the page cannot tell, and says the same as for a real one.
  const email = uniqueEmail('walker');
  const answers = [];
  for (let attempt = 0; attempt < 5; attempt += 1) answers.push(await trySignIn(page, email, `mistyped ${attempt}`));
  const said = answers.map((answer) => answer.said);
  t.is(said[0], 'The email or password is incorrect.');
  t.is(said[1], 'The email or password is incorrect.');
  t.regex(said[2], /^The email or password is incorrect\. 2 tries left before signing in is paused\./);
  t.regex(said[3], /^The email or password is incorrect\. 1 try left before signing in is paused\./);
  t.regex(said[4], /Too many failed tries: signing in is paused for 1 minute\./);
  for (const words of said.slice(2)) t.regex(words, /An administrator can give you a link to set a new one/);
  t.deepEqual(
    answers.map((answer) => answer.focused),
    [true, true, true, true, true],
    'focus is on the message each time, not <body>',
  );

  // The way back in that the page names: the administrator's Users page makes the reset link.
  const admin = await makeWebUser(app.deps.store, { isAdmin: true });
  const person = await makeWebUser(app.deps.store);
  const adminPage = await newPage(browser, app.baseUrl);
  await signInThroughPage(adminPage, admin.email);
  await adminPage.goto('/admin/users');
  await adminPage.getByRole('button', { name: `Reset link for ${person.email}` }).click();
  const link = (await adminPage.getByTestId('password-reset-link').innerText()).trim();
  t.regex(link, /\/set-password#token=/);
  await adminPage.close();
  await page.close();
});

test('confirmation dialogs name their action instead of "Confirm"', async (t) => {
  const { app, browser } = t.context;
  const user = await makeWebUser(app.deps.store);
  const { key } = await createApiKey(app.deps.store, user.email, 'walk key');
  await createKb(app, key, 'Old holiday notes');
  const page = await newPage(browser, app.baseUrl);
  await signInThroughPage(page, user.email);

  const row = page.getByTestId('kb-row').filter({ hasText: 'Old holiday notes' });
  await row.getByRole('button', { name: 'Delete' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete “Old holiday notes”?' });
  t.is((await dialog.getByTestId('confirm-button').innerText()).trim(), 'Delete knowledge base');
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  await page.goto('/settings/api-keys');
  await page.getByTestId('api-key-row').filter({ hasText: 'walk key' }).getByRole('button', { name: 'Revoke' }).click();
  const revoke = page.getByRole('dialog', { name: 'Revoke “walk key”?' });
  t.is((await revoke.getByTestId('confirm-button').innerText()).trim(), 'Revoke key');
  t.is(await page.getByRole('button', { name: 'Confirm', exact: true }).count(), 0);
  await page.close();
});

/** A phone's Ask page with the answer to a question about camera-care.md shown. */
async function askOnPhone(app: TestApp, browser: Browser): Promise<Page> {
  const user = await makeWebUser(app.deps.store);
  const { key } = await createApiKey(app.deps.store, user.email, 'ingest');
  await ingest(app, key, user.defaultKnowledgeBaseId, 'camera-care.md', CARE);
  const page = await phonePage(browser, app.baseUrl);
  await signInThroughPage(page, user.email);
  await page.goto('/ask');
  await page.getByLabel('Model').selectOption('gpt-test');
  await page.getByLabel('Question').fill('How do I clean the lens?');
  await page.getByRole('button', { name: 'Ask' }).click();
  await page.getByTestId('answer').getByText('dry bag').waitFor({ timeout: 60_000 });
  return page;
}

test('citations follow the period, with no space before it', async (t) => {
  const page = await askOnPhone(t.context.app, t.context.browser);
  const text = (await page.getByTestId('answer').locator('.answer__paragraph').first().textContent()) ?? '';
  t.true(text.includes('chamois cloth.1'), `the period before the marker: ${text}`);
  t.true(text.includes('dry bag.1'), `"bag [1] ." too: ${text}`);
  t.false(/\s[.,;:!?]/.test(text), `no space before punctuation: ${text}`);
  await page.close();
});

test('on a phone (390×844), citation markers are tap targets of at least 24×24 px', async (t) => {
  const page = await askOnPhone(t.context.app, t.context.browser);
  const markers = page.getByTestId('answer').getByTestId('citation-marker');
  t.true((await markers.count()) >= 2);
  for (const box of await Promise.all((await markers.all()).map((marker) => marker.boundingBox()))) {
    t.true(box !== null && box.width >= 24 && box.height >= 24, `a marker of ${box?.width}×${box?.height} px`);
  }
  await page.close();
});

test('on a phone, a document row is headed by its filename and title, not a label column', async (t) => {
  const { app, browser } = t.context;
  const user = await makeWebUser(app.deps.store);
  const { key } = await createApiKey(app.deps.store, user.email, 'ingest');
  await ingest(app, key, user.defaultKnowledgeBaseId, 'field-guide.md', CARE);
  const page = await phonePage(browser, app.baseUrl);
  await signInThroughPage(page, user.email);
  await page.getByTestId('kb-row').first().getByRole('link').first().click();
  const row = page.getByTestId('document-row').filter({ hasText: 'field-guide.md' });
  await row.waitFor();
  const cell = row.locator('td').first();
  const filename = cell.getByRole('link', { name: 'field-guide.md' });
  const title = cell.getByText('field-guide', { exact: true });
  const [cellBox, filenameBox, titleBox] = await Promise.all([
    cell.boundingBox(),
    filename.boundingBox(),
    title.boundingBox(),
  ]);
  t.truthy(cellBox && filenameBox && titleBox);
  if (!cellBox || !filenameBox || !titleBox) return;
  t.is(Math.round(filenameBox.x), Math.round(cellBox.x), 'the filename starts the row');
  t.is(Math.round(titleBox.x), Math.round(filenameBox.x), 'the title sits under the filename, not in a label column');
  t.true(titleBox.y > filenameBox.y);
  const label = await cell.evaluate((element) => getComputedStyle(element, '::before').content);
  t.true(label === 'none' || label === 'normal', `no "Document" label beside the title: ${label}`);
  await page.close();
});

test('/docs has a link back to the app', async (t) => {
  const { app, browser } = t.context;
  const page = await newPage(browser, app.baseUrl);
  // The link is in the page's HTML: no need to wait for Redoc's bundle to load.
  await page.goto('/docs', { waitUntil: 'domcontentloaded', timeout: 120_000 });
  // Generous waits: Redoc renders a large description on a machine other tests load too.
  const slow = { timeout: 120_000 };
  await page.getByRole('link', { name: 'Back to the kbqa app' }).click(slow);
  await page.waitForURL((url) => !url.pathname.startsWith('/docs'), slow);
  // The app, whichever page it opens with (sign in, or the first account on an empty database).
  await page.locator('#root h1').first().waitFor(slow);
  t.is(await page.locator('redoc').count(), 0);
  await page.close();
});

test("creating a key with a wrong password says so in the page's words", async (t) => {
  const { app, browser } = t.context;
  const user = await makeWebUser(app.deps.store);
  const page = await newPage(browser, app.baseUrl);
  await signInThroughPage(page, user.email);
  await page.goto('/settings/api-keys');
  await page.getByLabel('Name').fill('laptop');
  await page.getByRole('button', { name: 'Create key' }).click();
  const dialog = page.getByTestId('api-key-password-dialog');
  await dialog.getByLabel('Your password').fill('not my password');
  await dialog.getByRole('button', { name: 'Create key' }).click();
  t.is((await dialog.getByRole('alert').innerText()).trim(), 'That is not your password.');
  await page.close();
});

test("the question's length shows near its limit, and one over it is refused before it is sent", async (t) => {
  const { app, browser } = t.context;
  const user = await makeWebUser(app.deps.store);
  const page = await newPage(browser, app.baseUrl);
  await signInThroughPage(page, user.email);
  await page.goto('/ask');
  const question = page.getByLabel('Question');
  await question.fill('a'.repeat(3_000));
  t.is(await page.getByTestId('question-length').count(), 0, 'no counter far from the limit');
  await question.fill('a'.repeat(3_600));
  await page.getByTestId('question-length').waitFor({ timeout: 5_000 });
  t.is((await page.getByTestId('question-length').innerText()).trim(), '3,600 of 4,000 characters.');
  await question.fill('a'.repeat(4_100));
  t.is((await page.getByTestId('question-length').innerText()).trim(), '4,100 of 4,000 characters: 100 too many.');
  let sent = false;
  page.on('request', (request) => {
    if (/\/api\/web\/(query|conversations)/.test(request.url())) sent = true;
  });
  await page.getByRole('button', { name: 'Ask' }).click();
  const tooLong = (await page.getByRole('alert').innerText()).trim();
  t.regex(tooLong, /^The question is too long: 4,100 characters, and at most 4,000 are taken\./);
  t.false(sent, 'nothing was sent');
  await page.close();
});

test('a spent or unknown link says what that means and what to do, each once', async (t) => {
  const { app, browser } = t.context;
  const page = await newPage(browser, app.baseUrl);
  await page.goto('/set-password#token=not-a-real-token');
  await page.getByText('This link cannot be used.').waitFor();
  const body = await page.locator('body').innerText();
  t.is(body.toLowerCase().split('ask an administrator for a new one').length - 1, 1, body);
  t.false(body.includes('this link is invalid'), body);
  await page.close();
});
