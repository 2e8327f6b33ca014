// Authentication: every key state against every endpoint, how keys are stored, and the `kbqa keys` CLI.
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createApiKey, generateApiKey, revokeApiKey } from '../service/commands/apiKeys.ts';
import { createKnowledgeBase } from '../service/commands/knowledgeBases.ts';
import { makeUser, uniqueEmail, type TestUser } from './factories/accounts.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';

interface Context {
  app: TestApp;
  /** Owns the KBs the endpoints address; its key is valid throughout. */
  owner: TestUser;
  /** A KB of `owner` every rejected request addresses (a rejected DELETE must leave it alive). */
  target: string;
  /** A user whose key was used successfully, then revoked before any test ran. */
  revoked: TestUser;
  revokedKeyWorkedBeforeRevocation: number;
}

const test = testWithApp<Omit<Context, 'app'>>();
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNAUTHORIZED = { error: { code: 'unauthorized', message: 'API key is missing or invalid' } };

interface Endpoint {
  name: string;
  method: string;
  path: (kbId: string) => string;
  body?: (kbId: string) => unknown;
  /** Status a valid key gets for a well-formed request against a KB it owns. */
  okStatus: number;
}

const ENDPOINTS: Endpoint[] = [
  { name: 'GET /me', method: 'GET', path: () => '/api/v1/me', okStatus: 200 },
  { name: 'GET /knowledge-bases', method: 'GET', path: () => '/api/v1/knowledge-bases', okStatus: 200 },
  {
    name: 'POST /knowledge-bases',
    method: 'POST',
    path: () => '/api/v1/knowledge-bases',
    body: () => ({ name: 'auth probe' }),
    okStatus: 201,
  },
  { name: 'GET /knowledge-bases/{id}', method: 'GET', path: (id) => `/api/v1/knowledge-bases/${id}`, okStatus: 200 },
  {
    name: 'DELETE /knowledge-bases/{id}',
    method: 'DELETE',
    path: (id) => `/api/v1/knowledge-bases/${id}`,
    okStatus: 200,
  },
  {
    name: 'GET /knowledge-bases/{id}/documents',
    method: 'GET',
    path: (id) => `/api/v1/knowledge-bases/${id}/documents`,
    okStatus: 200,
  },
  {
    name: 'POST /documents',
    method: 'POST',
    path: () => '/api/v1/documents',
    body: (id) => ({ kb_id: id, filename: 'auth.txt', content: 'Authentication probes use this short document.' }),
    okStatus: 201,
  },
  {
    name: 'POST /query',
    method: 'POST',
    path: () => '/api/v1/query',
    body: () => ({ query: 'what is an auth probe?' }),
    okStatus: 200,
  },
];

/** Authorization header values that must all be refused. `null` sends no header at all. */
const BAD_KEY_STATES: Array<{ name: string; header: (context: Context) => string | null }> = [
  { name: 'missing header', header: () => null },
  {
    name: 'wrong scheme (Basic credentials)',
    header: () => `Basic ${Buffer.from('user:password').toString('base64')}`,
  },
  { name: 'wrong scheme (Basic + a valid key)', header: (context) => `Basic ${context.owner.key}` },
  { name: 'no scheme (bare valid key)', header: (context) => context.owner.key },
  { name: 'malformed (kbqa_live_short)', header: () => 'Bearer kbqa_live_short' },
  { name: 'malformed (Bearer, no key)', header: () => 'Bearer' },
  { name: 'malformed (wrong prefix)', header: () => `Bearer kbqa_test_${'a'.repeat(40)}` },
  { name: 'malformed (valid key + junk)', header: (context) => `Bearer ${context.owner.key}!` },
  { name: 'unknown well-formed key', header: () => `Bearer ${generateApiKey()}` },
  { name: 'revoked key', header: (context) => `Bearer ${context.revoked.key}` },
];

test.before(async (t) => {
  const { app } = t.context;
  const owner = await makeUser(app.deps.store, { label: 'auth-owner' });
  const user = await app.deps.store.findUserById(owner.id);
  const target = (
    await createKnowledgeBase(
      app.deps.store,
      user!,
      { name: 'auth target' },
      app.deps.config.knowledgeBases.maxPerOwner,
    )
  )._id;
  const revoked = await makeUser(app.deps.store, { label: 'auth-revoked' });
  const before = await app.call('GET', '/api/v1/me', { key: revoked.key });
  await revokeApiKey(app.deps.store, revoked.keyId);
  Object.assign(t.context, { owner, target, revoked, revokedKeyWorkedBeforeRevocation: before.status });
});

async function callWithHeader(app: TestApp, endpoint: Endpoint, kbId: string, authorization: string | null) {
  const headers: Record<string, string> = {};
  if (authorization !== null) headers.authorization = authorization;
  return app.call(endpoint.method, endpoint.path(kbId), { headers, body: endpoint.body?.(kbId) });
}

