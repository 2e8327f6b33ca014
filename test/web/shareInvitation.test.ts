// Issue 22 item 4 and issue 31 in the real Chromium: a KB shared with Bob is an invitation on his Knowledge bases
// page, apart from his list, saying who shared it and when, with Accept, Decline and Block sender; accepting moves
// it to his list (Leave offered); leaving takes it off. Blocking a sender removes their invitations and lists them
// under "Blocked senders" with Unblock. A database of this file's own.
import { makeWebUser, TEST_PASSWORD } from '../factories/accounts.ts';
import { newPage, screenshot, signInThroughPage, testWithBrowser } from '../helpers/browser.ts';
import { WebClient } from '../helpers/webClient.ts';

const test = testWithBrowser();

async function signedIn(baseUrl: string, email: string): Promise<WebClient> {
  const web = new WebClient(baseUrl);
  await web.signIn(email, TEST_PASSWORD);
  return web;
}

async function share(owner: WebClient, name: string, email: string): Promise<string> {
  const kb = (await owner.call('POST', '/api/web/knowledge-bases', { body: { name } })).body.knowledge_base;
  const shared = await owner.call('POST', `/api/web/knowledge-bases/${kb.id}/sharing/users`, { body: { email } });
  if (shared.status >= 300) throw new Error(`share failed: ${shared.status} ${JSON.stringify(shared.body)}`);
  return kb.id;
}

test('Bob sees who shared a KB and when, accepts it (it joins his list), then leaves it', async (t) => {
  const { app, browser } = t.context;
  const alice = await makeWebUser(app.deps.store, { label: 'alice' });
  const bob = await makeWebUser(app.deps.store, { label: 'bob' });
  const aliceWeb = await signedIn(app.baseUrl, alice.email);
  const kbId = await share(aliceWeb, 'Payroll policy (official)', bob.email);

  const page = await newPage(browser, app.baseUrl);
  await signInThroughPage(page, bob.email);
  const invitation = page.locator(`[data-testid=invitation][data-kb-id="${kbId}"]`);
  await invitation.waitFor();
  const sender = invitation.getByTestId('invitation-sender');
  const said = await sender.innerText();
  t.true(said.startsWith(`Shared by ${alice.email} on `), said);
  t.truthy(await sender.locator('time').getAttribute('datetime'), 'when, machine-readable too');
  for (const name of ['Accept', 'Decline', 'Block sender'])
    t.is(await invitation.getByRole('button', { name }).count(), 1, name);
  t.is(await page.locator(`[data-testid=kb-row][data-kb-id="${kbId}"]`).count(), 0, 'not in his list yet');
  await screenshot(page, 'share-invitation');

  await invitation.getByRole('button', { name: 'Accept' }).click();
  await invitation.waitFor({ state: 'detached' });
  const row = page.locator(`[data-testid=kb-row][data-kb-id="${kbId}"]`);
  await row.getByRole('button', { name: 'Leave' }).waitFor();
  t.regex(await row.innerText(), /viewer/);
  t.notRegex(await row.innerText(), /pending/);
  const bobWeb = await signedIn(app.baseUrl, bob.email);
  t.false(
    (await bobWeb.call('GET', `/api/web/knowledge-bases/${kbId}/membership`)).body.membership.pending,
    'accepted on the server',
  );

  await row.getByRole('button', { name: 'Leave' }).click();
  await page.getByRole('dialog', { name: 'Leave “Payroll policy (official)”?' }).getByTestId('confirm-button').click();
  await row.waitFor({ state: 'detached' });
  t.is(await page.locator('[data-testid=kb-row]').count(), 1, 'only his Default is left');
  t.is((await bobWeb.call('GET', `/api/web/knowledge-bases/${kbId}`)).status, 404, 'left on the server');
  await page.close();
});

test('Bob blocks a sender from an invitation, sees them under Blocked senders, and unblocks them', async (t) => {
  const { app, browser } = t.context;
  const mallory = await makeWebUser(app.deps.store, { label: 'mallory' });
  const bob = await makeWebUser(app.deps.store, { label: 'bob-blocks' });
  const malloryWeb = await signedIn(app.baseUrl, mallory.email);
  const first = await share(malloryWeb, 'URGENT: your kbqa account is suspended', bob.email);
  await share(malloryWeb, 'URGENT: verify your account', bob.email);

  const page = await newPage(browser, app.baseUrl);
  await signInThroughPage(page, bob.email);
  await page.getByTestId('invitation').nth(1).waitFor();
  await page
    .locator(`[data-testid=invitation][data-kb-id="${first}"]`)
    .getByRole('button', { name: 'Block sender' })
    .click();
  const dialog = page.getByRole('dialog', { name: `Block ${mallory.email}?` });
  await dialog.getByRole('button', { name: 'Block sender' }).click();
  const blocked = page.locator(`[data-testid=blocked-sender][data-email="${mallory.email}"]`);
  await blocked.waitFor();
  await page.getByTestId('invitation').first().waitFor({ state: 'detached' });
  t.is(await page.getByTestId('invitation').count(), 0, 'both of her invitations went');
  const bobWeb = await signedIn(app.baseUrl, bob.email);
  t.deepEqual((await bobWeb.call('GET', '/api/web/invitations')).body.invitations, []);

  await blocked.getByRole('button', { name: 'Unblock' }).click();
  await blocked.waitFor({ state: 'detached' });
  t.deepEqual((await bobWeb.call('GET', '/api/web/blocked-senders')).body.blocked_senders, [], 'unblocked');
  await page.close();
});
