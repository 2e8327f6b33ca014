// The Ask page shows an OpenAI-compatible model's unverified sentences as the API marks them: the `[unverified]` at a
// sentence's end becomes a badge that says so in words (and in its title), never the bracketed text, while a
// supported sentence carries none. The model is the OpenAI stand-in; the browser is Chromium.
import { createApiKey } from '../../service/commands/apiKeys.ts';
import { makeWebUser } from '../factories/accounts.ts';
import { signInThroughPage, testWithBrowser } from '../helpers/browser.ts';
import { ingest } from '../helpers/documentsApi.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fakeOpenAI.ts';

const TIDES =
  '# Corran tides\n\nThe causeway to Corran island floods two hours before high water. The lighthouse on the island was automated in 1987.\n';
// The first sentence is the passage's; the second's figure is not in it.
const REPLY = 'The causeway floods two hours before high water [1]. The lighthouse was automated in 1992 [1].';

let fake: FakeOpenAI | undefined;
const test = testWithBrowser({
  env: async () => {
    fake = await startFakeOpenAI();
    fake.script({ reply: REPLY });
    return { KBQA_OPENAI_BASE_URL: fake.baseUrl, KBQA_OPENAI_API_KEY: 'test', KBQA_OPENAI_MODELS: 'gpt-test' };
  },
});
test.after.always(() => fake?.close());

test('an unsupported sentence ends in an "unverified" badge; the supported one has none', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const { key } = await createApiKey(app.deps.store, user.email, 'ingest');
  await ingest(app, key, user.defaultKnowledgeBaseId, 'corran-tides.md', TIDES);

  const context = await t.context.browser.newContext({ baseURL: app.baseUrl, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await signInThroughPage(page, user.email);
  await page.goto('/ask');
  await page.getByLabel('Model').selectOption('gpt-test');
  await page.getByLabel('Question').fill('When was the lighthouse automated?');
  await page.getByRole('button', { name: 'Ask' }).click();

  const answer = page.getByTestId('answer');
  await answer.getByText('automated in 1992').waitFor({ timeout: 60_000 });
  const badges = answer.getByTestId('unverified-mark');
  await badges.first().waitFor();
  t.is(await badges.count(), 1);
  t.is((await badges.first().innerText()).trim(), 'unverified');
  t.regex((await badges.first().getAttribute('title')) ?? '', /^Not found in the sources this sentence cites/);
  const text = await answer.innerText();
  t.false(text.includes('[unverified]'), text);
  // The badge follows the unsupported sentence, not the supported one.
  t.regex(text, /high water\.\s*1\s*The lighthouse was automated in 1992\s*1\s*unverified\s*\./);
  await context.close();
});
