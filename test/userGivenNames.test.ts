// What people type and what they are told: non-ASCII upload filenames kept as typed, the names rule on every
// user-given name (key names, emails), the CLI's output escaped for the terminal, and 403s addressed to a person in
// the web app rather than to an API key. (Issue 22, findings 8, 9 and 11.)
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { escapeForTerminal, escapeJsonForTerminal } from '../service/cli/terminalText.ts';
import { createApiKey } from '../service/commands/apiKeys.ts';
import { createApiKeyBody } from '../service/http/routes/webSession.schema.ts';
import { parseInput } from '../service/http/validation.ts';
import { textPdf } from './fixtures/pdfs.ts';
import { makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/webClient.ts';

const test = testWithApp();
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

async function signedIn(app: TestApp) {
  const user = await makeWebUser(app.deps.store);
  const browser = new WebClient(app.baseUrl);
  await browser.signIn(user.email, TEST_PASSWORD);
  return { user, browser };
}

/** A multipart upload as a browser sends it: the filename parameter in raw UTF-8. */
async function upload(browser: WebClient, kbId: string, filename: string, bytes: Uint8Array) {
  const form = new FormData();
  form.append('file', new Blob([Buffer.from(bytes)], { type: 'application/pdf' }), filename);
  const response = await fetch(`${browser.baseUrl}/api/web/knowledge-bases/${kbId}/uploads`, {
    method: 'POST',
    headers: { cookie: browser.cookie ?? '', 'x-csrf-token': browser.csrfToken ?? '' },
    body: form,
  });
  return { status: response.status, body: await response.json() };
}

test('non-ASCII PDF filenames are stored as sent (UTF-8), not read as latin1', async (t) => {
  const { app } = t.context;
  const { user, browser } = await signedIn(app);
  const pdf = await textPdf([['A short page about filenames.']]);
  for (const filename of ['résumé.pdf', '報告書.pdf', 'Ωμέγα – notes.pdf']) {
    const uploaded = await upload(browser, user.defaultKnowledgeBaseId, filename, pdf);
    t.is(uploaded.status, 202, `${filename}: ${JSON.stringify(uploaded.body)}`);
    t.is(uploaded.body.document.filename, filename);
    const listed = await browser.call('GET', `/api/web/documents/${uploaded.body.document.id}`);
    t.is(listed.body.document.filename, filename);
  }
});

test('key names and emails follow the names rule: no control, format or bidi characters', async (t) => {
  const { app } = t.context;
  for (const name of [
    'null\u0000byte',
    'two\r\nlines',
    'evil\u202Etxt.exe',
    'erase\u001b[2K',
    'title\u001b]0;pwned\u0007',
  ]) {
    t.throws(
      () => parseInput(createApiKeyBody, { name }, 'body'),
      { message: /^name: must not contain control characters, format characters or line separators \(found U\+/ },
      JSON.stringify(name),
    );
  }
  t.is(parseInput(createApiKeyBody, { name: 'CI – déploiement 日本' }, 'body').name, 'CI – déploiement 日本');
  for (const email of ['esc\u001b@example.com', 'rtl\u202E@example.com']) {
    const refused = await new WebClient(app.baseUrl).call('POST', '/api/web/session', {
      body: { email, password: TEST_PASSWORD },
    });
    t.is(refused.status, 400, JSON.stringify(email));
    t.regex(refused.body.error.message, /^email: must not contain control characters/);
  }
});

test('the CLI refuses such names and escapes whatever it prints', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const refused = await run(
    process.execPath,
    ['bin/kbqa.mjs', 'keys', 'create', '--email', user.email, '--name', 'erase\u001b[2K'],
    { cwd: ROOT, env: process.env, timeout: 120_000 },
  ).catch((error: { code: number; stderr: string }) => error);
  t.is((refused as { code: number }).code, 2);
  t.regex((refused as { stderr: string }).stderr, /--name: must not contain control characters.*found U\+001B/);
  // A name stored before the rule (or written around it): listed escaped, never obeyed.
  await createApiKey(app.deps.store, user.email, 'old\u001b]0;pwned\u0007\u202Ename');
  const text = await run(process.execPath, ['bin/kbqa.mjs', 'keys', 'list', '--email', user.email], {
    cwd: ROOT,
    env: process.env,
    timeout: 120_000,
  });
  t.false(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/.test(text.stdout), JSON.stringify(text.stdout));
  t.true(text.stdout.includes('old\\u{001B}]0;pwned\\u{0007}\\u{202E}name'), text.stdout);
  const json = await run(process.execPath, ['bin/kbqa.mjs', 'keys', 'list', '--email', user.email, '--json'], {
    cwd: ROOT,
    env: process.env,
    timeout: 120_000,
  });
  t.false(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/.test(json.stdout));
  t.is(
    JSON.parse(json.stdout).keys[0].name,
    'old\u001b]0;pwned\u0007\u202Ename',
    'the JSON still says exactly what is stored',
  );
});

test('terminal escaping keeps newlines, ZWJ and text; escapes the rest', (t) => {
  t.is(escapeForTerminal('a\nb\tc\u0085d\u200Be👩\u200D💻'), 'a\nb\\u{0009}c\\u{0085}d\\u{200B}e👩\u200D💻');
  t.is(JSON.parse(escapeJsonForTerminal(JSON.stringify({ v: 'x\u009b\u202e\u{E0001}' }))).v, 'x\u009b\u202e\u{E0001}');
  t.false(/[\u009b\u202e]/.test(escapeJsonForTerminal(JSON.stringify({ v: 'x\u009b\u202e' }))));
});

test('a 403 to a web session speaks of the account, not of an API key', async (t) => {
  const { app } = t.context;
  const owner = await signedIn(app);
  const stranger = await signedIn(app);
  const kbId = owner.user.defaultKnowledgeBaseId;
  const upload = await stranger.browser.call('POST', '/api/web/documents', {
    body: { kb_id: kbId, filename: 'x.md', content: 'x' },
  });
  t.deepEqual(upload.body, {
    error: { code: 'forbidden', message: `your account lacks access to knowledge base ${kbId}` },
  });
  const query = await stranger.browser.call('POST', '/api/web/query', {
    body: { query: 'anything?', knowledge_base_ids: [kbId] },
  });
  t.is(query.status, 403);
  t.false(query.body.error.message.includes('API key'), query.body.error.message);
  // The Developer API keeps the contract's words.
  const { key } = await createApiKey(app.deps.store, stranger.user.email, 'k');
  const viaKey = await app.call('POST', '/api/v1/documents', {
    key,
    body: { kb_id: kbId, filename: 'x.md', content: 'x' },
  });
  t.deepEqual(viaKey.body, { error: { code: 'forbidden', message: `API key lacks access to knowledge base ${kbId}` } });
});
