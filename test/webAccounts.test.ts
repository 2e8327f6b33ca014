// The web app's accounts and sessions, through /api/web as a browser calls it: the first account, sign-up, sign-in
// and its throttling, session cookies and expiry, the CSRF defence, sign-out, password changes and links, and the
// admin's invitations. The first-account flow needs a database without users: the harness's, the file's own.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inviteUser } from '../service/commands/accounts.ts';
import { createPasswordLink } from '../service/commands/passwords.ts';
import { createFirstAccount, purgeExpiredWebRecords } from '../service/commands/sessions.ts';
import { request as httpRequest } from 'node:http';
import { openStore } from '../service/store/index.ts';
import { makeWebUser, TEST_PASSWORD, uniqueEmail } from './factories/accounts.ts';
import { serveVariant, serveWithOwnDatabase, testWithApp, type TestApp } from './helpers/app.ts';
import { dropDatabase, freshDatabaseUrl, WebClient } from './helpers/webClient.ts';

interface Context {
  app: TestApp;
  databaseUrl: string;
}

const test = testWithApp<Omit<Context, 'app'>>({ env: { KBQA_PUBLIC_URL: 'http://kbqa.example:8080' } });
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** A first wrong password: four tries left before sign-in pauses (test/signInPause.test.ts has the rest). */
const WRONG = { error: { code: 'unauthorized', message: 'email or password is incorrect', tries_left: 4 } };

// Serial: it must run while the database has no user at all.
test.serial(
  'first run: "Create the first account" makes an admin once, with an Argon2id hash and a session cookie',
  async (t) => {
    const { app } = t.context;
    const browser = new WebClient(app.baseUrl);
    t.deepEqual((await browser.call('GET', '/api/web/setup')).body, {
      first_account_needed: true,
      sign_up_open: false,
    });

    const email = uniqueEmail('first');
    const short = await browser.call('POST', '/api/web/setup/first-account', {
      body: { email, password: 'elevenchars' },
    });
    t.is(short.status, 400);
    t.is(short.body.error.message, 'password: must be at least 12 characters');
    const noToken = await browser.call('POST', '/api/web/setup/first-account', {
      body: { email, password: TEST_PASSWORD },
      csrf: null,
    });
    t.is(noToken.status, 403);

    // Five at once: exactly one becomes the first account.
    const racers = Array.from({ length: 5 }, (_, index) => new WebClient(app.baseUrl));
    const answers = await Promise.all(
      racers.map((racer, index) =>
        racer.call('POST', '/api/web/setup/first-account', {
          body: { email: index === 0 ? email : uniqueEmail('racer'), password: TEST_PASSWORD },
        }),
      ),
    );
    t.deepEqual(answers.map((answer) => answer.status).sort(), [201, 409, 409, 409, 409]);
    const winner = answers.findIndex((answer) => answer.status === 201);
    const created = answers[winner];
    t.is(created.body.user.is_admin, true);
    t.regex(created.body.csrf_token, /^[\w-]{43}$/);

    const setCookie = created.headers.getSetCookie()[0];
    t.regex(setCookie, /^kbqa_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=1209600$/);
    const sessionId = setCookie.slice('kbqa_session='.length, setCookie.indexOf(';'));
    // Stored hashed: the record's id is the SHA-256, and the id itself finds nothing.
    t.truthy(await app.deps.store.findSession(sha256(sessionId)));
    t.is(await app.deps.store.findSession(sessionId), null);
    const user = await app.deps.store.findUserByEmail(created.body.user.email);
    t.true(user?.password_hash?.startsWith('$argon2id$'));
    t.is(user?.is_admin, true);

    t.is((await racers[winner].call('GET', '/api/web/session')).body.user.email, created.body.user.email);
    t.deepEqual((await browser.call('GET', '/api/web/setup')).body, {
      first_account_needed: false,
      sign_up_open: false,
    });
    const again = await browser.call('POST', '/api/web/setup/first-account', {
      body: { email: uniqueEmail('late'), password: TEST_PASSWORD },
    });
    t.is(again.status, 409);
    t.is(again.body.error.code, 'conflict');
  },
);

