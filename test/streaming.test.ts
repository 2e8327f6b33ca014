// Streamed answers (POST /api/v1/query with "stream": true or Accept: text/event-stream), read with a real SSE parser:
// the event order, deltas that add up exactly to the done event's answer and citations, done equal to the JSON
// answer, failures before and after the stream started, and a client going away cancelling the model call. The
// LLM is the OpenAI stand-in (test/helpers/fakeOpenAI.ts) streaming token by token; the extractive model streams
// sentence by sentence. First, the incremental citation mapper against the whole-answer one, on generated answers.
// Tests using the stand-in are serial: its script is shared.
import type { ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { NOTHING_RELEVANT_ANSWER } from '../service/commands/answerQuestion.ts';
import { CitationMapper, mapCitations, toPassageDocument, type Citation } from '../service/rag/answerChain.ts';
import { makeUser, makeWebUser, type TestUser } from './factories/accounts.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { assertMarkersMatchCitations, ingest, markers } from './helpers/documentsApi.ts';
import {
  allEvents,
  concatDeltas,
  postForEvents,
  type StreamedEvent,
  type StreamRequest,
} from './helpers/eventStream.ts';
import { answerModelsAt, startFakeOpenAI, type FakeOpenAI } from './helpers/fakeOpenAI.ts';
import { mulberry32, randomSplit, type Rng } from './helpers/random.ts';
import { WebClient } from './helpers/webClient.ts';
import { createKbqaClient, KbqaApiError } from '../clients/typescript/index.ts';
import { streamQuery } from '../clients/typescript/stream.ts';
import { capturingLogger } from './helpers/logCapture.ts';
import { LIGHTHOUSE, QUESTION, TIDES, UNAVAILABLE } from './fixtures/corranPoint.ts';

interface Context {
  app: TestApp;
  /** What the app logs (info and above). */
  logLines: string[];
  fake: FakeOpenAI;
  user: TestUser;
  kb: string;
}

const captured = capturingLogger();
const test = testWithApp<Omit<Context, 'app'>>({
  logger: captured.logger,
  env: async (t) => {
    t.context.fake = await startFakeOpenAI();
    return answerModelsAt(t.context.fake, 'gpt-test', 3000);
  },
});

// ── The incremental citation mapper ─────────────────────────────────────────────────────────────────────────────

const passage = (n: number) =>
  toPassageDocument(`Passage ${n} says something about topic ${n}.`, {
    chunk_id: `chunk-${n}`,
    document_id: `document-${n}`,
    knowledge_base_id: 'kb',
    title: `Title ${n}`,
    filename: `t${n}.md`,
    heading_path: [],
    chunk_index: 0,
    page_start: null,
    page_end: null,
    similarity: 0.5 + n / 10,
  });

/** The whole-answer mapping as it was written before it became incremental: regex replacements, then trim. */
function referenceAnswer(rawAnswer: string, passageCount: number): { answer: string; order: number[] } {
  const order: number[] = [];
  const answer = rawAnswer
    .replace(/\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g, (_match, numbers: string) => {
      const kept: number[] = [];
      for (const part of numbers.split(',')) {
        const n = Number(part.trim());
        if (!Number.isInteger(n) || n < 1 || n > passageCount) continue;
        if (!order.includes(n)) order.push(n);
        const renumbered = order.indexOf(n) + 1;
        if (!kept.includes(renumbered)) kept.push(renumbered);
      }
      return kept.map((n) => `[${n}]`).join('');
    })
    .replace(/(?<![ \t])[ \t]+([.,;:!?])/g, '$1')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
  return { answer, order };
}

const PIECES = [
  'Cats',
  'sleep',
  'a',
  'lot',
  'x',
  '16',
  'é',
  '😀',
  ' ',
  ' ',
  ' ',
  '\t',
  '  ',
  ' \t ',
  '\n',
  '\n\n',
  '\u00a0',
  '\u2003',
  '.',
  ',',
  ';',
  ':',
  '!',
  '?',
  '…',
  '[',
  ']',
  '[[',
  '0',
  '1',
  '2',
  '3',
  '7',
  '12',
  '1234',
  '007',
  ', ',
  ' , ',
  '[1]',
  '[2]',
  '[3]',
  '[0]',
  '[9]',
  '[2][1]',
  '[1, 2]',
  '[2 ,1]',
  '[1,\n3]',
  '[ 1]',
  '[1 ]',
  '[1,]',
  '[,1]',
  '[1, [2]',
  '[1',
  '1]',
  '[x]',
  '[12345]',
  '[001]',
];

function randomAnswer(random: Rng): string {
  const length = Math.floor(random() * 40);
  let text = '';
  for (let index = 0; index < length; index += 1) text += PIECES[Math.floor(random() * PIECES.length)];
  return text;
}

test('property: the mapper over random pieces gives the whole-answer result, which is the regex-and-trim result', (t) => {
  for (let seed = 1; seed <= 3000; seed += 1) {
    const random = mulberry32(seed);
    const passages = Array.from({ length: Math.floor(random() * 4) }, (_value, index) => passage(index + 1));
    const raw = randomAnswer(random);
    const whole = mapCitations(raw, passages, 'topic');
    const reference = referenceAnswer(raw, passages.length);
    const context = `seed ${seed}: ${JSON.stringify(raw)}`;
    if (whole.answer !== reference.answer)
      return t.fail(`${context}: ${JSON.stringify(whole.answer)} ≠ ${JSON.stringify(reference.answer)}`);
    t.deepEqual(
      whole.citations.map((citation) => citation.document_id),
      reference.order.map((n) => `document-${n}`),
      context,
    );

    const mapper = new CitationMapper(passages, 'topic');
    const deltas = randomSplit(raw, random).map((piece) => mapper.push(piece));
    deltas.push(mapper.end());
    const text = deltas.map((delta) => delta.text).join('');
    if (text !== whole.answer)
      return t.fail(`${context}: streamed ${JSON.stringify(text)} ≠ ${JSON.stringify(whole.answer)}`);
    t.deepEqual(
      deltas.flatMap((delta) => delta.citations),
      whole.citations,
      context,
    );
    // A delta carries exactly the citations of the markers it uses first (checked when every bracket in the answer
    // is a marker: text like "[1" + a dropped marker + "]" reads as one without being one).
    const onlyMarkers = !/[[\]]/.test(whole.answer.replaceAll(/\[\d+\]/g, ''));
    const seen = new Set<number>();
    for (const delta of deltas) {
      const introduced = [...new Set(markers(delta.text))].filter((k) => !seen.has(k));
      for (const k of introduced) seen.add(k);
      if (onlyMarkers) t.is(delta.citations.length, introduced.length, `${context}: ${JSON.stringify(delta)}`);
      const last = delta.text.charCodeAt(delta.text.length - 1);
      t.false(
        last >= 0xd800 && last <= 0xdbff && delta !== deltas.at(-1),
        `${context}: a delta ends inside a surrogate pair`,
      );
    }
  }
});

test('the mapper holds back only a marker still open and whitespace not yet followed by text', (t) => {
  const mapper = new CitationMapper([passage(1), passage(2)], 'topic');
  const texts = (pieces: string[]) => pieces.map((piece) => mapper.push(piece));
  const deltas = texts([
    '  Cats sleep',
    ' [',
    '2',
    ']',
    ' a lot',
    '  ',
    '[',
    '1',
    ',',
    ' 2',
    ']',
    ' .',
    ' More [3',
    ']',
    '!',
    ' ',
  ]);
  deltas.push(mapper.end());
  t.deepEqual(
    deltas.map((delta) => delta.text),
    ['Cats sleep', '', '', ' [1]', ' a lot', '', '', '', '', '', ' [2][1]', '.', ' More', '', '!', '', ''],
  );
  t.deepEqual(
    deltas.map((delta) => delta.citations.map((citation: Citation) => citation.document_id)),
    [[], [], [], ['document-2'], [], [], [], [], [], [], ['document-1'], [], [], [], [], [], []],
  );
  t.is(
    deltas.map((delta) => delta.text).join(''),
    mapCitations('  Cats sleep [2] a lot  [1, 2] . More [3]! ', [passage(1), passage(2)], 'topic').answer,
  );
});

// ── The streamed query, against the stand-in ────────────────────────────────────────────────────────────────────

const REPLY = 'It was automated in 1987 [2] , and the causeway floods two hours before high water [1][2] and more [7].';

test.before(async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  await ingest(app, user.key, kb, 'corran-lighthouse.md', LIGHTHOUSE);
  await ingest(app, user.key, kb, 'corran-tides.txt', TIDES);
  Object.assign(t.context, { logLines: captured.lines, user, kb });
});

