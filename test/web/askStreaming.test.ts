// The Ask page as a person on a phone uses it: the answer appears as it is written (streamed), is brought into view
// and focused when it starts, and a polite live region holds it once complete. (Issue 23, item 5.)
import type { Browser, Page } from 'playwright-core';
import { createApiKey } from '../../service/commands/apiKeys.ts';
import { makeWebUser, TEST_PASSWORD } from '../factories/accounts.ts';
import type { TestApp } from '../helpers/app.ts';
import { testWithBrowser } from '../helpers/browser.ts';
import { ingest } from '../helpers/documentsApi.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fakeOpenAI.ts';

interface Context {
  app: TestApp;
  fake: FakeOpenAI;
  browser: Browser;
}

const test = testWithBrowser<Omit<Context, 'app' | 'browser'>>({
  env: async (t) => {
    t.context.fake = await startFakeOpenAI();
    // Seven characters a token, 60 ms apart: the reply takes about two seconds to write, in ~20 pieces.
    t.context.fake.script({ reply: REPLY, tokenChars: 7, tokenDelayMs: 60 });
    return {
      KBQA_OPENAI_BASE_URL: t.context.fake.baseUrl,
      KBQA_OPENAI_API_KEY: 'test',
      KBQA_OPENAI_MODELS: 'gpt-test',
    };
  },
});
const REPLY =
  'The causeway floods two hours before high water [1]. The lighthouse was automated in 1987 [1]. Visitors cross at low tide only [1].';
const TIDES =
  '# Corran tides\n\nThe causeway to Corran island floods two hours before high water. The lighthouse on the island was automated in 1987. Visitors cross at low tide only.\n';

test.after.always(async (t) => {
  await t.context.fake?.close();
});

/** A phone (390×844) that asks for reduced motion, so the scroll into view is immediate. */
async function phonePage(t: { context: Context }): Promise<Page> {
  const context = await t.context.browser.newContext({
    baseURL: t.context.app.baseUrl,
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
    reducedMotion: 'reduce',
  });
  return context.newPage();
}

test('on a phone the answer streams in, is scrolled into view and focused, and the live region holds it', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const { key } = await createApiKey(app.deps.store, user.email, 'ingest');
  await ingest(app, key, user.defaultKnowledgeBaseId, 'corran-tides.md', TIDES);

  const page = await phonePage(t);
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/sign-in'));
  await page.goto('/ask');
  await page.getByText('Ctrl+Enter asks.').waitFor();
  await page.getByLabel('Model').selectOption('gpt-test');
  await page.getByLabel('Question').fill('When does the causeway flood?');

  // Every length the answer's text takes, as the page renders it.
  await page.evaluate(() => {
    const seen: number[] = [];
    (window as unknown as { answerLengths: number[] }).answerLengths = seen;
    new MutationObserver(() => {
      const length = document.querySelector('[data-testid="answer"]')?.textContent?.length ?? 0;
      if (length > 0 && seen.at(-1) !== length) seen.push(length);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await page.getByRole('button', { name: 'Ask' }).click();

  const announcement = page.getByTestId('answer-announcement');
  await announcement.getByText('The causeway floods two hours before high water').waitFor({ timeout: 60_000 });
  t.is((await announcement.getAttribute('aria-live')) ?? '', 'polite');
  const announced = (await announcement.innerText()).trim();
  t.true(
    announced.startsWith('Answer: The causeway floods') && announced.includes('Visitors cross at low tide only'),
    announced,
  );

  const lengths = await page.evaluate(() => (window as unknown as { answerLengths: number[] }).answerLengths);
  t.true(lengths.length >= 5, `the answer grew in steps: ${JSON.stringify(lengths)}`);
  t.true(lengths[0] < lengths.at(-1)!, 'it started shorter than it ended');

  const placed = await page.evaluate(() => {
    const heading = document.querySelector('[id^="answer-heading-"]');
    const box = heading?.getBoundingClientRect();
    return {
      focused: document.activeElement?.id ?? null,
      top: box?.top ?? -1,
      bottom: box?.bottom ?? -1,
      height: window.innerHeight,
    };
  });
  t.regex(placed.focused ?? '', /^answer-heading-/);
  t.true(
    placed.top >= 0 && placed.bottom <= placed.height,
    `the answer's heading is in view: ${JSON.stringify(placed)}`,
  );
  await page.context().close();
});
