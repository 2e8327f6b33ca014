// The per-user bound on questions (commands/queryAdmission.ts): places answered at once, a bounded wait in order, a
// wait budget and a rate, each refusal a 429 with its Retry-After. Pure: no stack.
import test from 'ava';
import { QueryAdmission } from '../../service/commands/queryAdmission.ts';
import { QueryBusyError } from '../../service/errors.ts';
import { HEAVY_QUESTION_CHARS } from '../../service/rag/modelPool.ts';

const settings = { concurrencyPerUser: 2, queuePerUser: 1, waitMs: 60_000, ratePerMinute: 0 };

test("beyond its places and its queue a user's question is refused at once; another user's is not", async (t) => {
  const admission = new QueryAdmission(settings);
  const first = await admission.admit('a');
  await admission.admit('a');
  const waiting = admission.admit('a');
  t.deepEqual(admission.of('a'), { running: 2, waiting: 1 });
  const refused = await t.throwsAsync(admission.admit('a'), { instanceOf: QueryBusyError });
  t.is(refused?.status, 429);
  t.is(refused?.retryAfterSeconds, 1);
  t.regex(refused?.message ?? '', /2 questions of yours are being answered and 1 are waiting/);
  const other = await admission.admit('b');
  t.deepEqual(admission.of('b'), { running: 1, waiting: 0 });
  other();
  t.deepEqual(admission.of('b'), { running: 0, waiting: 0 });
  // A place given back goes to the question waiting; giving it back twice changes nothing.
  first();
  first();
  const third = await waiting;
  t.deepEqual(admission.of('a'), { running: 2, waiting: 0 });
  third();
  t.deepEqual(admission.of('a'), { running: 1, waiting: 0 });
});

test('a question waiting longer than KBQA_QUERY_WAIT_MS is refused, not kept waiting', async (t) => {
  const admission = new QueryAdmission({ ...settings, concurrencyPerUser: 1, waitMs: 20 });
  const running = await admission.admit('a');
  const refused = await t.throwsAsync(admission.admit('a'), { instanceOf: QueryBusyError });
  t.regex(refused?.message ?? '', /waited 0.02 s for one of your 1 questions being answered to end/);
  t.deepEqual(admission.of('a'), { running: 1, waiting: 0 });
  running();
  t.deepEqual(admission.of('a'), { running: 0, waiting: 0 });
});

test('the rate bound lets ten seconds of questions through at once, then refuses with the wait', async (t) => {
  const admission = new QueryAdmission({ ...settings, concurrencyPerUser: 100, ratePerMinute: 60 });
  const now = 1_000_000;
  for (let index = 0; index <= 10; index += 1) (await admission.admit('a', '', now))();
  const refused = await t.throwsAsync(admission.admit('a', '', now), { instanceOf: QueryBusyError });
  t.is(refused?.retryAfterSeconds, 1);
  t.regex(refused?.message ?? '', /more than 60 questions a minute/);
  // A second later one more is on time.
  await t.notThrowsAsync(admission.admit('a', '', now + 1_000));
});

test("a heavy question takes four places: with four, one user's long questions are answered one at a time", async (t) => {
  const admission = new QueryAdmission({ ...settings, concurrencyPerUser: 4, queuePerUser: 8 });
  const long = 'x'.repeat(HEAVY_QUESTION_CHARS + 1);
  const usual = await admission.admit('a', 'short');
  // One usual question running: the heavy one waits for it, and the usual one after it waits behind it, in order.
  const heavy = admission.admit('a', long);
  const after = admission.admit('a', 'short too');
  t.deepEqual(admission.of('a'), { running: 1, waiting: 2 });
  usual();
  const releaseHeavy = await heavy;
  t.deepEqual(admission.of('a'), { running: 4, waiting: 1 });
  releaseHeavy();
  const releaseAfter = await after;
  t.deepEqual(admission.of('a'), { running: 1, waiting: 0 });
  // Another user's question never waits for them.
  const other = await admission.admit('b', long);
  t.deepEqual(admission.of('b'), { running: 4, waiting: 0 });
  other();
  releaseAfter();
  t.deepEqual(admission.of('a'), { running: 0, waiting: 0 });
});