test('sign-up is closed unless KBQA_SIGNUP=open; open, it creates a signed-in, non-admin user', async (t) => {
  const { app } = t.context;
  const closed = await new WebClient(app.baseUrl).call('POST', '/api/web/sign-up', {
    body: { email: uniqueEmail(), password: TEST_PASSWORD },
  });
  t.is(closed.status, 403);
  t.is(closed.body.error.message, 'sign-up is closed: ask an administrator for an invitation');

  const open = await serveVariant(app.deps, (config) => ({ ...config, web: { ...config.web, signUpOpen: true } }));
  try {
    const browser = new WebClient(open.baseUrl);
    t.is((await browser.call('GET', '/api/web/setup')).body.sign_up_open, true);
    const email = uniqueEmail('signup');
    const signedUp = await browser.call('POST', '/api/web/sign-up', { body: { email, password: TEST_PASSWORD } });
    t.is(signedUp.status, 201);
    t.is(signedUp.body.user.is_admin, false);
    t.is((await browser.call('GET', '/api/web/me')).body.email, email);
    const twice = await new WebClient(open.baseUrl).call('POST', '/api/web/sign-up', {
      body: { email, password: TEST_PASSWORD },
    });
    t.is(twice.status, 409);
  } finally {
    await open.close();
  }
});

test('sign-in: a wrong password and an unknown email answer the same 401; an invited user without a password cannot sign in', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const wrong = await new WebClient(app.baseUrl).call('POST', '/api/web/session', {
    body: { email: user.email, password: 'not the password at all' },
  });
  const unknown = await new WebClient(app.baseUrl).call('POST', '/api/web/session', {
    body: { email: uniqueEmail('nobody'), password: TEST_PASSWORD },
  });
  t.deepEqual([wrong.status, wrong.body], [401, WRONG]);
  t.deepEqual([unknown.status, unknown.body], [401, WRONG]);
  t.deepEqual(wrong.headers.getSetCookie(), []);

  const { user: invitedUser } = await inviteUser(app.deps.store, app.deps.config.web, {
    email: uniqueEmail('invited'),
  });
  const invited = await new WebClient(app.baseUrl).call('POST', '/api/web/session', {
    body: { email: invitedUser.email, password: TEST_PASSWORD },
  });
  t.deepEqual([invited.status, invited.body], [401, WRONG], 'invited, no password set yet: the same answer');
  const upper = await new WebClient(app.baseUrl).call('POST', '/api/web/session', {
    body: { email: (await makeWebUser(app.deps.store)).email.toUpperCase(), password: TEST_PASSWORD },
  });
  t.is(upper.status, 200, 'emails are matched case-insensitively');

  const browser = new WebClient(app.baseUrl);
  await browser.signIn(user.email, TEST_PASSWORD);
  t.deepEqual((await browser.call('GET', '/api/web/session')).body.user, {
    id: user.id,
    email: user.email,
    is_admin: false,
  });
});

test('failed sign-ins are limited per account (429 with Retry-After), with the same answer whether the email exists', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const nobody = uniqueEmail('nobody');
  for (const email of [user.email, nobody]) {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const failed = await new WebClient(app.baseUrl).call('POST', '/api/web/session', {
        body: { email, password: 'wrong password here' },
      });
      t.is(failed.status, 401);
    }
  }
  const limited = await new WebClient(app.baseUrl).call('POST', '/api/web/session', {
    body: { email: user.email, password: TEST_PASSWORD },
  });
  const limitedNobody = await new WebClient(app.baseUrl).call('POST', '/api/web/session', {
    body: { email: nobody, password: TEST_PASSWORD },
  });
  t.is(limited.status, 429, 'even the right password waits out the pause');
  // The seconds left differ only by when each pause began.
  const withoutNumbers = (body: unknown) => JSON.stringify(body).replaceAll(/\d+/g, 'N');
  t.deepEqual(withoutNumbers(limited.body), withoutNumbers(limitedNobody.body));
  t.is(limited.body.error.code, 'rate_limited');
  const retryAfter = Number(limited.headers.get('retry-after'));
  t.true(retryAfter > 0 && retryAfter <= 60, `Retry-After ${retryAfter} s within the first pause's minute`);
  // Another account from the same address is not locked out by this one.
  await new WebClient(app.baseUrl).signIn((await makeWebUser(app.deps.store)).email, TEST_PASSWORD);
});

