// The retry policy of calls to model servers (service/rag/retries.ts): which failures are transient, how long the
// waits are, and that retrying stops at the budget, at a permanent failure and at an aborted signal.
import test from 'ava';
import { backoffMs, isTransient, retryTransient } from '../../service/rag/retries.ts';

test('isTransient: 408, 429 and 5xx statuses, on the error or on its response', (t) => {
  for (const status of [408, 429, 500, 502, 503, 504]) t.true(isTransient({ status }), String(status));
  t.true(isTransient({ response: { status: 503 } }));
});

test('isTransient: other 4xx statuses are permanent, whatever the message says', (t) => {
  for (const status of [400, 401, 403, 404, 422])
    t.false(isTransient({ status, message: 'connection timeout' }), String(status));
});

test('isTransient: timeouts, aborts and dropped connections without a status are transient', (t) => {
  t.true(isTransient(new Error('connect ECONNREFUSED 127.0.0.1:9')));
  t.true(isTransient(new Error('read ECONNRESET')));
  t.true(isTransient(new TypeError('fetch failed')));
  t.true(isTransient(Object.assign(new Error('The operation was aborted'), { name: 'AbortError' })));
  t.true(isTransient(Object.assign(new Error('took too long'), { name: 'TimeoutError' })));
});

test('isTransient: a programming error or nothing at all is not transient', (t) => {
  t.false(isTransient(new TypeError("Cannot read properties of undefined (reading 'x')")));
  t.false(isTransient(undefined));
  t.false(isTransient(null));
});

test('backoffMs: 250 ms doubling, capped at 4 s, each within ±25 %', (t) => {
  const bases = [250, 500, 1000, 2000, 4000, 4000, 4000];
  for (const [index, base] of bases.entries()) {
    for (let sample = 0; sample < 50; sample += 1) {
      const wait = backoffMs(index + 1);
      t.true(wait >= base * 0.75 && wait <= base * 1.25, `retry ${index + 1}: ${wait} ms`);
    }
  }
});

test('retryTransient: transient failures are retried until one attempt succeeds', async (t) => {
  let calls = 0;
  const result = await retryTransient(3, undefined, async () => {
    calls += 1;
    if (calls < 2) throw Object.assign(new Error('busy'), { status: 503 });
    return 'answer';
  });
  t.is(result, 'answer');
  t.is(calls, 2);
});

test('retryTransient: a permanent failure is thrown at once, as it was', async (t) => {
  let calls = 0;
  const permanent = Object.assign(new Error('bad request'), { status: 400 });
  const thrown = await t.throwsAsync(
    retryTransient(5, undefined, async () => {
      calls += 1;
      throw permanent;
    }),
  );
  t.is(thrown, permanent);
  t.is(calls, 1);
});

test("retryTransient: a signal aborted during an attempt throws that attempt's failure, with no retry", async (t) => {
  const controller = new AbortController();
  let calls = 0;
  const busy = Object.assign(new Error('busy'), { status: 503 });
  const running = retryTransient(5, controller.signal, async () => {
    calls += 1;
    controller.abort(new Error('client went away'));
    throw busy;
  });
  await t.throwsAsync(running, { is: busy });
  t.is(calls, 1);
});

test('retryTransient: a signal aborted during the wait stops it before the next attempt', async (t) => {
  const controller = new AbortController();
  let calls = 0;
  const running = retryTransient(5, controller.signal, async () => {
    calls += 1;
    // The first wait is at least 187 ms: the abort lands inside it.
    setTimeout(() => controller.abort(new Error('client went away')), 20);
    throw Object.assign(new Error('busy'), { status: 503 });
  });
  const thrown = await t.throwsAsync(running);
  t.not(thrown?.message, 'busy');
  t.is(calls, 1);
});