test.after.always(async (t) => {
  await t.context.fake?.close();
});

const queryBody = (t: ExecutionContext<Context>, body: Record<string, unknown> = {}) => ({
  query: QUESTION,
  knowledge_base_ids: [t.context.kb],
  ...body,
});

const streamed = (
  t: ExecutionContext<Context>,
  body: Record<string, unknown> = {},
  options: Omit<StreamRequest, 'body'> = {},
) =>
  postForEvents(t.context.app.baseUrl, '/api/v1/query', {
    key: t.context.user.key,
    body: queryBody(t, { stream: true, ...body }),
    ...options,
  });

const jsonAnswer = async (t: ExecutionContext<Context>, body: Record<string, unknown> = {}) => {
  const response = await t.context.app.call('POST', '/api/v1/query', {
    key: t.context.user.key,
    body: queryBody(t, body),
  });
  t.is(response.status, 200, JSON.stringify(response.body));
  return response.body;
};

/** retrieval, then one or more deltas, then done: nothing else, nothing after. */
function assertOrder(t: ExecutionContext, events: StreamedEvent[]): void {
  const names = events.map((event) => event.event);
  t.is(names[0], 'retrieval', names.join(' '));
  t.is(names.at(-1), 'done', names.join(' '));
  t.true(names.length >= 3, names.join(' '));
  t.true(
    names.slice(1, -1).every((name) => name === 'delta'),
    names.join(' '),
  );
}

