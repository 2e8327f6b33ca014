// The Ask page as a conversation (issue 33 §4 and §5), in Chromium: three turns streamed, in order, under a URL that
// names the conversation (Back from a cited document and a reload keep it); a 👎 with a comment, stored (read back
// through the API); rename and delete from the list; the owner's ratings view showing the question rated down; and
// on a phone (390×844) the question box still in view after three turns, with no horizontal scroll.
import type { Page } from 'playwright-core';
import { createApiKey } from '../../service/commands/apiKeys.ts';
import { makeWebUser } from '../factories/accounts.ts';
import type { TestApp } from '../helpers/app.ts';
import { newPage, screenshot, signInThroughPage, testWithBrowser } from '../helpers/browser.ts';
import { ingest } from '../helpers/documentsApi.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fakeOpenAI.ts';

const FERRY =
  '# Ferry fares\n\nAn adult return ticket on the ferry costs 12 euros. Children under twelve travel free. Bicycles cost 3 euros each way.\n';
const QUESTIONS = ['How much is an adult return ticket on the ferry?', 'And for children?', 'What about bicycles?'];
const ANSWERS = [
  'An adult return ticket costs 12 euros [1].',
  'Children under twelve travel free [1].',
  'Bicycles cost 3 euros each way [1].',
];

let fake: FakeOpenAI | undefined;
/** The answers in turn order (one per streamed request); a follow-up is condensed (not streamed) to its topic. */
function scriptTurns(): void {
  let streamed = 0;
  fake?.script({
    reply: (request) =>
      request.stream ? ANSWERS[streamed++ % ANSWERS.length] : 'ferry fares for adults children bicycles',
    tokenChars: 6,
    tokenDelayMs: 40,
  });
}
const test = testWithBrowser({
  env: async () => {
    fake = await startFakeOpenAI();
    scriptTurns();
    return { KBQA_OPENAI_BASE_URL: fake.baseUrl, KBQA_OPENAI_API_KEY: 'test', KBQA_OPENAI_MODELS: 'gpt-test' };
  },
});
test.after.always(() => fake?.close());

/** A user with ferry.md in their default KB, signed in, and an API key of theirs to read what the page stored. */
async function ferryOwner(app: TestApp) {
  const user = await makeWebUser(app.deps.store, { label: 'ferry' });
  const { key } = await createApiKey(app.deps.store, user.email, 'read back');
  await ingest(app, key, user.defaultKnowledgeBaseId, 'ferry.md', FERRY);
  return { user, key };
}