test('failed sign-ins are limited per client address across accounts', async (t) => {
  const { app } = t.context;
  const strict = await serveWithOwnDatabase(app.deps, 'web_address_limit', (config) => ({
    ...config,
    web: { ...config.web, signIn: { ...config.web.signIn, maxFailuresPerAddress: 3 } },
  }));
  const { store } = strict;
  try {
    const user = await makeWebUser(store);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const failed = await new WebClient(strict.baseUrl).call('POST', '/api/web/session', {
        body: { email: uniqueEmail('spray'), password: 'wrong password here' },
      });
      t.is(failed.status, 401);
    }
    const limited = await new WebClient(strict.baseUrl).call('POST', '/api/web/session', {
      body: { email: user.email, password: TEST_PASSWORD },
    });
    t.is(limited.status, 429);
  } finally {
    await strict.close();
  }
});

test('failures at one address do not lock out the next person there: per account and address, a looser address ceiling', async (t) => {
  const { app } = t.context;
  // The defaults: 5 failures per account at one address, 100 per address.
  const office = await serveWithOwnDatabase(app.deps, 'web_office_address');
  const { store } = office;
  try {
    // An office behind one address on a Monday morning: eight colleagues each mistype five times (40 failures).
    for (let colleague = 0; colleague < 8; colleague += 1) {
      const { email } = await makeWebUser(store);
      for (let attempt = 0; attempt < 5; attempt += 1) {
        t.is(
          (
            await new WebClient(office.baseUrl).call('POST', '/api/web/session', {
              body: { email, password: 'mistyped!!' },
            })
          ).status,
          401,
        );
      }
      // Their sixth is refused, with the wait once and in one unit.
      const limited = await new WebClient(office.baseUrl).call('POST', '/api/web/session', {
        body: { email, password: 'mistyped!!' },
      });
      t.is(limited.status, 429);
      t.regex(limited.body.error.message, /^too many failed sign-ins; try again in \d+ (seconds|minutes)$/);
    }
    // The next person's first typo is a typo, not a lockout; then they are in.
    const person = await makeWebUser(store);
    const typo = await new WebClient(office.baseUrl).call('POST', '/api/web/session', {
      body: { email: person.email, password: 'first typo!' },
    });
    t.deepEqual(typo.body, WRONG);
    await new WebClient(office.baseUrl).signIn(person.email, TEST_PASSWORD);
  } finally {
    await office.close();
  }
});