/** The deltas add up exactly to the done event's answer and citations. */
function assertDeltasAddUp(t: ExecutionContext, events: StreamedEvent[]): Record<string, any> {
  const done = events.at(-1)?.data;
  const { text, citations } = concatDeltas(events);
  t.is(text, done.answer);
  t.deepEqual(citations, done.citations);
  for (const event of events.filter((each) => each.event === 'delta'))
    t.deepEqual(Object.keys(event.data).sort(), ['citations', 'text']);
  return done;
}

test.serial('stream: retrieval → delta… → done; the deltas add up to done, and done is the JSON answer', async (t) => {
  const { fake } = t.context;
  fake.script({ reply: REPLY, tokenChars: 3 });
  const response = await streamed(t, { include_chunks: true });
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  t.regex(response.headers.get('cache-control') ?? '', /no-store/);
  t.is(response.headers.get('x-accel-buffering'), 'no');
  t.is(response.headers.get('content-length'), null);
  const events = await allEvents(response);
  assertOrder(t, events);
  const deltas = events.filter((event) => event.event === 'delta');
  t.true(deltas.length > 1, `${deltas.length} deltas`);
  const done = assertDeltasAddUp(t, events);
  t.is(
    done.answer,
    'It was automated in 1987 [1], and the causeway floods two hours before high water [2][1] and more.',
  );
  assertMarkersMatchCitations(t, done);
  // The delta that first writes [k] carries citation k.
  const introducing = deltas.filter((event) => event.data.citations.length > 0);
  t.true(introducing.every((event) => /\[\d+\]/.test(event.data.text)));

  // The retrieval event: the passages in passage-number order, as include_chunks shows them, plus their number.
  const retrieval = events[0].data;
  t.deepEqual(Object.keys(retrieval), ['passages']);
  t.deepEqual(
    retrieval.passages.map((each: { number: number }) => each.number),
    [1, 2],
  );
  t.deepEqual(
    retrieval.passages.map(({ number: _number, ...chunk }: Record<string, unknown>) => chunk),
    done.chunks,
  );
  // The model was asked once, streaming, with those passages in that order.
  t.is(fake.requests.length, 1);
  t.true(fake.requests[0].stream);
  const prompt = fake.requests[0].body.messages?.[1].content ?? '';
  done.chunks.forEach((chunk: { text: string }, index: number) =>
    t.true(prompt.indexOf(chunk.text) > prompt.indexOf(`<passage number="${index + 1}"`)),
  );
  // Stage timings ride in a comment, which parsers skip.
  t.true(
    response.comments.some((comment) =>
      /^server-timing embed;dur=[\d.]+, search;dur=[\d.]+, answer;dur=[\d.]+, first-delta;dur=[\d.]+$/.test(comment),
    ),
    JSON.stringify(response.comments),
  );

  fake.script({ reply: REPLY });
  t.deepEqual(done, await jsonAnswer(t, { include_chunks: true }), 'the same request answered as JSON');
  t.false(fake.requests[0].stream);
});