/** Asks the three questions in turn, each answered (streamed) before the next; the third's growth is recorded. */
async function askThreeTurns(page: Page): Promise<number[]> {
  await page.goto('/ask');
  await page.getByLabel('Model').selectOption('gpt-test');
  for (const [index, question] of QUESTIONS.entries()) {
    if (index === 2) {
      await page.evaluate(() => {
        const seen: number[] = [];
        (window as unknown as { thirdLengths: number[] }).thirdLengths = seen;
        new MutationObserver(() => {
          const length = document.querySelectorAll('[data-testid="turn"]')[2]?.querySelector('[data-testid="answer"]')
            ?.textContent?.length;
          if (length && seen.at(-1) !== length) seen.push(length);
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
      });
    }
    await page.getByLabel('Question').fill(question);
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    await page.getByTestId('turn').nth(index).getByText('Model: gpt-test').waitFor({ timeout: 60_000 });
  }
  return page.evaluate(() => (window as unknown as { thirdLengths: number[] }).thirdLengths);
}

const turnTexts = (page: Page, testId: 'turn-question' | 'answer') =>
  page
    .getByTestId(testId)
    .allInnerTexts()
    .then((texts) => texts.map((text) => text.replace(/\s+/g, ' ').trim()));

test.serial(
  'three turns stream in order under /ask/<id>; Back from a cited document and a reload keep them',
  async (t) => {
    const { app, browser } = t.context;
    scriptTurns();
    const { user, key } = await ferryOwner(app);
    const page = await newPage(browser, app.baseUrl);
    await signInThroughPage(page, user.email);

    const lengths = await askThreeTurns(page);
    t.true(lengths.length >= 3, `the third answer grew in steps: ${JSON.stringify(lengths)}`);
    t.true(lengths[0] < lengths.at(-1)!, 'it started shorter than it ended');
    const id = /^\/ask\/([0-9a-f-]{36})$/.exec(new URL(page.url()).pathname)?.[1];
    t.truthy(id, `the URL names the conversation: ${page.url()}`);
    t.deepEqual(await turnTexts(page, 'turn-question'), QUESTIONS);
    const answers = await turnTexts(page, 'answer');
    t.is(answers.length, 3);
    for (const [index, expected] of ANSWERS.entries()) {
      t.true(answers[index].startsWith(expected.slice(0, 20)), `turn ${index + 1}: ${answers[index]}`);
    }
    t.regex(await page.getByTestId('answer-announcement').innerText(), /^Answer: Bicycles cost 3 euros/);
    // The conversation is listed, titled by its first question, and marked as the one open.
    const row = page.getByTestId('conversation-row').filter({ hasText: QUESTIONS[0] });
    t.is(await row.getByRole('link').getAttribute('aria-current'), 'page');
    await screenshot(page, 'ask-conversation');

    // A cited document, then Back: the same conversation, its three turns.
    await page.getByTestId('turn').first().getByRole('link', { name: 'Open document' }).first().click();
    await page.waitForURL('**/documents/**');
    await page.getByText('ferry.md').first().waitFor();
    await page.goBack();
    await page.waitForURL(`**/ask/${id}`);
    await page.getByTestId('turn').nth(2).getByTestId('answer').getByText('Bicycles cost 3 euros').waitFor();
    t.deepEqual(await turnTexts(page, 'turn-question'), QUESTIONS);

    await page.reload();
    await page.getByTestId('turn').nth(2).getByTestId('answer').getByText('Bicycles cost 3 euros').waitFor();
    t.is(new URL(page.url()).pathname, `/ask/${id}`);
    t.deepEqual(await turnTexts(page, 'turn-question'), QUESTIONS);

    // The API has the same three turns.
    const stored = await app.call('GET', `/api/v1/conversations/${id}`, { key });
    t.deepEqual(
      stored.body.conversation.messages
        .filter((m: { role: string }) => m.role === 'user')
        .map((m: { content: string }) => m.content),
      QUESTIONS,
    );
    await page.close();
  },
);

test.serial(
  'a 👎 with a comment is stored; the owner sees the question rated down; rename and delete from the list',
  async (t) => {
    const { app, browser } = t.context;
    scriptTurns();
    const { user, key } = await ferryOwner(app);
    const page = await newPage(browser, app.baseUrl);
    await signInThroughPage(page, user.email);
    await askThreeTurns(page);
    const id = new URL(page.url()).pathname.split('/').at(-1) as string;

    const second = page.getByTestId('turn').nth(1);
    await second.getByRole('button', { name: 'Bad answer' }).click();
    await second.getByLabel('What was wrong or missing? (optional)').fill('It did not say up to which age');
    await second.getByRole('button', { name: 'Save comment' }).click();
    await second.getByTestId('feedback-comment').getByText('It did not say up to which age').waitFor();
    t.is(await second.getByRole('button', { name: 'Bad answer' }).getAttribute('aria-pressed'), 'true');
    const first = page.getByTestId('turn').first();
    await first.getByRole('button', { name: 'Good answer' }).click();
    await first.locator('[data-rating="up"]').waitFor();

    const stored = await app.call('GET', `/api/v1/conversations/${id}`, { key });
    const rated = stored.body.conversation.messages.filter((m: { role: string }) => m.role === 'assistant');
    t.like(rated[1].feedback, { rating: 'down', comment: 'It did not say up to which age' });
    t.like(rated[0].feedback, { rating: 'up', comment: null });
    t.is(rated[2].feedback, null);

    // Pressing the pressed 👍 again clears it (DELETE).
    await first.getByRole('button', { name: 'Good answer' }).click();
    await first.locator('[data-rating="none"]').waitFor();
    const cleared = await app.call('GET', `/api/v1/conversations/${id}`, { key });
    t.is(cleared.body.conversation.messages[1].feedback, null);

    // The owner's view on the KB's page: the counts and the question rated down, with its comment.
    await page.goto(`/knowledge-bases/${user.defaultKnowledgeBaseId}`);
    const ratings = page.getByTestId('answer-ratings');
    await ratings.getByTestId('rating-counts').waitFor();
    t.regex(await ratings.getByTestId('rating-counts').innerText(), /0 good answers[\s\S]*1 bad answer/);
    const downRated = ratings.getByTestId('down-rated-question');
    t.is(await downRated.count(), 1);
    const said = await downRated.innerText();
    t.true(said.includes(QUESTIONS[1]) && said.includes('It did not say up to which age'), said);
    t.false(said.includes(user.email));
    await screenshot(page, 'knowledge-base-ratings');

    // Rename, then delete, from the list.
    await page.goto(`/ask/${id}`);
    await page.getByRole('button', { name: `Rename “${QUESTIONS[0]}”` }).click();
    const rename = page.getByRole('dialog', { name: `Rename “${QUESTIONS[0]}”` });
    await rename.getByLabel('Title').fill('Ferry fares');
    await rename.getByRole('button', { name: 'Rename conversation' }).click();
    await page.getByRole('heading', { level: 1, name: 'Ferry fares' }).waitFor();
    await page.getByTestId('conversation-row').filter({ hasText: 'Ferry fares' }).waitFor();

    await page.getByRole('button', { name: 'Delete “Ferry fares”' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete “Ferry fares”?' });
    t.is((await dialog.getByTestId('confirm-button').innerText()).trim(), 'Delete conversation');
    await dialog.getByTestId('confirm-button').click();
    await page.waitForURL((url) => url.pathname === '/ask');
    await page.getByText('None yet').waitFor();
    t.is((await app.call('GET', `/api/v1/conversations/${id}`, { key })).status, 404);
    await page.close();
  },
);

test.serial(
  'on a phone (390×844) the question box is in view after three turns, and nothing scrolls sideways',
  async (t) => {
    const { app, browser } = t.context;
    scriptTurns();
    const { user } = await ferryOwner(app);
    const page = await newPage(browser, app.baseUrl, { viewport: 'phone' });
    await page.setViewportSize({ width: 390, height: 844 });
    await signInThroughPage(page, user.email);
    await askThreeTurns(page);

    // Scrolled to the first turn, as far from the box as the thread goes: the box is still on screen.
    await page.getByTestId('turn').first().scrollIntoViewIfNeeded();
    for (const where of ['first turn', 'last turn']) {
      if (where === 'last turn') await page.getByTestId('turn').nth(2).scrollIntoViewIfNeeded();
      const box = await page.getByLabel('Question').boundingBox();
      t.truthy(box, where);
      if (box)
        t.true(
          box.y >= 0 && box.y + box.height <= 844,
          `the question box in view at the ${where}: ${JSON.stringify(box)}`,
        );
    }
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    t.true(height > 844, `the thread is longer than the screen (${height} px), so the box is kept by being sticky`);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    t.true(overflow <= 0, `no horizontal scroll: ${overflow} px`);
    // The box takes the next question where it is.
    await page.getByLabel('Question').fill('And on Sundays?');
    t.is(await page.getByLabel('Question').inputValue(), 'And on Sundays?');
    await screenshot(page, 'ask-conversation');
    await page.close();
  },
);