for (const state of BAD_KEY_STATES) {
  for (const endpoint of ENDPOINTS) {
    test(`${state.name} → 401 on ${endpoint.name}`, async (t) => {
      const { app, target } = t.context;
      const response = await callWithHeader(app, endpoint, target, state.header(t.context));
      t.is(response.status, 401);
      t.deepEqual(response.body, UNAUTHORIZED);
      t.regex(response.headers.get('content-type') ?? '', /^application\/json/);
      // Nothing happened: the KB every rejected request addresses is still there.
      t.truthy(await app.deps.store.findLiveKnowledgeBase(target));
    });
  }
}

for (const endpoint of ENDPOINTS) {
  test(`valid key → ${endpoint.okStatus} on ${endpoint.name}`, async (t) => {
    const { app, owner } = t.context;
    const user = await app.deps.store.findUserById(owner.id);
    // Each test gets its own KB, so the DELETE case does not disturb the others.
    const kb = (
      await createKnowledgeBase(
        app.deps.store,
        user!,
        { name: `valid ${endpoint.name}` },
        app.deps.config.knowledgeBases.maxPerOwner,
      )
    )._id;
    const response = await callWithHeader(app, endpoint, kb, `Bearer ${owner.key}`);
    t.is(response.status, endpoint.okStatus, JSON.stringify(response.body));
    t.is(typeof response.body, 'object');
    t.false('error' in (response.body ?? {}));
  });
}

test('GET /me identifies the key owner exactly', async (t) => {
  const { app, owner } = t.context;
  const response = await app.call('GET', '/api/v1/me', { key: owner.key });
  t.is(response.status, 200);
  t.deepEqual(response.body, { id: owner.id, email: owner.email });
  t.regex(response.body.id, UUID);
});

test('the revoked key worked before revocation', (t) => {
  t.is(t.context.revokedKeyWorkedBeforeRevocation, 200);
});

test('a rejected POST with a revoked key creates nothing for its user', async (t) => {
  const { app, revoked } = t.context;
  const before = await app.deps.store.listKnowledgeBasesOwnedBy(revoked.id);
  const response = await app.call('POST', '/api/v1/knowledge-bases', {
    key: revoked.key,
    body: { name: 'must not exist' },
  });
  t.is(response.status, 401);
  const after = await app.deps.store.listKnowledgeBasesOwnedBy(revoked.id);
  t.is(after.length, before.length);
});

test('revocation takes effect on the very next request and spares the user’s other keys', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store, { label: 'auth-revoke-now' });
  const { key: otherKey } = await createApiKey(app.deps.store, user.email, 'second');
  t.is((await app.call('GET', '/api/v1/me', { key: user.key })).status, 200);
  t.is((await app.call('GET', '/api/v1/knowledge-bases', { key: user.key })).status, 200);

  await revokeApiKey(app.deps.store, user.keyId);

  const me = await app.call('GET', '/api/v1/me', { key: user.key });
  t.is(me.status, 401);
  t.deepEqual(me.body, UNAUTHORIZED);
  const list = await app.call('GET', '/api/v1/knowledge-bases', { key: user.key });
  t.is(list.status, 401);
  t.deepEqual(list.body, UNAUTHORIZED);
  const record = await app.deps.store.findApiKeyById(user.keyId);
  t.true(record?.revoked_at instanceof Date);

  const other = await app.call('GET', '/api/v1/me', { key: otherKey });
  t.is(other.status, 200);
  t.deepEqual(other.body, { id: user.id, email: user.email });
});

test('the key never appears in any response (body or headers), success or failure', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store, { label: 'auth-leak' });
  const digest = createHash('sha256').update(user.key).digest('hex');
  const ownKb = (await app.call('POST', '/api/v1/knowledge-bases', { key: user.key, body: { name: 'leak check' } }))
    .body.knowledge_base.id as string;
  const requests: Array<{
    method: string;
    path: string;
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
  }> = [];
  for (const endpoint of ENDPOINTS) {
    for (const kbId of [user.defaultKnowledgeBaseId, ownKb, randomUUID()]) {
      requests.push({ method: endpoint.method, path: endpoint.path(kbId), body: endpoint.body?.(kbId) });
    }
  }
  requests.push(
    { method: 'POST', path: '/api/v1/knowledge-bases', body: { name: user.key } },
    { method: 'POST', path: '/api/v1/knowledge-bases', body: { name: 42 } },
    {
      method: 'POST',
      path: '/api/v1/knowledge-bases',
      rawBody: '{broken',
      headers: { 'content-type': 'application/json' },
    },
    { method: 'GET', path: '/api/v1/no-such-route' },
    { method: 'DELETE', path: `/api/v1/knowledge-bases/${ownKb}?permanent=true` },
  );
  for (const request of requests) {
    const response = await app.call(request.method, request.path, {
      key: user.key,
      body: request.body,
      rawBody: request.rawBody,
      headers: request.headers,
    });
    const text = JSON.stringify(response.body) ?? '';
    // The one request that sends the key as a KB name legitimately gets it back as the name; nothing else may.
    const echoedName = response.status === 201 && response.body?.knowledge_base?.name === user.key;
    if (!echoedName) t.false(text.includes(user.key), `${request.method} ${request.path} leaked the key`);
    t.false(text.includes(digest), `${request.method} ${request.path} leaked the digest`);
    for (const [name, value] of response.headers) {
      t.false(value.includes(user.key), `header ${name} of ${request.method} ${request.path} leaked the key`);
    }
  }
  // A rejected key is not echoed either.
  const unknownKey = generateApiKey();
  const rejected = await app.call('GET', '/api/v1/me', { key: unknownKey });
  t.is(rejected.status, 401);
  t.false(JSON.stringify(rejected.body).includes(unknownKey));
});

