// The sign-in pause (issue 31, the web walk): a wrong password says how many tries are left, the failure that spends
// the last one pauses sign-in for 1, 5, 15, then 60 minutes on successive lock-outs, an email with no account gets
// exactly the same answers, and an administrator's reset link gets a person back in.
import { accountAtAddressKey, LOCK_OUT_MINUTES } from '../service/commands/sessions.ts';
import type { Store } from '../service/store/index.ts';
import { makeWebUser, TEST_PASSWORD, uniqueEmail } from './factories/accounts.ts';
import { testWithApp } from './helpers/app.ts';
import type { CallResult } from './helpers/http.ts';
import { WebClient } from './helpers/webClient.ts';

const test = testWithApp();

/** The addresses a loopback client can have as the server sees it. */
const LOOPBACK = ['127.0.0.1', '::ffff:127.0.0.1', '::1'];

function signIn(baseUrl: string, email: string, password: string): Promise<CallResult> {
  return new WebClient(baseUrl).call('POST', '/api/web/session', { body: { email, password } });
}

/** What a client sees of an answer: status, body and Retry-After (the comparison for "the same answer"). */
function seen(answer: CallResult) {
  return { status: answer.status, body: answer.body as unknown, retryAfter: answer.headers.get('retry-after') };
}

const withoutNumbers = (body: unknown) => JSON.stringify(body).replaceAll(/\d+/g, 'N');

/** Five wrong passwords in a row: what each answered. */
async function fiveWrong(baseUrl: string, email: string): Promise<ReturnType<typeof seen>[]> {
  const answers = [];
  for (let attempt = 0; attempt < 5; attempt += 1)
    answers.push(seen(await signIn(baseUrl, email, `wrong ${attempt}!`)));
  return answers;
}

/** As if the pause (and the window) of this email had ended a moment ago: no test waits out minutes. */
async function endPause(store: Store, email: string): Promise<void> {
  const past = new Date(Date.now() - 1_000);
  for (const address of LOOPBACK) {
    await store.updateSignInCounter(accountAtAddressKey(email, address), (current) => ({
      record: current && { ...current, locked_until: past, window_started_at: past },
      outcome: null,
    }));
  }
}

test('a wrong password says the tries left; the fifth pauses sign-in for a minute; an unknown email answers the same', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const nobody = uniqueEmail('nobody');
  const known = await fiveWrong(app.baseUrl, user.email);
  const unknown = await fiveWrong(app.baseUrl, nobody);

  t.deepEqual(
    known.map((answer) => [answer.status, answer.body]),
    [
      [401, { error: { code: 'unauthorized', message: 'email or password is incorrect', tries_left: 4 } }],
      [401, { error: { code: 'unauthorized', message: 'email or password is incorrect', tries_left: 3 } }],
      [
        401,
        {
          error: {
            code: 'unauthorized',
            message: 'email or password is incorrect; 2 tries left before sign-in pauses',
            tries_left: 2,
          },
        },
      ],
      [
        401,
        {
          error: {
            code: 'unauthorized',
            message: 'email or password is incorrect; 1 try left before sign-in pauses',
            tries_left: 1,
          },
        },
      ],
      [
        401,
        {
          error: {
            code: 'unauthorized',
            message: 'email or password is incorrect; sign-in is paused for 60 seconds',
            tries_left: 0,
          },
        },
      ],
    ],
  );
  t.deepEqual(
    known.map((answer) => answer.retryAfter),
    [null, null, null, null, '60'],
    'the pause is in Retry-After',
  );
  t.deepEqual(unknown, known, 'an email with no account: the same words, counts and pause');

  // Paused: even the right password waits, with what is left of the minute; the unknown email the same.
  const paused = seen(await signIn(app.baseUrl, user.email, TEST_PASSWORD));
  const pausedNobody = seen(await signIn(app.baseUrl, nobody, TEST_PASSWORD));
  t.is(paused.status, 429);
  // The seconds left differ only by when each pause began.
  t.deepEqual(withoutNumbers(pausedNobody.body), withoutNumbers(paused.body));
  const wait = Number(paused.retryAfter);
  t.true(wait >= 1 && wait <= 60, `Retry-After ${wait} s, within the minute`);
  t.regex((paused.body as { error: { message: string } }).error.message, /^too many failed sign-ins; try again in /);
});

