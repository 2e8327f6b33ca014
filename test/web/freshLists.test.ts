// A list a mutation changes shows the change, whatever request for it was in flight: the first list request is
// answered by the server at once but held back from the page (Playwright route interception) until the mutation has
// landed, so it carries the list as it was before. The new item must still appear.
import type { Page, Route } from 'playwright-core';
import { makeWebUser } from '../factories/accounts.ts';
import { newPage, signInThroughPage, testWithBrowser } from '../helpers/browser.ts';

const test = testWithBrowser();

/** How long the new item may take to show once the stale answer is delivered: generous, it is a failure bound. */
const APPEARS_WITHIN_MS = 15_000;

interface HeldResponse {
  /** Resolves when the first matching GET was answered by the server (and held). */
  held: Promise<void>;
  /** Delivers the held (stale) answer to the page. */
  release(): Promise<void>;
}

/**
 * Holds the first GET whose path is `path`: the server answers it now (the list before the mutation), the page gets
 * that answer only on release(). Later requests pass through untouched.
 */
async function holdFirstList(page: Page, path: string): Promise<HeldResponse> {
  let deliver: () => void = () => {};
  const delivered = new Promise<void>((resolve) => {
    deliver = resolve;
  });
  let markHeld: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    markHeld = resolve;
  });
  let taken = false;
  const handler = async (route: Route) => {
    if (taken || route.request().method() !== 'GET' || new URL(route.request().url()).pathname !== path) {
      await route.continue();
      return;
    }
    taken = true;
    const response = await route.fetch();
    markHeld();
    await delivered;
    await route.fulfill({ response });
  };
  await page.route(`**${path}*`, handler);
  return {
    held,
    async release() {
      deliver();
      // Let the fulfilment reach the page before the route goes.
      await page.waitForTimeout(50);
      await page.unroute(`**${path}*`, handler);
    },
  };
}

test('a knowledge base created while the list is loading appears in it', async (t) => {
  const { app, browser } = t.context;
  const user = await makeWebUser(app.deps.store, { label: 'fresh-kb' });
  const page = await newPage(browser, app.baseUrl);
  await signInThroughPage(page, user.email);
  await page.goto('/settings/account');
  await page.locator('h1').waitFor();

  const list = await holdFirstList(page, '/api/web/knowledge-bases');
  await page.getByRole('link', { name: 'Knowledge bases' }).first().click();
  await list.held;
  await page.getByLabel('Name').fill('Scratch two');
  const created = page.waitForResponse(
    (response) => response.request().method() === 'POST' && response.url().endsWith('/api/web/knowledge-bases'),
  );
  await page.getByRole('button', { name: 'Create' }).click();
  t.is((await created).status(), 201);
  await page.getByText('Created “Scratch two”.').waitFor();
  await list.release();

  await page.locator('[data-testid=kb-row][data-kb-name="Scratch two"]').waitFor({ timeout: APPEARS_WITHIN_MS });
  t.is(await page.locator('[data-testid=kb-row][data-kb-name="Scratch two"]').count(), 1);
  await page.close();
});

for (const way of ['upload', 'paste'] as const) {
  test(`a document added by ${way} while the document list is loading appears in it`, async (t) => {
    const { app, browser } = t.context;
    const user = await makeWebUser(app.deps.store, { label: `fresh-${way}` });
    const page = await newPage(browser, app.baseUrl);
    await signInThroughPage(page, user.email);

    const documentsPath = `/api/web/knowledge-bases/${user.defaultKnowledgeBaseId}/documents`;
    const list = await holdFirstList(page, documentsPath);
    await page.goto(`/knowledge-bases/${user.defaultKnowledgeBaseId}`);
    await list.held;
    const filename = `${way}-note.md`;
    const added = page.waitForResponse(
      (response) => response.request().method() === 'POST' && response.url().endsWith('/api/web/documents'),
    );
    if (way === 'upload') {
      await page
        .getByLabel('Upload files')
        .setInputFiles([
          { name: filename, mimeType: 'text/markdown', buffer: Buffer.from('# Note\n\nThe canteen opens at noon.\n') },
        ]);
    } else {
      await page.getByRole('textbox', { name: 'Filename', exact: true }).fill(filename);
      await page.getByRole('textbox', { name: 'Text', exact: true }).fill('# Note\n\nThe canteen opens at noon.\n');
      await page.getByRole('button', { name: 'Add text' }).click();
    }
    t.is((await added).status(), 202);
    await list.release();

    const row = page.locator(`[data-testid=document-row][data-filename="${filename}"]`);
    await row.waitFor({ timeout: APPEARS_WITHIN_MS });
    await row.and(page.locator('[data-status=ready]')).waitFor({ timeout: 60_000 });
    t.is(await row.count(), 1);
    await page.close();
  });
}