test('keys are stored as a SHA-256 digest and a masked form, never in the clear', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store, { label: 'auth-stored' });
  const record = await app.deps.store.findApiKeyById(user.keyId);
  t.truthy(record);
  t.deepEqual(Object.keys(record!).sort(), [
    '_id',
    'created_at',
    'id',
    'masked',
    'name',
    'organisation_id',
    'revoked_at',
    'user_email',
    'user_id',
  ]);
  for (const [field, value] of Object.entries(record!)) {
    t.not(value, user.key, `field ${field} holds the key`);
    if (typeof value === 'string')
      t.false(value.includes(user.key.slice('kbqa_live_'.length)), `field ${field} holds the secret`);
  }
  // The digest is the record's _id: authentication is one primary-key lookup.
  t.is(record!._id, createHash('sha256').update(user.key, 'utf8').digest('hex'));
  t.regex(record!._id, /^[0-9a-f]{64}$/);
  t.is(record!.masked, `${user.key.slice(0, 14)}…${user.key.slice(-4)}`);
  t.regex(record!.masked, /^kbqa_live_[0-9A-Za-z]{4}…[0-9A-Za-z]{4}$/);
  t.is(record!.user_id, user.id);
  t.regex(record!.id, UUID);
  t.regex(user.key, /^kbqa_live_[0-9A-Za-z]{32,}$/);

  const listed = await app.deps.store.listApiKeysOfUser(user.id);
  t.is(listed.length, 1);
  t.false(JSON.stringify(listed).includes(user.key));
  t.false(JSON.stringify(listed).includes(user.key.slice('kbqa_live_'.length)));
});

test('generated keys are distinct and well-formed', (t) => {
  const keys = new Set(Array.from({ length: 200 }, () => generateApiKey()));
  t.is(keys.size, 200);
  for (const key of keys) t.regex(key, /^kbqa_live_[0-9A-Za-z]{32,}$/);
});

async function cli(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ['bin/kbqa.mjs', ...args], {
    cwd: ROOT,
    env: process.env,
    timeout: 120_000,
  });
  return stdout;
}

const lastJsonLine = (stdout: string): any => JSON.parse(stdout.trim().split('\n').at(-1)!);

test('CLI: keys create prints {id,key,name} once; keys list never shows the key; revoke via CLI → 401', async (t) => {
  const { app } = t.context;
  const email = uniqueEmail('auth-cli');
  const created = lastJsonLine(await cli('users', 'create', '--email', email, '--json'));
  t.deepEqual(Object.keys(created).sort(), [
    'default_knowledge_base_id',
    'email',
    'id',
    'is_admin',
    'password_link',
    'password_link_expires_at',
  ]);
  t.is(created.email, email);

  const issued = lastJsonLine(await cli('keys', 'create', '--email', email, '--name', 'ci', '--json'));
  t.deepEqual(Object.keys(issued).sort(), ['id', 'key', 'name']);
  t.regex(issued.id, UUID);
  t.regex(issued.key, /^kbqa_live_[0-9A-Za-z]{32,}$/);
  t.is(issued.name, 'ci');

  const me = await app.call('GET', '/api/v1/me', { key: issued.key });
  t.is(me.status, 200);
  t.deepEqual(me.body, { id: created.id, email });

  const listStdout = await cli('keys', 'list', '--email', email, '--json');
  t.false(listStdout.includes(issued.key));
  t.false(listStdout.includes(issued.key.slice('kbqa_live_'.length)));
  const listed = lastJsonLine(listStdout);
  t.is(listed.keys.length, 1);
  t.deepEqual(Object.keys(listed.keys[0]).sort(), ['created_at', 'id', 'last_used_at', 'masked', 'name', 'revoked_at']);
  t.is(listed.keys[0].id, issued.id);
  t.is(listed.keys[0].masked, `${issued.key.slice(0, 14)}…${issued.key.slice(-4)}`);
  t.is(listed.keys[0].revoked_at, null);
  // The GET /me above recorded the key's use (written in the background; the CLI starts well after it lands).
  t.regex(listed.keys[0].last_used_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

  const textList = await cli('keys', 'list', '--email', email);
  t.false(textList.includes(issued.key));

  const revoked = lastJsonLine(await cli('keys', 'revoke', '--id', issued.id, '--json'));
  t.deepEqual(revoked, { id: issued.id, revoked: true });
  const after = await app.call('GET', '/api/v1/me', { key: issued.key });
  t.is(after.status, 401);
  t.deepEqual(after.body, UNAUTHORIZED);
  const relisted = lastJsonLine(await cli('keys', 'list', '--email', email, '--json'));
  t.regex(relisted.keys[0].revoked_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
});