test('successive pauses last 1, 5, 15, then 60 minutes, and no longer; a sign-in that succeeds starts over', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const pauses: number[] = [];
  for (let lockout = 0; lockout < 5; lockout += 1) {
    const answers = await fiveWrong(app.baseUrl, user.email);
    t.deepEqual(
      answers.map((answer) => answer.status),
      [401, 401, 401, 401, 401],
      'each window has its five tries',
    );
    pauses.push(Number(answers[4].retryAfter) / 60);
    await endPause(app.deps.store, user.email);
  }
  t.deepEqual(pauses, [1, 5, 15, 60, 60]);
  t.deepEqual([...LOCK_OUT_MINUTES], [1, 5, 15, 60]);

  // After the pause ends, the right password gets in, and the streak is forgotten: the next pause is a minute.
  await new WebClient(app.baseUrl).signIn(user.email, TEST_PASSWORD);
  const again = await fiveWrong(app.baseUrl, user.email);
  t.is(again[4].retryAfter, '60');
});

test("an administrator's reset link (Users page) gets a paused person back in at once", async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const admin = await makeWebUser(app.deps.store, { isAdmin: true });
  await fiveWrong(app.baseUrl, user.email);
  t.is((await signIn(app.baseUrl, user.email, TEST_PASSWORD)).status, 429, 'paused');

  const someone = new WebClient(app.baseUrl);
  await someone.signIn((await makeWebUser(app.deps.store)).email, TEST_PASSWORD);
  const refused = await someone.call('POST', `/api/web/admin/users/${user.id}/password-reset`);
  t.is(refused.status, 403, 'only administrators make reset links');

  const administrator = new WebClient(app.baseUrl);
  await administrator.signIn(admin.email, TEST_PASSWORD);
  const unknownUser = await administrator.call(
    'POST',
    '/api/web/admin/users/3f0c9a52-6d1e-4b8f-9a7c-2e5d8b1f4c60/password-reset',
  );
  t.is(unknownUser.status, 404);
  const reset = await administrator.call('POST', `/api/web/admin/users/${user.id}/password-reset`);
  t.is(reset.status, 201);
  t.is(reset.body.user.email, user.email);
  const token = new URL(reset.body.link as string).hash.replace('#token=', '');
  t.is(
    (await new WebClient(app.baseUrl).call('POST', '/api/web/password-links/inspect', { body: { token } })).body
      .purpose,
    'reset',
  );

  const used = await new WebClient(app.baseUrl).call('POST', '/api/web/password-links/use', {
    body: { token, password: 'a brand new password' },
  });
  t.is(used.status, 200, 'the link signs them in');
  t.is((await signIn(app.baseUrl, user.email, 'a brand new password')).status, 200, 'and the pause is over');
});

test("a signed-in person's wrong password (creating an API key) counts the same and says the tries left", async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const browser = new WebClient(app.baseUrl);
  await browser.signIn(user.email, TEST_PASSWORD);
  const answers = [];
  for (let attempt = 0; attempt < 5; attempt += 1) {
    answers.push(
      await browser.call('POST', '/api/web/api-keys', { body: { name: 'ci', password: `not it ${attempt}` } }),
    );
  }
  t.deepEqual(
    answers.map((answer) => [answer.status, answer.body.error.tries_left]),
    [
      [400, 4],
      [400, 3],
      [400, 2],
      [400, 1],
      [400, 0],
    ],
  );
  t.is(answers[4].headers.get('retry-after'), '60');
  t.is(answers[0].body.error.message, 'password: is incorrect');
});