test('a session: cookie-only (a Bearer key is not a web credential), tampered cookies cleared, idle and absolute expiry', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const browser = new WebClient(app.baseUrl);
  await browser.signIn(user.email, TEST_PASSWORD);
  t.is((await browser.call('GET', '/api/web/me')).status, 200);
  const anonymous = await new WebClient(app.baseUrl).call('GET', '/api/web/me');
  t.deepEqual([anonymous.status, anonymous.body.error.message], [401, 'sign in first (no session, or it has expired)']);

  const tampered = await new WebClient(app.baseUrl).call('GET', '/api/web/me', {
    headers: { cookie: `${browser.cookie}x` },
  });
  t.is(tampered.status, 401);
  t.regex(tampered.headers.getSetCookie()[0] ?? '', /^kbqa_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0$/);
  // /api/v1 takes API keys only: a session cookie there is no credential.
  t.is((await callV1(app, browser.cookie as string)).status, 401);

  for (const [label, change] of [
    ['idle', { sessionIdleMs: 2_000 }],
    ['absolute', { sessionMaxMs: 4_000 }],
  ] as const) {
    const short = await serveVariant(app.deps, (config) => ({ ...config, web: { ...config.web, ...change } }));
    try {
      const client = new WebClient(short.baseUrl);
      await client.signIn(user.email, TEST_PASSWORD);
      const signedInAt = Date.now();
      const sessionId = (client.cookie as string).split('=')[1];
      // Margins of seconds, not milliseconds: a loaded CI machine must not turn a live session into an expired one.
      if (label === 'absolute') {
        // Activity does not extend an absolute expiry.
        while (Date.now() - signedInAt < 2_000) {
          t.is((await client.call('GET', '/api/web/me')).status, 200);
          await sleep(400);
        }
        await sleep(4_600 - (Date.now() - signedInAt));
      } else {
        t.is((await client.call('GET', '/api/web/me')).status, 200);
        await sleep(2_600);
      }
      const expired = await client.call('GET', '/api/web/me');
      t.is(expired.status, 401, `${label} expiry`);
      t.is(client.cookie, null, 'the expired cookie is cleared');
      t.is(await app.deps.store.findSession(sha256(sessionId)), null, 'and its record deleted');
    } finally {
      await short.close();
    }
  }
});

test('over HTTPS (KBQA_PUBLIC_URL https://…) the cookie is Secure and __Host- prefixed, and only that name is read', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const https = await serveVariant(app.deps, (config) => ({ ...config, web: { ...config.web, secureCookies: true } }));
  try {
    const browser = new WebClient(https.baseUrl);
    const signedIn = await browser.signIn(user.email, TEST_PASSWORD);
    t.regex(
      signedIn.headers.getSetCookie()[0],
      /^__Host-kbqa_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/,
    );
    t.is((await browser.call('GET', '/api/web/me')).status, 200);
    const plainName = `kbqa_session=${(browser.cookie as string).split('=')[1]}`;
    t.is((await browser.call('GET', '/api/web/me', { headers: { cookie: plainName }, cookie: false })).status, 401);
  } finally {
    await https.close();
  }
});

test("CSRF: state-changing requests need the session's token, and cross-site or foreign-origin requests are refused", async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const browser = new WebClient(app.baseUrl);
  await browser.signIn(user.email, TEST_PASSWORD);
  const other = new WebClient(app.baseUrl);
  await other.signIn(user.email, TEST_PASSWORD);
  const create = (options: { csrf?: string | null; headers?: Record<string, string> }) =>
    browser.call('POST', '/api/web/knowledge-bases', { body: { name: 'csrf probe' }, ...options });

  for (const [label, options] of [
    ['no token', { csrf: null }],
    ['the anonymous token', { csrf: 'anonymous' }],
    ["another session's token", { csrf: other.csrfToken }],
    ['cross-site', { headers: { 'sec-fetch-site': 'cross-site' } }],
    ['same-site (a sibling subdomain)', { headers: { 'sec-fetch-site': 'same-site' } }],
    ['a foreign Origin', { headers: { origin: 'https://evil.example' } }],
  ] as const) {
    const refused = await create(options);
    t.is(refused.status, 403, label);
    t.is(refused.body.error.code, 'forbidden', label);
  }
  const listed = await browser.call('GET', '/api/web/knowledge-bases');
  t.false(
    listed.body.knowledge_bases.some((kb: { name: string }) => kb.name === 'csrf probe'),
    'no refused request created anything',
  );

  t.is((await create({ headers: { origin: app.baseUrl, 'sec-fetch-site': 'same-origin' } })).status, 201);
  t.is((await create({ headers: { origin: 'http://kbqa.example:8080' } })).status, 201, 'the configured public origin');
});

