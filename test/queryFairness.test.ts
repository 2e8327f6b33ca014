// One user's burst of questions against everyone else's (issue 31 §3): a burst beyond the user's bound is refused
// with 429 and Retry-After (POST /query, streamed or not, and POST /search), a question that waits past its budget
// is refused rather than kept, and another user's question is answered, taken by the model pool before the burst's
// questions waiting there. Asserted on statuses, headers and the pool's own queue, never on time. Serial: the pool
// is the app's, and its queue is what one test reads.
import type { ExecutionContext } from 'ava';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { serveVariant, testWithApp, type TestApp } from './helpers/app.ts';
import { callJson, type CallResult } from './helpers/http.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';

const test = testWithApp<{ burster: TestUser; burstKb: string; other: TestUser; otherKb: string }>();
const serial = test.serial;

const NOTES = [
  'The harbour ferry to Skerry Island leaves the north pier at 07:15 and at 16:40 on weekdays. On Saturdays there is a single crossing at 10:00.',
  'Keeping bees on a city rooftop needs a permit from the borough. Hives must stand at least two metres from the roof edge.',
  'Mount Ardent is a stratovolcano whose last eruption was in 1883. The summit crater holds an acidic lake that steams in winter.',
  'The library lends laptops to members for two weeks. A lost charger costs 25 pounds and a damaged screen is billed at cost.',
  'Tidal energy turbines in the strait turn with the ebb and the flood. Maintenance divers work only at slack water.',
  'The allotment society meets on the first Monday of the month. Plots are reallocated each spring from the waiting list.',
];

/** A question of 4,000 characters (the longest allowed) of the KB's own words: the heaviest to embed and search. */
const LONG_QUESTION = (() => {
  let text = '';
  for (let index = 0; text.length < 4_000; index += 1) text += `${NOTES[index % NOTES.length]} `;
  return text.slice(0, 4_000);
})();

test.before(async (t) => {
  const { app } = t.context;
  t.context.burster = await makeUser(app.deps.store);
  t.context.other = await makeUser(app.deps.store);
  t.context.burstKb = await createKb(app, t.context.burster.key, 'burst');
  t.context.otherKb = await createKb(app, t.context.other.key, 'other');
  for (const [index, note] of NOTES.entries()) {
    await ingest(app, t.context.burster.key, t.context.burstKb, `note-${index}.md`, note);
    await ingest(app, t.context.other.key, t.context.otherKb, `note-${index}.md`, note);
  }
});

interface Burst {
  key: string;
  kb: string;
  path?: string;
  extra?: Record<string, unknown>;
}

/** `count` long questions at once from one key. */
function burst(baseUrl: string, { key, kb, path = '/api/v1/query', extra = {} }: Burst, count = 24) {
  const body = { query: LONG_QUESTION, knowledge_base_ids: [kb], max_results: 50, ...extra };
  return Promise.all(Array.from({ length: count }, () => callJson(baseUrl, 'POST', path, { key, body })));
}

function assertRefusals(t: ExecutionContext, responses: CallResult[], message: RegExp): CallResult[] {
  const refused = responses.filter((response) => response.status === 429);
  const statuses = responses.map((response) => response.status).join(', ');
  t.true(refused.length > 0, `no 429 among ${statuses}`);
  t.is(responses.filter((response) => response.status === 200).length + refused.length, responses.length, statuses);
  for (const response of refused) {
    t.is(response.body.error.code, 'rate_limited');
    t.regex(response.body.error.message, message);
    t.regex(response.headers.get('content-type') ?? '', /^application\/json/, 'refused before any event');
    t.true(Number(response.headers.get('retry-after')) >= 1, `Retry-After: ${response.headers.get('retry-after')}`);
  }
  return refused;
}

function answerOf(app: TestApp, user: TestUser, kb: string) {
  return app.call('POST', '/api/v1/query', {
    key: user.key,
    body: { query: 'When does the ferry leave the north pier?', knowledge_base_ids: [kb] },
  });
}