test.serial('one token per character, and tokens that end inside blanks: still exact', async (t) => {
  const { fake } = t.context;
  const reply = '  The lamp [1 , 2]  flashes   [9] ;  twice [2]\t.\n\nSeen from 18 nautical miles [1].  ';
  fake.script({ reply, tokenChars: 1 });
  const events = await allEvents(await streamed(t));
  assertOrder(t, events);
  const done = assertDeltasAddUp(t, events);
  fake.script({ reply });
  t.deepEqual(done, await jsonAnswer(t));
  t.is(done.answer, 'The lamp [1][2] flashes; twice [2].\n\nSeen from 18 nautical miles [1].');
});

test.serial(
  'Accept: text/event-stream alone streams; no Accept or Accept: application/json answers JSON',
  async (t) => {
    const { fake, app, user } = t.context;
    fake.script({ reply: 'Automated in 1987 [1].' });
    const response = await postForEvents(app.baseUrl, '/api/v1/query', {
      key: user.key,
      body: queryBody(t),
      headers: { accept: 'text/event-stream' },
    });
    t.is(response.status, 200);
    const events = await allEvents(response);
    assertOrder(t, events);
    t.is(assertDeltasAddUp(t, events).answer, 'Automated in 1987 [1].');

    for (const accept of ['application/json', '*/*', 'application/json, text/event-stream']) {
      const json = await postForEvents(app.baseUrl, '/api/v1/query', {
        key: user.key,
        body: queryBody(t),
        headers: { accept },
      });
      t.is(json.status, 200, accept);
      t.is(json.events, null, accept);
      t.is(json.json.answer, 'Automated in 1987 [1].', accept);
      t.truthy(json.headers.get('server-timing'), accept);
    }
  },
);

