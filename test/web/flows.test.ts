// The web app end to end, in the real Chromium against the real stack: the issue's flows, in order, as one person
// (then a second) would do them, on the harness's database of the file's own (the first flow needs one without users).
// Screenshots of every page are taken on the way (desktop), and by the last test at phone width.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { createApiKey } from '../../service/commands/apiKeys.ts';
import { createPasswordLink } from '../../service/commands/passwords.ts';
import type { UserRecord } from '../../service/store/index.ts';
import { makeWebUser, TEST_PASSWORD, uniqueEmail } from '../factories/accounts.ts';
import type { TestApp } from '../helpers/app.ts';
import { newPage, screenshot, screenshotBothWidths, testWithBrowser } from '../helpers/browser.ts';

/** One run's state, carried from test to test (serial): ava gives each test its own copy of state. */
interface State {
  app: TestApp;
  browser: Browser;
  /** The first account's page, signed in, carried from test to test (serial). */
  owner: Page;
  ownerEmail: string;
  kbId: string;
  documentIds: Record<string, string>;
}

const state = { documentIds: {} } as State;
const harness = testWithBrowser();
const test = harness.serial;
const ownerPassword = 'first account passphrase';

const VACATION =
  '# Vacation policy\n\nEmployees receive twenty-five days of paid vacation per calendar year.\n\nUnused vacation days carry over until the end of March of the following year.\n';
const EXPENSES =
  '# Expense policy\n\nTravel expenses are reimbursed within fourteen days when the receipts are submitted through the finance portal.\n';

harness.before((t) => {
  state.app = t.context.app;
  state.browser = t.context.browser;
});

/** What the page's own session would send: for requests made beside the UI with the browser's cookies. */
async function csrfTokenOf(page: Page): Promise<string> {
  const session = await page.context().request.get('/api/web/session');
  return (await session.json()).csrf_token;
}

test('first run: the app offers "Create the first account"; the new admin lands on their knowledge bases', async (t) => {
  const { app, browser } = state;
  const page = await newPage(browser, app.baseUrl);
  state.owner = page;
  await page.goto('/');
  await page.waitForURL('**/first-account');
  await page.getByRole('heading', { name: 'Create the first account' }).waitFor();
  await screenshotBothWidths(page, 'first-account');

  state.ownerEmail = uniqueEmail('owner');
  // Keyboard only: the fields and the button are reached with Tab, and Enter submits.
  await page.getByLabel('Email').focus();
  await page.keyboard.type(state.ownerEmail);
  await page.keyboard.press('Tab');
  t.is(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.type), 'password');
  await page.keyboard.type('too short');
  await page.keyboard.press('Enter');
  t.is(new URL(page.url()).pathname, '/first-account', 'a short password is refused before anything is created');
  await page.getByLabel('Password', { exact: true }).fill(ownerPassword);
  const confirm = page.getByLabel('Confirm password');
  if (await confirm.count()) await confirm.fill(ownerPassword);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL('**/knowledge-bases');
  await page.getByTestId('kb-row').first().waitFor();
  t.is(await page.getByTestId('kb-row').count(), 1, 'the Default knowledge base');
  t.truthy(await page.getByRole('link', { name: 'Admin' }).count(), 'the first account is an admin');
  const cookies = await page.context().cookies();
  const session = cookies.find((cookie) => cookie.name === 'kbqa_session');
  t.like(session, { httpOnly: true, sameSite: 'Lax' });
});

