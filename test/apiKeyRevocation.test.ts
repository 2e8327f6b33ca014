// API keys against a taken-over session (issue 22, item 6): minting a key needs the password or a sign-in within
// KBQA_REAUTH_MINUTES, and a reset link, "sign out everywhere" and a password change can revoke every key (a reset
// link does by default).
import { createApiKey } from '../service/commands/apiKeys.ts';
import { createPasswordLink } from '../service/commands/passwords.ts';
import { makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { serveVariant, testWithApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/webClient.ts';

const test = testWithApp();

async function keyWorks(app: TestApp, key: string): Promise<boolean> {
  const status = (await app.call('GET', '/api/v1/me', { key })).status;
  if (status !== 200 && status !== 401) throw new Error(`GET /api/v1/me answered ${status}`);
  return status === 200;
}

/** A user with a password and two API keys (made as `kbqa keys create` makes them). */
async function userWithKeys(app: TestApp) {
  const user = await makeWebUser(app.deps.store, { label: 'keys' });
  const keys = [
    (await createApiKey(app.deps.store, user.email, 'ci')).key,
    (await createApiKey(app.deps.store, user.email, 'laptop')).key,
  ];
  return { user, keys };
}

async function resetToken(app: TestApp, userId: string, purpose: 'reset' | 'invite'): Promise<string> {
  const record = await app.deps.store.findUserById(userId);
  if (!record) throw new Error('no such user');
  const link = await createPasswordLink(app.deps.store, app.deps.config.web, record, purpose);
  return link.url.split('#token=')[1];
}

test('creating a key needs the password unless the session signed in within KBQA_REAUTH_MINUTES', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store, { label: 'reauth' });

  // Just signed in: a recent authentication, no password needed.
  const fresh = new WebClient(app.baseUrl);
  await fresh.signIn(user.email, TEST_PASSWORD);
  t.is((await fresh.call('POST', '/api/web/api-keys', { body: { name: 'fresh sign-in' } })).status, 201);

  // No sign-in counts as recent (a window of 0): the password is required, a wrong one refused and counted.
  const stale = await serveVariant(app.deps, (config) => ({ ...config, web: { ...config.web, reauthMs: 0 } }));
  try {
    const browser = new WebClient(stale.baseUrl);
    await browser.signIn(user.email, TEST_PASSWORD);
    const refused = await browser.call('POST', '/api/web/api-keys', { body: { name: 'stolen session' } });
    t.is(refused.status, 403);
    t.is(refused.body.error.code, 'forbidden');
    t.regex(refused.body.error.message, /^password: enter your password to create an API key/);
    const wrong = await browser.call('POST', '/api/web/api-keys', {
      body: { name: 'guess', password: 'not the password at all' },
    });
    t.deepEqual([wrong.status, wrong.body.error.message], [400, 'password: is incorrect']);
    t.deepEqual(
      (await browser.call('GET', '/api/web/api-keys')).body.api_keys.map((key: { name: string }) => key.name),
      ['fresh sign-in'],
    );
    const created = await browser.call('POST', '/api/web/api-keys', {
      body: { name: 'with password', password: TEST_PASSWORD },
    });
    t.is(created.status, 201);
    t.true(await keyWorks(app, created.body.key));
  } finally {
    await stale.close();
  }
});

test('a reset link revokes every API key of the user by default; revoke_api_keys: false keeps them', async (t) => {
  const { app } = t.context;
  const { user, keys } = await userWithKeys(app);
  t.true(await keyWorks(app, keys[0]));

  const reset = await new WebClient(app.baseUrl).call('POST', '/api/web/password-links/use', {
    body: { token: await resetToken(app, user.id, 'reset'), password: 'a fresh passphrase after the scare' },
  });
  t.is(reset.status, 200);
  t.deepEqual(
    [await keyWorks(app, keys[0]), await keyWorks(app, keys[1])],
    [false, false],
    'no key of the user survives the reset',
  );

  const kept = (await createApiKey(app.deps.store, user.email, 'after the reset')).key;
  const keeping = await new WebClient(app.baseUrl).call('POST', '/api/web/password-links/use', {
    body: {
      token: await resetToken(app, user.id, 'reset'),
      password: 'another fresh passphrase',
      revoke_api_keys: false,
    },
  });
  t.is(keeping.status, 200);
  t.true(await keyWorks(app, kept), 'asked to keep them, the keys keep working');
});

test('an invitation link keeps the keys an operator made before it (revoke_api_keys defaults to false there)', async (t) => {
  const { app } = t.context;
  const { user, keys } = await userWithKeys(app);
  const used = await new WebClient(app.baseUrl).call('POST', '/api/web/password-links/use', {
    body: { token: await resetToken(app, user.id, 'invite'), password: 'my first own passphrase' },
  });
  t.is(used.status, 200);
  t.true(await keyWorks(app, keys[0]));
});

// A query parameter, not a body: a DELETE's body has no meaning in HTTP (RFC 9110 §9.3.5), and no body parser reads it.
test('sign out everywhere with ?revoke_api_keys=true revokes every key; without it the keys keep working', async (t) => {
  const { app } = t.context;
  const { user, keys } = await userWithKeys(app);

  const [here, elsewhere] = [new WebClient(app.baseUrl), new WebClient(app.baseUrl)];
  await here.signIn(user.email, TEST_PASSWORD);
  await elsewhere.signIn(user.email, TEST_PASSWORD);
  const out = await here.call('DELETE', '/api/web/sessions?revoke_api_keys=true');
  t.deepEqual([await keyWorks(app, keys[0]), await keyWorks(app, keys[1])], [false, false]);
  t.deepEqual(out.body, { signed_out: 2, api_keys_revoked: 2 });
  t.is((await elsewhere.call('GET', '/api/web/me')).status, 401);

  const kept = (await createApiKey(app.deps.store, user.email, 'kept')).key;
  const plain = new WebClient(app.baseUrl);
  // The account itself is untouched: its password still signs in (signIn throws otherwise).
  await plain.signIn(user.email, TEST_PASSWORD);
  t.deepEqual((await plain.call('DELETE', '/api/web/sessions')).body, { signed_out: 1, api_keys_revoked: 0 });
  t.true(await keyWorks(app, kept));
});

test('a password change with revoke_api_keys: true revokes every key', async (t) => {
  const { app } = t.context;
  const { user, keys } = await userWithKeys(app);
  const browser = new WebClient(app.baseUrl);
  await browser.signIn(user.email, TEST_PASSWORD);
  const changed = await browser.call('PUT', '/api/web/account/password', {
    body: { current_password: TEST_PASSWORD, new_password: 'a changed passphrase here', revoke_api_keys: true },
  });
  t.deepEqual(changed.body, { changed: true, api_keys_revoked: 2 });
  t.false(await keyWorks(app, keys[0]));
});