test.serial('failures before the stream starts are JSON envelopes with their status', async (t) => {
  const { app, user, fake } = t.context;
  fake.script({ reply: 'must not be asked [1]' });
  const stranger = await makeUser(app.deps.store);
  const cases: Array<[StreamRequest, number, Record<string, unknown> | RegExp]> = [
    [{ key: user.key, body: { stream: true } }, 400, /^query: is required/],
    [{ key: user.key, body: { query: QUESTION, stream: 'yes' } }, 400, /^stream: must be true or false$/],
    [{ key: user.key, body: { query: QUESTION }, headers: { accept: 'text/event-stream' } }, 200, /./],
    [{ body: { query: QUESTION, stream: true } }, 401, /API key is missing or invalid/],
    [
      {
        key: 'kbqa_live_not-a-real-key',
        body: { query: QUESTION, stream: true },
        headers: { accept: 'text/event-stream' },
      },
      401,
      /API key/,
    ],
    [
      {
        key: user.key,
        body: { query: QUESTION, stream: true, knowledge_base_ids: [stranger.defaultKnowledgeBaseId] },
        headers: { accept: 'text/event-stream' },
      },
      403,
      {
        error: {
          code: 'forbidden',
          message: `API key lacks access to knowledge base ${stranger.defaultKnowledgeBaseId}`,
        },
      },
    ],
    [
      { key: user.key, body: { query: QUESTION, stream: true, knowledge_base_ids: [randomUUID()] } },
      403,
      /lacks access/,
    ],
  ];
  for (const [request, status, expected] of cases) {
    const response = await postForEvents(app.baseUrl, '/api/v1/query', request);
    t.is(response.status, status, JSON.stringify(request));
    if (status === 200) {
      await allEvents(response);
      continue;
    }
    t.is(response.events, null);
    t.regex(response.headers.get('content-type') ?? '', /^application\/json/);
    if (expected instanceof RegExp) t.regex(response.json.error.message, expected);
    else t.deepEqual(response.json, expected);
  }
  t.is(fake.requests.filter((request) => request.body.messages?.[1].content.includes('must not')).length, 0);
});

test.serial(
  'the connection dropped after some tokens: an error event with the envelope, then the stream ends',
  async (t) => {
    const { fake } = t.context;
    for (const kind of ['drop', 'error'] as const) {
      fake.script({ reply: REPLY, tokenChars: 4, streamFailure: { afterTokens: 8, kind } });
      const events = await allEvents(await streamed(t));
      const names = events.map((event) => event.event);
      t.is(names[0], 'retrieval', kind);
      t.true(names.includes('delta'), `${kind}: the first tokens were streamed (${names.join(' ')})`);
      t.is(names.at(-1), 'error', `${kind}: ${names.join(' ')}`);
      t.false(names.includes('done'), kind);
      t.deepEqual(events.at(-1)?.data, UNAVAILABLE, kind);
      t.is(fake.requests.length, 1, `${kind}: a stream that has sent tokens is not retried`);
    }
    // Logged as the error middleware logs an upstream failure.
    const warnings = t.context.logLines
      .map((line) => JSON.parse(line))
      .filter((line) => line.msg === 'upstream unavailable');
    t.true(
      warnings.some((line) => line.upstream === 'answer-model' && line.level === 40),
      JSON.stringify(warnings),
    );
  },
);

test.serial('before the first token, transient failures are retried; past the budget, an error event', async (t) => {
  const { fake } = t.context;
  fake.script({ statuses: [503, 429], reply: 'Automated in 1987 [1].' });
  const events = await allEvents(await streamed(t));
  assertOrder(t, events);
  t.is(assertDeltasAddUp(t, events).answer, 'Automated in 1987 [1].');
  t.deepEqual(
    fake.requests.map((request) => request.status),
    [503, 429, 200],
  );

  fake.script({ thenStatus: 500 });
  const failed = await allEvents(await streamed(t));
  t.deepEqual(
    failed.map((event) => event.event),
    ['retrieval', 'error'],
  );
  t.deepEqual(failed[1].data, UNAVAILABLE);
  t.is(fake.requests.length, 3);
});