test('sign-out ends the session; sign out everywhere ends them all', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const [first, second, third] = [new WebClient(app.baseUrl), new WebClient(app.baseUrl), new WebClient(app.baseUrl)];
  for (const client of [first, second, third]) await client.signIn(user.email, TEST_PASSWORD);
  const firstCookie = first.cookie as string;

  const out = await first.call('DELETE', '/api/web/session');
  t.deepEqual(out.body, { signed_out: true });
  t.regex(out.headers.getSetCookie()[0], /Max-Age=0/);
  t.is(
    (await new WebClient(app.baseUrl).call('GET', '/api/web/me', { headers: { cookie: firstCookie } })).status,
    401,
    'the old cookie is dead',
  );
  t.is((await second.call('GET', '/api/web/me')).status, 200);

  t.deepEqual((await second.call('DELETE', '/api/web/sessions')).body, { signed_out: 2, api_keys_revoked: 0 });
  t.is((await second.call('GET', '/api/web/me')).status, 401);
  t.is((await third.call('GET', '/api/web/me')).status, 401);
});

test('changing the password needs the current one, ends every other session and keeps this one', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const [here, elsewhere] = [new WebClient(app.baseUrl), new WebClient(app.baseUrl)];
  await here.signIn(user.email, TEST_PASSWORD);
  await elsewhere.signIn(user.email, TEST_PASSWORD);
  const newPassword = 'a brand new passphrase';

  const wrong = await here.call('PUT', '/api/web/account/password', {
    body: { current_password: 'not my password!', new_password: newPassword },
  });
  t.deepEqual([wrong.status, wrong.body.error.message], [400, 'current_password: is incorrect']);
  const short = await here.call('PUT', '/api/web/account/password', {
    body: { current_password: TEST_PASSWORD, new_password: 'short' },
  });
  t.deepEqual([short.status, short.body.error.message], [400, 'new_password: must be at least 12 characters']);

  const changed = await here.call('PUT', '/api/web/account/password', {
    body: { current_password: TEST_PASSWORD, new_password: newPassword },
  });
  t.deepEqual(changed.body, { changed: true, api_keys_revoked: 0 });
  t.is((await here.call('GET', '/api/web/me')).status, 200);
  t.is((await elsewhere.call('GET', '/api/web/me')).status, 401);
  t.is(
    (
      await new WebClient(app.baseUrl).call('POST', '/api/web/session', {
        body: { email: user.email, password: TEST_PASSWORD },
      })
    ).status,
    401,
  );
  await new WebClient(app.baseUrl).signIn(user.email, newPassword);
});