test('create a knowledge base, upload two markdown files (file picker and drag and drop), both reach ready', async (t) => {
  const { owner: page } = state;
  await page.getByLabel('Name').fill('Handbook');
  await page.getByRole('button', { name: 'Create' }).click();
  const row = page.locator('[data-testid=kb-row][data-kb-name="Handbook"]');
  await row.waitFor();
  state.kbId = (await row.getAttribute('data-kb-id')) as string;
  await screenshot(page, 'knowledge-bases');

  await row.getByRole('link', { name: 'Handbook' }).click();
  await page.waitForURL(`**/knowledge-bases/${state.kbId}`);
  await page.getByTestId('dropzone').waitFor();
  await page
    .getByLabel('Upload files')
    .setInputFiles([{ name: 'vacation-policy.md', mimeType: 'text/markdown', buffer: Buffer.from(VACATION) }]);
  const dataTransfer = await page.evaluateHandle((content) => {
    const transfer = new DataTransfer();
    transfer.items.add(new File([content], 'expense-policy.md', { type: 'text/markdown' }));
    return transfer;
  }, EXPENSES);
  await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer });

  for (const filename of ['vacation-policy.md', 'expense-policy.md']) {
    const documentRow = page.locator(`[data-testid=document-row][data-filename="${filename}"]`);
    await documentRow.and(page.locator('[data-status=ready]')).waitFor({ timeout: 60_000 });
    state.documentIds[filename] = (await documentRow.getAttribute('data-document-id')) as string;
  }
  t.is(await page.getByTestId('document-row').count(), 2);
  await screenshot(page, 'knowledge-base');

  await page
    .getByLabel('Upload files')
    .setInputFiles([{ name: 'slides.pptx', mimeType: 'application/octet-stream', buffer: Buffer.from('x') }]);
  await page.getByText('slides.pptx').first().waitFor();
  t.is(await page.getByTestId('document-row').count(), 2, 'a file of another kind is refused, not uploaded');
});

test('ask: the answer cites the right document, and a marker click shows its card', async (t) => {
  const { owner: page } = state;
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Ask' }).click();
  await page.waitForURL('**/ask');
  await page.getByLabel('Question').fill('How many days of paid vacation do employees receive?');
  await page.getByLabel('Show retrieved chunks').check();
  await page.getByRole('button', { name: 'Ask', exact: true }).click();
  await page.getByTestId('answer').waitFor({ timeout: 30_000 });
  const answer = await page.getByTestId('answer').innerText();
  t.regex(answer, /twenty-five days/);

  const firstCard = page.getByTestId('citation-card').first();
  t.regex(await firstCard.innerText(), /vacation-policy/);
  const marker = page.getByTestId('citation-marker').first();
  // The marker's target is its own turn's card n.
  const cardId = ((await marker.getAttribute('href')) ?? '').slice(1);
  t.regex(cardId, /-citation-\d+$/);
  await marker.click();
  const card = page.locator(`[id="${cardId}"]`);
  await page.waitForFunction(
    (id) => document.activeElement?.id === id || document.activeElement?.closest(`[id="${id}"]`) !== null,
    cardId,
  );
  t.regex((await card.getAttribute('class')) ?? '', /citation-card--active/);
  t.true((await page.getByTestId('chunk-row').count()) > 0, 'retrieved chunks with their ranks and scores');
  await screenshot(page, 'ask');

  await card.getByRole('link', { name: 'Open document' }).click();
  await page.waitForURL(`**/documents/${state.documentIds['vacation-policy.md']}`);
  await page.getByText('vacation-policy.md').first().waitFor();
  await screenshot(page, 'document');
});