test.serial(
  'a model that stops sending tokens: an error event after KBQA_LLM_TIMEOUT_MS, and the call is cancelled',
  async (t) => {
    t.timeout(60_000);
    const { fake } = t.context;
    // Mid-answer: three tokens at once, then a pause longer than the timeout (3 s). Not retried: text has gone out.
    fake.script({ tokens: ['Automated ', 'in ', '1987 [1].', ' And more.'], tokenDelayMs: [0, 0, 0, 6_000] });
    let started = Date.now();
    const midAnswer = await allEvents(await streamed(t));
    let elapsed = Date.now() - started;
    t.deepEqual(
      midAnswer.map((event) => event.event).filter((name, index, names) => name !== names[index - 1]),
      ['retrieval', 'delta', 'error'],
    );
    // The sentence's end (" [1].", where an unverified mark would go) waits for what follows it, which never came.
    t.is(concatDeltas(midAnswer).text, 'Automated in 1987');
    t.deepEqual(midAnswer.at(-1)?.data, UNAVAILABLE);
    t.is(fake.requests.length, 1);
    t.true(elapsed >= 3_000 && elapsed < 6_000, `${elapsed} ms`);
    await waitFor(() => fake.requests[0].cancelled, 5_000);
    t.true(fake.requests[0].cancelled, 'the stalled call was cancelled');

    // Before the first token (the response headers came, no token): a timeout, retried like a slow reply.
    fake.script({ tokens: ['Automated in 1987 [1].'], tokenDelayMs: 6_000 });
    started = Date.now();
    const firstToken = await allEvents(await streamed(t));
    elapsed = Date.now() - started;
    t.deepEqual(
      firstToken.map((event) => event.event),
      ['retrieval', 'error'],
    );
    t.deepEqual(firstToken[1].data, UNAVAILABLE);
    t.is(fake.requests.length, 3, 'a stalled first token is retried like a timeout');
    t.true(elapsed >= 3 * 3_000 && elapsed < 3 * 6_000, `${elapsed} ms`);
    await waitFor(() => fake.requests.every((request) => request.cancelled), 5_000);
    t.true(
      fake.requests.every((request) => request.cancelled),
      'each stalled call was cancelled',
    );
  },
);

async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
}

test.serial(
  'a client that goes away after the first delta cancels the model call; the server carries on',
  async (t) => {
    const { fake, app } = t.context;
    const tokens = Array.from({ length: 200 }, (_value, index) => `word${index} `);
    fake.script({ tokens: ['The lighthouse [1] ', ...tokens], tokenDelayMs: 100 });
    const controller = new AbortController();
    const response = await streamed(t, {}, { signal: controller.signal });
    t.is(response.status, 200);
    const seen: string[] = [];
    try {
      for await (const event of response.events!) {
        seen.push(event.event);
        if (event.event === 'delta') {
          controller.abort();
          break;
        }
      }
    } catch {
      /* the aborted body */
    }
    const abortedAt = Date.now();
    t.deepEqual(seen, ['retrieval', 'delta']);
    await waitFor(() => fake.requests[0]?.cancelled === true, 5_000);
    const request = fake.requests[0];
    t.true(request.cancelled, 'the stand-in saw its request closed');
    t.true((request.cancelledAt ?? Infinity) - abortedAt < 5_000, 'within a few seconds');
    t.true(request.tokensSent < tokens.length, `stopped after ${request.tokensSent} tokens`);

    await waitFor(() => t.context.logLines.some((line) => line.includes('query stream cancelled')), 5_000);
    const logged = t.context.logLines.map((line) => JSON.parse(line));
    t.true(logged.some((line) => line.msg === 'query stream cancelled: the client went away' && line.level === 30));
    t.false(
      logged.some((line) => line.level >= 50),
      'nothing logged as an error',
    );

    const health = await app.call('GET', '/healthz');
    t.is(health.status, 200);
    fake.script({ reply: 'Automated in 1987 [1].' });
    const again = await allEvents(await streamed(t));
    assertOrder(t, again);
    t.is(assertDeltasAddUp(t, again).answer, 'Automated in 1987 [1].');
  },
);

test.serial(
  'nothing relevant: the fixed answer as one delta, done as the JSON answer, the model not asked',
  async (t) => {
    const { fake } = t.context;
    fake.script({ reply: 'must not be asked [1]' });
    const events = await allEvents(
      await streamed(t, { query: 'What is the capital of Mongolia?', include_chunks: true }),
    );
    t.deepEqual(
      events.map((event) => event.event),
      ['retrieval', 'delta', 'done'],
    );
    t.deepEqual(events[0].data, { passages: [] });
    t.deepEqual(events[1].data, { text: NOTHING_RELEVANT_ANSWER, citations: [] });
    t.deepEqual(
      events[2].data,
      await jsonAnswer(t, { query: 'What is the capital of Mongolia?', include_chunks: true }),
    );
    t.is(fake.requests.length, 0);
  },
);

