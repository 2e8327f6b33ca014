// The API reference at /docs, in the real Chromium: Redoc (served from node_modules by the API process) renders the
// served OpenAPI description, every request the page makes stays on the origin (no CDN, no fonts, no telemetry), and
// its Content-Security-Policy refuses nothing Redoc does (no CSP report in the console).
import { makeWebUser } from '../factories/accounts.ts';
import { newPage, signInThroughPage, testWithBrowser } from '../helpers/browser.ts';

const test = testWithBrowser();

test('/docs renders every operation from this origin alone, under a CSP that refuses nothing', async (t) => {
  const { app, browser } = t.context;
  const page = await newPage(browser, app.baseUrl);
  const origin = new URL(app.baseUrl).origin;
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('console', (message) => {
    if (message.type() === 'error' || /content security policy/i.test(message.text()))
      problems.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));

  const response = await page.goto('/docs');
  t.is(response?.status(), 200);
  t.regex(response?.headers()['content-security-policy'] ?? '', /script-src 'self';/);
  t.notRegex(response?.headers()['content-security-policy'] ?? '', /unsafe-inline|unsafe-eval/);
  // Every operation's summary from the spec is in Redoc's menu under its tag (a tag opens when clicked).
  const spec = (await (await fetch(`${app.baseUrl}/api/v1/openapi.json`)).json()) as {
    tags: Array<{ name: string }>;
    paths: Record<string, Record<string, { summary: string; tags: string[]; operationId?: string }>>;
  };
  const operations = Object.values(spec.paths).flatMap((item) => Object.values(item));
  t.true(operations.some((operation) => operation.summary === 'Ask a question'));
  for (const tag of spec.tags) {
    await page.getByRole('link', { name: tag.name, exact: true }).click();
    for (const operation of operations.filter((each) => each.tags.includes(tag.name))) {
      await page.getByRole('link', { name: operation.summary }).first().waitFor({ timeout: 30_000 });
    }
  }
  // An operation's page: its heading, and a field of its request body rendered from the schema. Reached by its
  // address (the menu's folding depends on which tags were opened last, Conversations after Query).
  const ask = operations.find((operation) => operation.summary === 'Ask a question');
  await page.goto(`/docs#tag/Query/operation/${ask?.operationId}`);
  await page.getByRole('heading', { name: 'Ask a question' }).waitFor();
  await page.getByText('knowledge_base_ids').first().waitFor();

  t.true(requests.length >= 3, `the page, the bundle and the spec at least: ${requests.join(', ')}`);
  const offOrigin = requests.filter(
    (url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:') && !url.startsWith('blob:'),
  );
  t.deepEqual(offOrigin, [], 'every request stays on the origin');
  t.true(
    requests.some((url) => url === `${origin}/api/v1/openapi.json`),
    'the spec is read from this server',
  );
  t.deepEqual(problems, [], 'no console errors, no CSP reports');
});

test('/docs is not the web app: a path under it is a 404, and the bundle is cached for good', async (t) => {
  const { app } = t.context;
  const page = await fetch(`${app.baseUrl}/docs`);
  const html = await page.text();
  t.is(page.headers.get('cache-control'), 'no-store');
  const script = /<script type="module" src="([^"]+)"/.exec(html)?.[1];
  t.truthy(script, html);
  const bundle = await fetch(`${app.baseUrl}${script}`);
  await bundle.arrayBuffer();
  t.is(bundle.status, 200);
  t.is(bundle.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.regex(bundle.headers.get('content-type') ?? '', /^text\/javascript/);
  const unknown = await fetch(`${app.baseUrl}/docs/nothing-here`);
  await unknown.text();
  t.is(unknown.status, 404);
});

test('the header and Settings → API keys link to /docs; /openapi.json redirects to the spec', async (t) => {
  const { app, browser } = t.context;
  const user = await makeWebUser(app.deps.store, { label: 'docs-links' });
  const page = await newPage(browser, app.baseUrl);
  await signInThroughPage(page, user.email);

  await page.getByRole('banner').getByRole('link', { name: 'API docs' }).click();
  await page.waitForURL('**/docs');
  t.is(await page.title(), 'kbqa Developer API reference');

  await page.goto('/settings/api-keys');
  await page.getByRole('main').getByRole('link', { name: 'Developer API reference' }).click();
  await page.waitForURL('**/docs');
  t.is(await page.title(), 'kbqa Developer API reference');

  const redirect = await fetch(`${app.baseUrl}/openapi.json`, { redirect: 'manual' });
  await redirect.arrayBuffer();
  t.is(redirect.status, 301);
  t.is(redirect.headers.get('location'), '/api/v1/openapi.json');
  const response = await page.goto('/openapi.json');
  t.is(new URL(page.url()).pathname, '/api/v1/openapi.json');
  t.like(await response?.json(), { openapi: '3.1.0' });
  await page.close();
});