test('Settings → API Keys: the password confirms a new key, used with /api/v1/me (200), revoked in the UI, then 401', async (t) => {
  const { owner: page, app } = state;
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.waitForURL('**/settings/api-keys');
  await page.getByLabel('Name').fill('curl on my laptop');
  await page.getByRole('button', { name: 'Create key' }).click();
  // A key outlives the session: the dialog asks for the password, and a wrong one mints nothing.
  const dialog = page.getByTestId('api-key-password-dialog');
  await dialog.getByLabel('Your password').fill('not my password at all');
  await dialog.getByRole('button', { name: 'Create key' }).click();
  await dialog.getByText('That is not your password.').waitFor();
  t.is(await page.getByTestId('api-key-value').count(), 0);
  await screenshot(page, 'api-key-password');
  await dialog.getByLabel('Your password').fill(ownerPassword);
  await dialog.getByRole('button', { name: 'Create key' }).click();
  const key = (await page.getByTestId('api-key-value').innerText()).trim();
  t.regex(key, /^kbqa_live_[0-9A-Za-z]{40}$/);
  await page.getByText('will not be shown again').waitFor();
  await screenshot(page, 'api-keys');

  const me = await fetch(`${app.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  t.deepEqual([me.status, (await me.json()).email], [200, state.ownerEmail]);

  await page.getByRole('button', { name: 'Done' }).click();
  t.is(await page.getByTestId('api-key-value').count(), 0, 'the key is gone from the page once dismissed');
  const keyRow = page.getByTestId('api-key-row').filter({ hasText: 'curl on my laptop' });
  await keyRow.getByRole('button', { name: 'Revoke' }).click();
  await page.getByTestId('confirm-button').click();
  await keyRow.getByText('revoked', { exact: false }).waitFor();
  const after = await fetch(`${app.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  t.is(after.status, 401);
  t.false((await page.content()).includes(key), 'the page never shows the key again');
});

test('a viewer sees no upload, replace or delete controls, and the server refuses those requests anyway', async (t) => {
  const { owner: page, app, browser, kbId } = state;
  const viewerUser = await makeWebUser(app.deps.store, { label: 'viewer' });
  await page.getByRole('link', { name: 'Knowledge bases' }).click();
  const row = page.locator(`[data-testid=kb-row][data-kb-id="${kbId}"]`);
  await row.getByRole('button', { name: 'Share' }).click();
  await page.getByLabel('Email').last().fill(viewerUser.email);
  await page.getByRole('button', { name: 'Share', exact: true }).last().click();
  await page.locator(`[data-testid=sent-invitation][data-email="${viewerUser.email}"]`).waitFor();
  await screenshotBothWidths(page, 'share-dialog');
  await page.keyboard.press('Escape');

  const viewer = await newPage(browser, app.baseUrl);
  await viewer.goto('/knowledge-bases');
  await viewer.waitForURL('**/sign-in**');
  await screenshot(viewer, 'sign-in');
  await viewer.getByLabel('Email').fill(viewerUser.email);
  await viewer.getByLabel('Password').fill(TEST_PASSWORD);
  await viewer.getByRole('button', { name: 'Sign in' }).click();
  // A share is an invitation until accepted (test/web/shareInvitation.test.ts).
  await viewer
    .locator(`[data-testid=invitation][data-kb-id="${kbId}"]`)
    .getByRole('button', { name: 'Accept' })
    .click();
  const sharedRow = viewer.locator(`[data-testid=kb-row][data-kb-id="${kbId}"]`);
  await sharedRow.waitFor();
  t.regex(await sharedRow.innerText(), /viewer/);
  t.is(await sharedRow.getByRole('button', { name: 'Delete' }).count(), 0);
  t.is(await sharedRow.getByRole('button', { name: 'Share' }).count(), 0);

  await viewer.goto(`/knowledge-bases/${kbId}`);
  await viewer.locator('[data-testid=document-row][data-status=ready]').first().waitFor();
  t.is(await viewer.getByTestId('dropzone').count(), 0, 'no upload area');
  t.is(await viewer.getByLabel('Upload files').count(), 0);
  t.is(await viewer.getByRole('button', { name: 'Delete' }).count(), 0);
  t.is(await viewer.getByRole('button', { name: /Replace/ }).count(), 0);
  t.is(await viewer.getByText('Paste text').count(), 0);

  const token = await csrfTokenOf(viewer);
  const request = viewer.context().request;
  const headers = { 'x-csrf-token': token };
  const upload = await request.post('/api/web/documents', {
    headers,
    data: { kb_id: kbId, filename: 'sneaky.md', content: 'no' },
  });
  const remove = await request.delete(`/api/web/documents/${state.documentIds['vacation-policy.md']}`, { headers });
  const removeKb = await request.delete(`/api/web/knowledge-bases/${kbId}`, { headers });
  t.deepEqual([upload.status(), remove.status(), removeKb.status()], [403, 403, 403]);
  await viewer.close();
});

test("a second user sees none of the first user's private knowledge bases", async (t) => {
  const { app, browser, kbId } = state;
  const stranger = await makeWebUser(app.deps.store, { label: 'stranger' });
  const page = await newPage(browser, app.baseUrl);
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(stranger.email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('kb-row').first().waitFor();
  const names = await page
    .getByTestId('kb-row')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-kb-id')));
  t.deepEqual(names, [stranger.defaultKnowledgeBaseId]);
  await page.goto(`/knowledge-bases/${kbId}`);
  await page.getByText('This knowledge base does not exist, or you cannot see it.').waitFor();
  t.is(await page.getByTestId('document-row').count(), 0);
  await page.close();
});

test('CSRF-less and cross-site requests are refused', async (t) => {
  const { owner: page, app } = state;
  const before = (await (await page.context().request.get('/api/web/knowledge-bases')).json()).knowledge_bases.length;
  // With the session cookie but without the token.
  const tokenless = await page.context().request.post('/api/web/knowledge-bases', { data: { name: 'forged' } });
  t.is(tokenless.status(), 403);

  // A page on another site (localhost is not 127.0.0.1) posting a form and calling fetch at the app.
  const attacker = await serveAttackerPage(app.baseUrl);
  try {
    const attackerPage = await page.context().newPage();
    await attackerPage.goto(`${attacker.url}/fetch`);
    const fetched = await attackerPage.evaluate(() => (window as unknown as { outcome: Promise<string> }).outcome);
    t.regex(fetched, /^(blocked|403)/, 'a cross-site fetch with the cookie never succeeds');
    await attackerPage.goto(`${attacker.url}/form`);
    await attackerPage.waitForURL(`${app.baseUrl}/**`);
    const body = JSON.parse((await attackerPage.textContent('body')) ?? '');
    // 403 from the CSRF defence (Sec-Fetch-Site: cross-site), not merely 401 for the cookie SameSite kept back.
    t.is(body.error.code, 'forbidden');
    await attackerPage.close();
  } finally {
    await attacker.close();
  }
  const afterList = (await (await page.context().request.get('/api/web/knowledge-bases')).json()).knowledge_bases;
  t.is(afterList.length, before, 'nothing was created');
  t.false(afterList.some((kb: { name: string }) => kb.name === 'forged'));
});

test('the admin invites a user (link shown once); the link sets a password and signs them in', async (t) => {
  const { owner: page, app, browser } = state;
  await page.getByRole('link', { name: 'Admin' }).click();
  await page.waitForURL('**/admin/users');
  const email = uniqueEmail('invitee');
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: /Invite/ }).click();
  const link = (await page.getByText('/set-password#token=').first().innerText()).trim();
  t.regex(link, /\/set-password#token=[\w-]{43}$/);
  await screenshot(page, 'admin-users');

  const invitee = await newPage(browser, app.baseUrl);
  await invitee.goto(link.slice(link.indexOf('/set-password')));
  await invitee.getByText(email).first().waitFor();
  await screenshotBothWidths(invitee, 'set-password');
  const fields = invitee.locator('input[type=password]');
  for (let index = 0; index < (await fields.count()); index += 1)
    await fields.nth(index).fill('invited person passphrase');
  await invitee.getByRole('button', { name: /password/i }).click();
  await invitee.waitForURL('**/knowledge-bases');
  await invitee.getByTestId('kb-row').first().waitFor();
  t.is(await invitee.getByTestId('kb-row').count(), 1, 'their own Default knowledge base');
  await invitee.close();
});

test('a reset link\'s page offers "Also revoke all my API keys", ticked; using it stops the user\'s keys', async (t) => {
  const { app, browser } = state;
  const user = await makeWebUser(app.deps.store, { label: 'reset' });
  const { key } = await createApiKey(app.deps.store, user.email, 'ci');
  const record = await app.deps.store.findUserById(user.id);
  const link = await createPasswordLink(app.deps.store, app.deps.config.web, record as UserRecord, 'reset');
  const resetPage = await newPage(browser, app.baseUrl);
  try {
    await resetPage.goto(link.url.slice(link.url.indexOf('/set-password')));
    const revoke = resetPage.getByLabel('Also revoke all my API keys');
    t.true(await revoke.isChecked(), 'a reset is what someone asks for who fears another has their account');
    const fields = resetPage.locator('input[type=password]');
    for (let index = 0; index < (await fields.count()); index += 1)
      await fields.nth(index).fill('a passphrase after the scare');
    await resetPage.getByRole('button', { name: /password/i }).click();
    await resetPage.waitForURL('**/knowledge-bases');
    t.is((await fetch(`${app.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })).status, 401);
  } finally {
    await resetPage.close();
  }
});

test('Settings → Account, then sign-out ends the session', async (t) => {
  const { owner: page, app } = state;
  await page.goto('/settings/account');
  await page.getByRole('button', { name: /Sign out everywhere/ }).waitFor();
  await screenshot(page, 'account');
  await page.goto('/no-such-page');
  await page.getByRole('heading', { name: 'Page not found' }).waitFor();
  await screenshot(page, 'not-found');
  await page.goto('/settings/account');
  await page.getByRole('button', { name: /Sign out everywhere/ }).waitFor();
  const cookie = (await page.context().cookies()).find((item) => item.name === 'kbqa_session');
  t.truthy(cookie);
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.waitForURL('**/sign-in**');
  const replayed = await fetch(`${app.baseUrl}/api/web/me`, { headers: { cookie: `kbqa_session=${cookie?.value}` } });
  t.is(replayed.status, 401, 'the old session id is dead on the server, not only forgotten by the browser');
  await page.goto('/knowledge-bases');
  await page.waitForURL('**/sign-in**');
});

test('every page at phone width (375 px): nothing overflows sideways; screenshots', async (t) => {
  const { app, browser, kbId, documentIds } = state;
  const page = await newPage(browser, app.baseUrl, { viewport: 'phone' });
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await page.goto('/sign-in');
  await page.getByLabel('Email').waitFor();
  t.true((await overflow()) <= 0, 'sign-in');
  await screenshot(page, 'sign-in');
  await page.getByLabel('Email').fill(state.ownerEmail);
  await page.getByLabel('Password').fill(ownerPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('kb-row').first().waitFor();
  for (const [name, path, ready] of [
    ['knowledge-bases', '/knowledge-bases', '[data-testid=kb-row]'],
    ['knowledge-base', `/knowledge-bases/${kbId}`, '[data-testid=document-row]'],
    ['document', `/documents/${documentIds['vacation-policy.md']}`, 'h1'],
    ['api-keys', '/settings/api-keys', '[data-testid=api-key-row]'],
    ['account', '/settings/account', 'h1'],
    ['admin-users', '/admin/users', 'main table, main li'],
    ['not-found', '/no-such-page', 'h1'],
  ] as const) {
    await page.goto(path);
    await page.locator(ready).first().waitFor();
    t.true((await overflow()) <= 0, `${name} fits 375 px`);
    await screenshot(page, name);
  }
  await page.goto('/ask');
  await page.getByLabel('Question').fill('When are travel expenses reimbursed?');
  await page.getByRole('button', { name: 'Ask', exact: true }).click();
  await page.getByTestId('citation-card').first().waitFor({ timeout: 30_000 });
  t.regex(await page.getByTestId('citation-card').first().innerText(), /expense-policy/);
  t.true((await overflow()) <= 0, 'ask fits 375 px');
  await screenshot(page, 'ask');
  await page.close();
});

/** A page on another site: one `fetch` with credentials and a forged header, one auto-submitting form. */
async function serveAttackerPage(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    response.setHeader('content-type', 'text/html');
    if (request.url === '/fetch') {
      response.end(`<script>
        window.outcome = fetch(${JSON.stringify(`${target}/api/web/knowledge-bases`)}, {
          method: 'POST', credentials: 'include',
          headers: { 'content-type': 'application/json', 'x-csrf-token': 'guess' },
          body: JSON.stringify({ name: 'forged' }),
        }).then((r) => String(r.status), () => 'blocked');
      </script>`);
    } else {
      response.end(`<form method="POST" action="${target}/api/web/knowledge-bases" enctype="text/plain">
        <input name='{"name":"forged","x":"' value='"}'></form><script>document.forms[0].submit()</script>`);
    }
  });
  server.listen(0, 'localhost');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
