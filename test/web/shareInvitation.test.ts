// Issue 22 item 4 in the real Chromium: a KB shared with Bob shows as pending on his Knowledge bases page with
// Accept and Decline; accepting puts it in his default scope (no longer pending, Leave offered); leaving takes it off
// his list. A database of this file's own.
import { makeWebUser, TEST_PASSWORD } from '../factories/accounts.ts';
import { newPage, screenshot, testWithBrowser } from '../helpers/browser.ts';
import { WebClient } from '../helpers/webClient.ts';

const test = testWithBrowser();

test('Bob sees a share pending with Accept and Decline, accepts it, then leaves it', async (t) => {
  const { app, browser } = t.context;
  const alice = await makeWebUser(app.deps.store, { label: 'alice' });
  const bob = await makeWebUser(app.deps.store, { label: 'bob' });
  const aliceWeb = new WebClient(app.baseUrl);
  await aliceWeb.signIn(alice.email, TEST_PASSWORD);
  const kb = (await aliceWeb.call('POST', '/api/web/knowledge-bases', { body: { name: 'Payroll policy (official)' } }))
    .body.knowledge_base;
  t.is(
    (await aliceWeb.call('POST', `/api/web/knowledge-bases/${kb.id}/sharing/users`, { body: { email: bob.email } }))
      .status,
    201,
  );

  const page = await newPage(browser, app.baseUrl);
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(bob.email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const row = page.locator(`[data-testid=kb-row][data-kb-id="${kb.id}"]`);
  await row.waitFor();
  t.regex(await row.innerText(), /viewer/);
  t.regex(await row.innerText(), /pending/, 'marked pending');
  t.is(await row.getByRole('button', { name: 'Accept' }).count(), 1);
  t.is(await row.getByRole('button', { name: 'Decline' }).count(), 1);
  t.is(await row.getByRole('button', { name: 'Leave' }).count(), 0);
  await screenshot(page, 'share-pending');

  await row.getByRole('button', { name: 'Accept' }).click();
  await row.getByRole('button', { name: 'Leave' }).waitFor();
  t.notRegex(await row.innerText(), /pending/, 'no longer pending');
  t.is(await row.getByRole('button', { name: 'Accept' }).count(), 0);
  const bobWeb = new WebClient(app.baseUrl);
  await bobWeb.signIn(bob.email, TEST_PASSWORD);
  t.deepEqual(
    (await bobWeb.call('GET', `/api/web/knowledge-bases/${kb.id}/membership`)).body.membership.pending,
    false,
    'accepted on the server',
  );

  await row.getByRole('button', { name: 'Leave' }).click();
  await page.getByRole('dialog', { name: 'Leave “Payroll policy (official)”?' }).getByTestId('confirm-button').click();
  await row.waitFor({ state: 'detached' });
  t.is(await page.locator('[data-testid=kb-row]').count(), 1, 'only his Default is left');
  t.is((await bobWeb.call('GET', `/api/web/knowledge-bases/${kb.id}`)).status, 404, 'left on the server');
  await page.close();
});