test('admins invite users with a one-time link; the link sets a password, signs in, and works once', async (t) => {
  const { app } = t.context;
  const admin = await makeWebUser(app.deps.store, { isAdmin: true });
  const member = await makeWebUser(app.deps.store);
  const [adminBrowser, memberBrowser] = [new WebClient(app.baseUrl), new WebClient(app.baseUrl)];
  await adminBrowser.signIn(admin.email, TEST_PASSWORD);
  await memberBrowser.signIn(member.email, TEST_PASSWORD);

  const email = uniqueEmail('invited');
  t.is((await memberBrowser.call('POST', '/api/web/admin/invitations', { body: { email } })).status, 403);
  t.is((await memberBrowser.call('GET', '/api/web/admin/users')).status, 403);
  const invited = await adminBrowser.call('POST', '/api/web/admin/invitations', { body: { email } });
  t.is(invited.status, 201);
  t.regex(invited.body.link, /^http:\/\/kbqa\.example:8080\/set-password#token=[\w-]{43}$/);
  const token = invited.body.link.split('#token=')[1];
  const users = (await adminBrowser.call('GET', '/api/web/admin/users')).body.users;
  t.like(
    users.find((user: { email: string }) => user.email === email),
    { is_admin: false, has_password: false },
  );
  t.false(JSON.stringify(users).includes('argon2'), 'no hash in the list');
  t.is((await adminBrowser.call('POST', '/api/web/admin/invitations', { body: { email } })).status, 409);

  const invitee = new WebClient(app.baseUrl);
  t.deepEqual((await invitee.call('POST', '/api/web/password-links/inspect', { body: { token } })).body, {
    email,
    purpose: 'invite',
  });
  t.is(
    (await invitee.call('POST', '/api/web/password-links/use', { body: { token, password: 'too short' } })).status,
    400,
  );
  const used = await invitee.call('POST', '/api/web/password-links/use', { body: { token, password: TEST_PASSWORD } });
  t.is(used.status, 200);
  t.is((await invitee.call('GET', '/api/web/me')).body.email, email);
  const again = await new WebClient(app.baseUrl).call('POST', '/api/web/password-links/use', {
    body: { token, password: 'another password here' },
  });
  t.deepEqual([again.status, again.body.error.code], [400, 'bad_request']);
  t.is(
    (await new WebClient(app.baseUrl).call('POST', '/api/web/password-links/inspect', { body: { token: 'made-up' } }))
      .status,
    400,
  );

  // An expired link is refused.
  const record = await app.deps.store.findUserByEmail(email);
  const expired = await createPasswordLink(
    app.deps.store,
    { publicUrl: 'http://x', passwordLinkMs: 1 },
    record!,
    'reset',
  );
  await sleep(10);
  t.is(
    (
      await invitee.call('POST', '/api/web/password-links/inspect', {
        body: { token: expired.url.split('#token=')[1] },
      })
    ).status,
    400,
  );
});

test('kbqa users create and reset-password print one-time links; using a reset link ends every session', async (t) => {
  const { app, databaseUrl } = t.context;
  const env = {
    ...process.env,
    KBQA_MONGODB_URL: databaseUrl,
    KBQA_PUBLIC_URL: 'https://kb.example.org',
    KBQA_LOG_LEVEL: 'silent',
  };
  const email = uniqueEmail('cli');
  const cli = (...args: string[]) => run(process.execPath, ['bin/kbqa.mjs', ...args], { cwd: ROOT, env });
  const created = JSON.parse((await cli('users', 'create', '--email', email, '--admin', '--json')).stdout);
  t.is(created.is_admin, true);
  t.regex(created.password_link, /^https:\/\/kb\.example\.org\/set-password#token=[\w-]{43}$/);
  const browser = new WebClient(app.baseUrl);
  const used = await browser.call('POST', '/api/web/password-links/use', {
    body: { token: created.password_link.split('#token=')[1], password: TEST_PASSWORD },
  });
  t.is(used.body.user.is_admin, true);

  const text = (await cli('users', 'reset-password', '--email', email)).stdout;
  const link = text.trim().split('\n').at(-1) as string;
  t.regex(link, /^https:\/\/kb\.example\.org\/set-password#token=[\w-]{43}$/);
  t.is((await browser.call('GET', '/api/web/me')).status, 200, 'a reset link ends nothing until it is used');
  const reset = await new WebClient(app.baseUrl).call('POST', '/api/web/password-links/use', {
    body: { token: link.split('#token=')[1], password: 'the new passphrase' },
  });
  t.is(reset.status, 200);
  t.is((await browser.call('GET', '/api/web/me')).status, 401);
});

async function callV1(app: TestApp, cookie: string) {
  return app.call('GET', '/api/v1/me', { headers: { cookie } });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

test('a burst of parallel wrong passwords is counted before verifying: at most the limit are checked, the rest 429', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  // The per-address limit raised out of the way: this file's other tests share the address's count.
  const lenient = await serveVariant(app.deps, (config) => ({
    ...config,
    web: { ...config.web, signIn: { ...config.web.signIn, maxFailuresPerAddress: 10_000 } },
  }));
  const burst = await Promise.all(
    Array.from({ length: 20 }, () =>
      new WebClient(lenient.baseUrl).call('POST', '/api/web/session', {
        body: { email: user.email, password: 'a wrong guess!!' },
      }),
    ),
  ).finally(() => lenient.close());
  const statuses = burst.map((answer) => answer.status);
  t.is(statuses.filter((status) => status === 401).length, 5, 'exactly KBQA_SIGN_IN_MAX_FAILURES guesses were checked');
  t.is(statuses.filter((status) => status === 429).length, 15);
});

test('a wrong password while signed in keeps the session; a right one replaces it', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const browser = new WebClient(app.baseUrl);
  await browser.signIn(user.email, TEST_PASSWORD);
  const first = browser.cookie as string;
  t.is(
    (await browser.call('POST', '/api/web/session', { body: { email: user.email, password: 'mistyped password' } }))
      .status,
    401,
  );
  t.is((await browser.call('GET', '/api/web/me')).status, 200, 'still signed in');
  await browser.signIn(user.email, TEST_PASSWORD);
  t.not(browser.cookie, first);
  t.is(
    (await new WebClient(app.baseUrl).call('GET', '/api/web/me', { headers: { cookie: first } })).status,
    401,
    'the replaced session is gone',
  );
});

test('a DNS-rebinding page (a foreign Host and Origin) cannot act, even on anonymous endpoints; nor can a cross-site one', async (t) => {
  const { app } = t.context;
  const port = new URL(app.baseUrl).port;
  const rebound = await rawPost(app.baseUrl, '/api/web/sign-up', {
    host: `evil.example:${port}`,
    origin: `http://evil.example:${port}`,
    'sec-fetch-site': 'same-origin',
  });
  t.is(rebound.status, 403);
  const crossSite = await new WebClient(app.baseUrl).call('POST', '/api/web/session', {
    body: { email: 'a@example.test', password: TEST_PASSWORD },
    headers: { 'sec-fetch-site': 'cross-site' },
  });
  t.is(crossSite.status, 403);
  const loopbackName = await rawPost(app.baseUrl, '/api/web/sign-up', {
    host: `localhost:${port}`,
    origin: `http://localhost:${port}`,
  });
  t.is(
    loopbackName.status,
    403,
    'allowed through the CSRF check as loopback; sign-up itself is closed (403 with its own message)',
  );
  t.regex(loopbackName.body, /sign-up is closed/);
});

test('expired sessions, old failure windows and spent links are swept', async (t) => {
  // A database of its own: a sweep with no idle time ends every session in the database.
  const databaseUrl = freshDatabaseUrl('web_sweep');
  const store = await openStore(databaseUrl, 5_000);
  const own = await serveVariant({ ...t.context.app.deps, store }, (config) => config);
  try {
    const user = await makeWebUser(store);
    const browser = new WebClient(own.baseUrl);
    await browser.signIn(user.email, TEST_PASSWORD);
    const digest = sha256((browser.cookie as string).split('=')[1]);
    const settings = t.context.app.deps.config.web;
    await purgeExpiredWebRecords(store, settings);
    t.truthy(await store.findSession(digest), 'a live session stays');
    await purgeExpiredWebRecords(store, { ...settings, sessionIdleMs: 0 });
    t.is(await store.findSession(digest), null, 'an idle one goes');
  } finally {
    await own.close();
    await store.close();
    await dropDatabase(databaseUrl);
  }
});

test('a first-account claim left by a process that died before creating the account is released after a minute', async (t) => {
  const databaseUrl = freshDatabaseUrl('web_stale_claim');
  const store = await openStore(databaseUrl, 5_000);
  try {
    await store.claimFirstAccount('dead-process', new Date(Date.now() - 5_000));
    await t.throwsAsync(createFirstAccount(store, { email: uniqueEmail('early'), password: TEST_PASSWORD }), {
      message: /already exists/,
    });
    await store.releaseFirstAccount('dead-process');
    await store.claimFirstAccount('dead-process', new Date(Date.now() - 120_000));
    const user = await createFirstAccount(store, { email: uniqueEmail('late'), password: TEST_PASSWORD });
    t.is(user.is_admin, true);
  } finally {
    await store.close();
    await dropDatabase(databaseUrl);
  }
});

/** A POST with headers fetch() will not send (Host). */
function rawPost(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ email: uniqueEmail('rebind'), password: TEST_PASSWORD });
    const request = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'x-csrf-token': 'anonymous',
          'content-length': Buffer.byteLength(body),
        },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
