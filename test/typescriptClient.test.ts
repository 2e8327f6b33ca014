// The typed client in clients/typescript/: its committed spec and types are what `npm run client:generate` makes from
// the code now (so they cannot drift from the server), and it works against the real API, example included.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createKbqaClient, dataOf, KbqaApiError } from '../clients/typescript/index.ts';
import { staleClientFiles } from '../clients/typescript/generate.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { testWithApp } from './helpers/app.ts';

const test = testWithApp<{ user: TestUser }>();
const run = promisify(execFile);

test.before(async (t) => {
  t.context.user = await makeUser(t.context.app.deps.store, { label: 'tsclient' });
});

test('the committed openapi.json and schema.d.ts are a fresh generation from the code', async (t) => {
  t.deepEqual(await staleClientFiles(), [], 'run `npm run client:generate` and commit what it writes');
});

test('the client against the real API: typed data, typed errors, and dataOf', async (t) => {
  const { app, user } = t.context;
  const kbqa = createKbqaClient(`${app.baseUrl}/`, user.key);
  const me = dataOf(await kbqa.GET('/api/v1/me'));
  t.is(me.email, user.email);

  const { knowledge_base: kb } = dataOf(await kbqa.POST('/api/v1/knowledge-bases', { body: { name: 'typed client' } }));
  const { document } = dataOf(
    await kbqa.POST('/api/v1/documents', {
      body: { kb_id: kb.id, filename: 'typed.md', content: 'The typed client reads its types from the spec.' },
    }),
  );
  t.true(document.chunks >= 1);
  const queued = await kbqa.POST('/api/v1/documents', {
    params: { header: { prefer: 'respond-async' } },
    body: { kb_id: kb.id, filename: 'queued.md', content: 'Queued documents answer 202 with their status.' },
  });
  t.is(queued.response.status, 202);
  t.is(queued.response.headers.get('preference-applied'), 'respond-async');

  const page = dataOf(
    await kbqa.GET('/api/v1/knowledge-bases/{id}/documents', {
      params: { path: { id: kb.id }, query: { limit: 1, include: 'status' } },
    }),
  );
  t.is(page.documents.length, 1);
  t.is(typeof page.next_cursor, 'string');

  const answer = dataOf(
    await kbqa.POST('/api/v1/query', {
      body: { query: 'Where does the typed client read its types?', knowledge_base_ids: [kb.id] },
    }),
  );
  t.is(typeof answer.answer, 'string');
  t.deepEqual(answer.knowledge_base_ids, [kb.id]);

  const missing = await kbqa.GET('/api/v1/knowledge-bases/{id}', { params: { path: { id: 'no-such-kb' } } });
  t.is(missing.response.status, 404);
  t.is(missing.error?.error.code, 'not_found');
  const thrown = t.throws(() => dataOf(missing), { instanceOf: KbqaApiError });
  t.is(thrown?.code, 'not_found');

  const anonymous = createKbqaClient(app.baseUrl, 'kbqa_live_not-a-key');
  t.is((await anonymous.GET('/api/v1/me')).response.status, 401);
  dataOf(
    await kbqa.DELETE('/api/v1/knowledge-bases/{id}', {
      params: { path: { id: kb.id }, query: { permanent: 'true' } },
    }),
  );
});

test('clients/typescript/example.ts runs against the API', async (t) => {
  const { app, user } = t.context;
  const { stdout } = await run(process.execPath, ['clients/typescript/example.ts'], {
    env: { ...process.env, KBQA_URL: app.baseUrl, KBQA_API_KEY: user.key },
    timeout: 120_000,
  });
  t.regex(stdout, /acting as /);
  t.regex(stdout, /ingested onboarding\.md: \d+ chunk/);
  t.regex(stdout, /an unknown KB: 404 not_found/);
});
