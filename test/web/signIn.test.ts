// Signing in beside someone else on the same address (an office, a proxy, this machine): another browser's wrong
// passwords do not lock this person out, and a refusal states its wait once, in one unit. (Issue 24, finding 3.)
import type { Page } from 'playwright-core';
import { makeWebUser, TEST_PASSWORD } from '../factories/accounts.ts';
import { newPage, testWithBrowser } from '../helpers/browser.ts';

const test = testWithBrowser();

async function trySignIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

test('a wrong password in a second browser on the same address does not lock out the first person', async (t) => {
  const { app, browser } = t.context;
  const first = await makeWebUser(app.deps.store);
  const second = await makeWebUser(app.deps.store);
  const other = await newPage(browser, app.baseUrl);
  await other.goto('/sign-in');
  // The second browser mistypes its own password until it is refused.
  for (let attempt = 0; attempt < 5; attempt += 1) {
    await trySignIn(other, second.email, `wrong password ${attempt}`);
    await other.getByText('email or password is incorrect').waitFor();
  }
  await trySignIn(other, second.email, 'wrong password again');
  const refusal = other.getByRole('alert');
  await refusal.getByText('Try again in').waitFor();
  const text = (await refusal.innerText()).trim();
  t.regex(text, /signing in is paused\. Try again in \d+ (seconds?|minutes?)\./);
  t.is(text.split(/try again/i).length, 2, `the wait is stated once: ${text}`);

  // The first person, same address, mistypes once, then signs in.
  const page = await newPage(browser, app.baseUrl);
  await page.goto('/sign-in');
  await trySignIn(page, first.email, 'a typo in it');
  await page.getByText('email or password is incorrect').waitFor();
  await trySignIn(page, first.email, TEST_PASSWORD);
  await page.waitForURL((url) => !url.pathname.startsWith('/sign-in'));
  t.false(new URL(page.url()).pathname.startsWith('/sign-in'), 'signed in');
});
