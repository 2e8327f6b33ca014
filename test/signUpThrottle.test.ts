// Open sign-up is rate-limited per client address like sign-in (issue 22, item 10b): each attempt is counted
// before its Argon2id hash, so a flood of sign-ups neither fills the users collection nor the hashing threads.
import { TEST_PASSWORD, uniqueEmail } from './factories/accounts.ts';
import { serveWithOwnDatabase, testWithApp } from './helpers/app.ts';
import { WebClient } from './helpers/webClient.ts';

const test = testWithApp();

test('open sign-up: beyond KBQA_SIGN_UP_MAX_PER_ADDRESS attempts in the window, 429 with Retry-After and no account', async (t) => {
  const { app } = t.context;
  // A database of this test's own: the address's counter starts at zero.
  const open = await serveWithOwnDatabase(app.deps, 'sign_up_limit', (config) => ({
    ...config,
    web: { ...config.web, signUpOpen: true, signUpMaxPerAddress: 3 },
  }));
  const { store } = open;
  try {
    // A refused password counts too: every attempt may cost a hash.
    const short = await new WebClient(open.baseUrl).call('POST', '/api/web/sign-up', {
      body: { email: uniqueEmail('short'), password: 'short' },
    });
    t.is(short.status, 400);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const signedUp = await new WebClient(open.baseUrl).call('POST', '/api/web/sign-up', {
        body: { email: uniqueEmail('flood'), password: TEST_PASSWORD },
      });
      t.is(signedUp.status, 201);
    }
    const email = uniqueEmail('over');
    const limited = await new WebClient(open.baseUrl).call('POST', '/api/web/sign-up', {
      body: { email, password: TEST_PASSWORD },
    });
    t.is(limited.status, 429);
    t.is(limited.body.error.code, 'rate_limited');
    t.regex(limited.body.error.message, /^too many sign-ups from this address; try again in \d+ (seconds|minutes)$/);
    const retryAfter = Number(limited.headers.get('retry-after'));
    const windowSeconds = app.deps.config.web.signIn.windowMs / 1000;
    t.true(
      retryAfter >= 1 && retryAfter <= windowSeconds,
      `Retry-After ${retryAfter} s within the ${windowSeconds} s window`,
    );
    t.is(await store.findUserByEmail(email), null, 'the refused sign-up created no account');
  } finally {
    await open.close();
  }
});