serial("24 long questions at once from one key: beyond the user's 4 answered and 8 waiting, 429s", async (t) => {
  const { app, burster, burstKb, other, otherKb } = t.context;
  const flood = burst(app.baseUrl, { key: burster.key, kb: burstKb, extra: { include_chunks: true } });
  // Another user asking meanwhile is not refused: the bound is the burster's own.
  const answer = await answerOf(app, other, otherKb);
  t.is(answer.status, 200, JSON.stringify(answer.body));
  t.regex(answer.body.answer, /07:15/);
  const responses = await flood;
  const refused = assertRefusals(t, responses, /questions of yours are being answered|waited 10 s/);
  t.true(refused.length <= 24 - 4, 'the 4 answered at once are never refused');
});

serial('streamed questions are bounded the same way: the 429 comes before the stream starts', async (t) => {
  const { app, burster, burstKb } = t.context;
  const responses = await burst(app.baseUrl, { key: burster.key, kb: burstKb, extra: { stream: true } });
  assertRefusals(t, responses, /questions of yours are being answered|waited 10 s/);
  for (const response of responses.filter((answered) => answered.status === 200)) {
    t.regex(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  }
});

serial('POST /search is bounded with the questions', async (t) => {
  const { app, burster, burstKb } = t.context;
  const responses = await burst(app.baseUrl, { key: burster.key, kb: burstKb, path: '/api/v1/search' });
  assertRefusals(t, responses, /questions of yours are being answered|waited 10 s/);
});

serial('a question waiting longer than KBQA_QUERY_WAIT_MS is refused, not kept waiting', async (t) => {
  const { app, burster, burstKb } = t.context;
  const variant = await serveVariant(app.deps, (config) => ({
    ...config,
    queries: { ...config.queries, concurrencyPerUser: 1, queuePerUser: 8, waitMs: 1 },
  }));
  try {
    const responses = await burst(variant.baseUrl, { key: burster.key, kb: burstKb }, 6);
    const refused = assertRefusals(t, responses, /waited 0.001 s for one of your 1 questions being answered to end/);
    t.is(refused.length, 5, 'one answered; the five waiting gave up after 1 ms');
  } finally {
    await variant.close();
  }
});

serial("another user's question goes before the burst's questions waiting in the model pool", async (t) => {
  const { app, burster, burstKb, other, otherKb } = t.context;
  // No bound on the burster here: all 24 questions reach the model pool, whose order is what this test reads.
  const variant = await serveVariant(app.deps, (config) => ({
    ...config,
    queries: { ...config.queries, concurrencyPerUser: 100, queuePerUser: 0 },
  }));
  const models = app.deps.rag.models;
  try {
    const flood = burst(variant.baseUrl, { key: burster.key, kb: burstKb });
    const deadline = Date.now() + 120_000;
    while (models.queued().interactive < 12 && Date.now() < deadline) await new Promise((wait) => setTimeout(wait, 5));
    const waitingWhenAsked = models.queued().interactive;
    t.true(waitingWhenAsked >= 12, `${waitingWhenAsked} of the burst's questions waiting in the pool`);
    const answer = await callJson(variant.baseUrl, 'POST', '/api/v1/query', {
      key: other.key,
      body: { query: 'When does the ferry leave the north pier?', knowledge_base_ids: [otherKb] },
    });
    const waitingWhenAnswered = models.queued().interactive;
    t.is(answer.status, 200, JSON.stringify(answer.body));
    t.regex(answer.body.answer, /07:15/);
    // First come, first served, every question of the burst would have started before this one: none left waiting.
    t.true(
      waitingWhenAnswered > 0,
      `the burst's questions still waiting when the other user's was answered: ${waitingWhenAnswered} of ${waitingWhenAsked}`,
    );
    t.true((await flood).every((response) => response.status === 200));
  } finally {
    await variant.close();
  }
});