test.serial('a reply citing nothing and holding no text: the nothing-relevant answer, as in JSON', async (t) => {
  const { fake } = t.context;
  fake.script({ reply: '  [7] [0] ', tokenChars: 2 });
  const events = await allEvents(await streamed(t));
  t.deepEqual(
    events.map((event) => event.event),
    ['retrieval', 'delta', 'done'],
  );
  t.is(assertDeltasAddUp(t, events).answer, NOTHING_RELEVANT_ANSWER);
  fake.script({ reply: '  [7] [0] ' });
  t.deepEqual(events[2].data, await jsonAnswer(t));
});

test.serial('the extractive model streams one delta per sentence; done is its JSON answer', async (t) => {
  const { fake } = t.context;
  fake.script({ reply: 'must not be asked [1]' });
  const body = { model: 'kbqa-extractive', include_chunks: true };
  const events = await allEvents(await streamed(t, body));
  assertOrder(t, events);
  const done = assertDeltasAddUp(t, events);
  t.deepEqual(done, await jsonAnswer(t, body));
  const deltas = events.filter((event) => event.event === 'delta').map((event) => event.data.text as string);
  // Each delta is one sentence ending in its marker, each after the first led by the space between them.
  t.is(deltas.length, markers(done.answer).length, JSON.stringify(deltas));
  deltas.forEach((text, index) => {
    t.regex(text, /\[\d+\][.!?…]?$/, text);
    t.is(text.startsWith(' '), index > 0, text);
  });
  t.is(fake.requests.length, 0);
});

test.serial(
  'the web app streams too: its citations (in deltas and done) carry their pages, as its JSON answer does',
  async (t) => {
    const { app } = t.context;
    const person = await makeWebUser(app.deps.store);
    const web = new WebClient(app.baseUrl);
    await web.signIn(person.email, person.password);
    const created = await web.call('POST', '/api/web/documents', {
      body: { kb_id: person.defaultKnowledgeBaseId, filename: 'corran-lighthouse.md', content: LIGHTHOUSE },
    });
    t.is(created.status, 201, JSON.stringify(created.body));
    const body = { query: 'When was the Corran Point lighthouse automated?', model: 'kbqa-extractive' };
    const response = await postForEvents(app.baseUrl, '/api/web/query', {
      body: { ...body, stream: true },
      headers: { cookie: web.cookie ?? '', 'x-csrf-token': web.csrfToken ?? '' },
    });
    t.is(response.status, 200, JSON.stringify(response.json));
    const events = await allEvents(response);
    assertOrder(t, events);
    const done = assertDeltasAddUp(t, events);
    t.true(done.citations.length >= 1);
    for (const citation of done.citations)
      t.deepEqual(Object.keys(citation).sort(), [
        'document_id',
        'location',
        'page_end',
        'page_start',
        'scanned',
        'similarity',
        'snippet',
        'title',
      ]);
    const json = await web.call('POST', '/api/web/query', { body });
    t.is(json.status, 200);
    t.deepEqual(done, json.body);
  },
);

test.serial(
  'the TypeScript client streams the same events (clients/typescript/stream.ts); a refusal before the stream throws',
  async (t) => {
    const client = createKbqaClient(t.context.app.baseUrl, t.context.user.key);
    const events: StreamedEvent[] = [];
    for await (const event of streamQuery(client, {
      query: QUESTION,
      knowledge_base_ids: [t.context.kb],
      model: 'kbqa-extractive',
    })) {
      events.push(event as StreamedEvent);
    }
    assertOrder(t, events);
    const done = assertDeltasAddUp(t, events);
    t.deepEqual(done, await jsonAnswer(t, { model: 'kbqa-extractive' }));

    const refused = await t.throwsAsync(async () => {
      for await (const event of streamQuery(client, { query: ' ' })) t.fail(`no event expected, got ${event.event}`);
    });
    t.true(refused instanceof KbqaApiError);
    t.like(refused, { status: 400, code: 'bad_request' });
  },
);
