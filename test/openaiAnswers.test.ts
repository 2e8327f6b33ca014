// The OpenAI-compatible answer models, against a local fake of the chat completions API (test/helpers/fakeOpenAI.ts):
// model selection, the prompt, mapping the model's [n] markers to citations, the citation check of its sentences, and
// the retry/timeout policy.
// Tests are serial: the fake's script is shared.
import { makeUser, type TestUser } from './factories/accounts.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import {
  assertCitationShape,
  assertMarkersMatchCitations,
  ingest,
  type IngestedDocument,
} from './helpers/documentsApi.ts';
import { allEvents, concatDeltas, postForEvents } from './helpers/eventStream.ts';
import { answerModelsAt, startFakeOpenAI, type FakeOpenAI, type RecordedChatRequest } from './helpers/fakeOpenAI.ts';
import { CitationMarkers, toPassageDocument } from '../service/rag/answerChain.ts';
import { LIGHTHOUSE, QUESTION, TIDES, UNAVAILABLE } from './fixtures/corranPoint.ts';

interface Context {
  app: TestApp;
  fake: FakeOpenAI;
  user: TestUser;
  kb: string;
  lighthouse: IngestedDocument;
  tides: IngestedDocument;
}

const test = testWithApp<Omit<Context, 'app'>>({
  env: async (t) => {
    t.context.fake = await startFakeOpenAI();
    return answerModelsAt(t.context.fake, 'gpt-test,gpt-other', 500);
  },
});

test.before(async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  // Two one-chunk documents: the search returns exactly two passages, so [7] names none.
  const lighthouse = await ingest(app, user.key, kb, 'corran-lighthouse.md', LIGHTHOUSE);
  const tides = await ingest(app, user.key, kb, 'corran-tides.txt', TIDES);
  Object.assign(t.context, { user, kb, lighthouse, tides });
});

test.after.always(async (t) => {
  await t.context.fake?.close();
});

const ask = (t: { context: Context }, body: Record<string, unknown> = {}) =>
  t.context.app.call('POST', '/api/v1/query', {
    key: t.context.user.key,
    body: { query: QUESTION, knowledge_base_ids: [t.context.kb], ...body },
  });

test.serial(
  'the first configured model is the default, echoed; the request carries key, model and the prompt',
  async (t) => {
    const { fake, lighthouse, tides } = t.context;
    fake.script({ reply: 'The lighthouse was automated in 1987 [1].' });
    const response = await ask(t, { include_chunks: true });
    t.is(response.status, 200, JSON.stringify(response.body));
    t.is(response.body.model, 'gpt-test');
    t.is(fake.requests.length, 1);
    const request = fake.requests[0];
    t.is(request.body.model, 'gpt-test');
    t.is(request.headers.authorization, 'Bearer test');
    t.regex(request.path, /^\/v1\/chat\/completions/);

    const messages = request.body.messages ?? [];
    t.deepEqual(
      messages.map((message) => message.role),
      ['system', 'user'],
    );
    t.regex(messages[0].content, /\[1\]/, 'the system prompt asks for [n] citations');
    const prompt = messages[1].content;
    // Numbered passages, in retrieval order, carrying the ingested text; then the question.
    const chunks = response.body.chunks as Array<{ document_id: string; text: string }>;
    t.is(chunks.length, 2);
    chunks.forEach((chunk, index) => {
      const opening = prompt.indexOf(`<passage number="${index + 1}"`);
      t.true(opening >= 0, `passage ${index + 1} is numbered`);
      t.true(prompt.indexOf(chunk.text, opening) > opening, `passage ${index + 1} carries its text`);
    });
    t.true(prompt.includes(LIGHTHOUSE) && prompt.includes(TIDES));
    t.false(prompt.includes('<passage number="3"'));
    t.true(prompt.includes(`Question: ${QUESTION}`));
    t.true(
      prompt.indexOf(`Question: ${QUESTION}`) > prompt.lastIndexOf('</passage>'),
      'the question follows the passages',
    );
    t.true(prompt.includes('corran-lighthouse') && prompt.includes('corran-tides'), 'passages name their document');

    // The reply's [1] is the first passage.
    t.is(response.body.answer, 'The lighthouse was automated in 1987 [1].');
    t.is(response.body.citations.length, 1);
    t.is(response.body.citations[0].document_id, chunks[0].document_id);
    t.true([lighthouse.id, tides.id].includes(chunks[0].document_id));
  },
);

test.serial('markers are renumbered in order of first use; unknown passage numbers are dropped', async (t) => {
  const { fake } = t.context;
  fake.script({
    reply: 'It was automated in 1987 [2] and the causeway floods two hours before high water [1] and more [7].',
  });
  const response = await ask(t, { include_chunks: true });
  t.is(response.status, 200, JSON.stringify(response.body));
  const chunks = response.body.chunks as Array<{ document_id: string; title: string }>;
  t.is(chunks.length, 2);
  t.is(
    response.body.answer,
    'It was automated in 1987 [1] and the causeway floods two hours before high water [2] and more.',
  );
  t.is(response.body.citations.length, 2);
  // The model's passage 2 is cited first, so it is citations[0]; its passage 1 is citations[1].
  t.is(response.body.citations[0].document_id, chunks[1].document_id);
  t.is(response.body.citations[0].title, chunks[1].title);
  t.is(response.body.citations[1].document_id, chunks[0].document_id);
  t.is(response.body.citations[1].title, chunks[0].title);
  for (const citation of response.body.citations) assertCitationShape(t, citation);
  assertMarkersMatchCitations(t, response.body);
});

test.serial('grouped and repeated markers map to distinct citations', async (t) => {
  const { fake } = t.context;
  fake.script({ reply: 'Both facts [2][1]. Again [2, 1] and [0] and [3].' });
  const response = await ask(t, { include_chunks: true });
  t.is(response.status, 200, JSON.stringify(response.body));
  // "Both facts" and "Again … and and" state nothing the passages hold: the citation check marks them.
  t.is(response.body.answer, 'Both facts [1][2][unverified]. Again [1][2] and and [unverified].');
  t.is(response.body.citations.length, 2);
  t.is(response.body.citations[0].document_id, response.body.chunks[1].document_id);
  assertMarkersMatchCitations(t, response.body);
});

test.serial('a reply citing nothing has no citations', async (t) => {
  const { fake } = t.context;
  fake.script({ reply: 'The knowledge bases hold nothing on it.' });
  const response = await ask(t);
  t.is(response.status, 200, JSON.stringify(response.body));
  t.deepEqual(response.body.citations, []);
  t.false(/\[\d+\]/.test(response.body.answer));
  t.is(response.body.model, 'gpt-test');
});

test.serial('the other configured model and kbqa-extractive are selectable', async (t) => {
  const { fake } = t.context;
  fake.script({ reply: 'Automated in 1987 [1].' });
  const other = await ask(t, { model: 'gpt-other' });
  t.is(other.status, 200, JSON.stringify(other.body));
  t.is(other.body.model, 'gpt-other');
  t.is(fake.requests.length, 1);
  t.is(fake.requests[0].body.model, 'gpt-other');

  fake.script({ reply: 'must not be asked [1]' });
  const extractive = await ask(t, { model: 'kbqa-extractive' });
  t.is(extractive.status, 200, JSON.stringify(extractive.body));
  t.is(extractive.body.model, 'kbqa-extractive');
  t.is(fake.requests.length, 0, 'the extractive model does not call the LLM');
  t.true(extractive.body.citations.length >= 1);
  t.regex(extractive.body.answer, /1987|two hours/);
  assertMarkersMatchCitations(t, extractive.body);

  const unknown = await ask(t, { model: 'gpt-4o' });
  t.is(unknown.status, 400);
  t.is(unknown.body.error.code, 'bad_request');
  t.regex(unknown.body.error.message, /^model: must be one of: gpt-test, gpt-other, kbqa-extractive$/);
});

test.serial('429, 429, then 200: answered after two retries', async (t) => {
  const { fake } = t.context;
  fake.script({ statuses: [429, 429], reply: 'Automated in 1987 [1].' });
  const response = await ask(t);
  t.is(response.status, 200, JSON.stringify(response.body));
  t.is(response.body.answer, 'Automated in 1987 [1].');
  t.is(response.body.citations.length, 1);
  t.deepEqual(
    fake.requests.map((request) => request.status),
    [429, 429, 200],
  );
});

test.serial('a 503 then 200 is retried too', async (t) => {
  const { fake } = t.context;
  fake.script({ statuses: [503], reply: 'Automated in 1987 [1].' });
  const response = await ask(t);
  t.is(response.status, 200, JSON.stringify(response.body));
  t.is(fake.requests.length, 2);
});

test.serial('500 forever: 503 server_error after exactly 1 + KBQA_LLM_MAX_RETRIES attempts', async (t) => {
  const { fake } = t.context;
  fake.script({ thenStatus: 500 });
  const started = Date.now();
  const response = await ask(t);
  t.is(response.status, 503, JSON.stringify(response.body));
  t.deepEqual(response.body, UNAVAILABLE);
  t.is(fake.requests.length, 3);
  t.true(Date.now() - started >= 250, 'the retries back off');
  // Nothing else arrives later.
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is(fake.requests.length, 3);
});

test.serial('a non-transient 400 from the model is not retried, and still answers 503', async (t) => {
  const { fake } = t.context;
  fake.script({ thenStatus: 400 });
  const response = await ask(t);
  t.is(response.status, 503, JSON.stringify(response.body));
  t.deepEqual(response.body, UNAVAILABLE);
  t.is(fake.requests.length, 1);
});

test.serial('a reply slower than KBQA_LLM_TIMEOUT_MS: 503 after the retries', async (t) => {
  const { fake } = t.context;
  fake.script({ delayMs: 1500, reply: 'Too late [1].' });
  const started = Date.now();
  const response = await ask(t);
  const elapsed = Date.now() - started;
  t.is(response.status, 503, JSON.stringify(response.body));
  t.deepEqual(response.body, UNAVAILABLE);
  t.is(fake.requests.length, 3, 'timeouts are retried like other transient failures');
  t.true(elapsed >= 3 * 500, `each attempt waits for the timeout (${elapsed} ms)`);
  t.true(elapsed < 3 * 1500, `attempts are cut at the timeout, not at the reply (${elapsed} ms)`);
});

test.serial('a slow first reply followed by a fast one: answered', async (t) => {
  const { fake, app, user, kb } = t.context;
  fake.script({ delayMs: 1000, reply: 'Slow [1].' });
  // Switch to fast right after the first request arrives.
  const pending = app.call('POST', '/api/v1/query', {
    key: user.key,
    body: { query: QUESTION, knowledge_base_ids: [kb] },
  });
  while (fake.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  const firstRequests = [...fake.requests];
  fake.script({ reply: 'Fast [1].' });
  const response = await pending;
  t.is(response.status, 200, JSON.stringify(response.body));
  t.is(response.body.answer, 'Fast [1][unverified].');
  t.is(firstRequests.length, 1);
  t.is(fake.requests.length, 1, 'one retry after the timed-out attempt');
});

test.serial('no passages above the relevance floor: the LLM is not called', async (t) => {
  const { fake } = t.context;
  fake.script({ reply: 'must not be asked [1]' });
  const response = await ask(t, { query: 'What is the capital of Mongolia?' });
  t.is(response.status, 200, JSON.stringify(response.body));
  t.deepEqual(response.body.citations, []);
  t.regex(response.body.answer, /hold nothing/);
  t.is(response.body.model, 'gpt-test');
  t.is(fake.requests.length, 0);
});

/** The passage number the prompt gave the text that holds `fact` (retrieval decides the order). */
function passageNumberHolding(request: RecordedChatRequest, fact: string): number {
  const prompt = request.body.messages?.[1].content ?? '';
  const at = prompt.indexOf(fact);
  const opening = prompt.lastIndexOf('<passage number="', at);
  return Number(
    prompt.slice(opening + '<passage number="'.length, prompt.indexOf('"', opening + '<passage number="'.length)),
  );
}

/** (a) a supported cited sentence, (b) a cited one whose number its passage lacks, (c) an uncited one, (d) a marker naming no passage. */
const CHECKED_REPLY = (request: RecordedChatRequest) => {
  const lighthouse = passageNumberHolding(request, 'automated in 1987');
  const tides = passageNumberHolding(request, 'spring tide range');
  return (
    `The lighthouse was automated in 1987 [${lighthouse}]. The spring tide range reaches 5.2 metres [${tides}]. ` +
    'The causeway is the only road to the lighthouse. Its lamp flashes white twice every fifteen seconds [7].'
  );
};
const CHECKED_ANSWER =
  'The lighthouse was automated in 1987 [1]. The spring tide range reaches 5.2 metres [2][unverified]. ' +
  'The causeway is the only road to the lighthouse [unverified]. Its lamp flashes white twice every fifteen seconds [unverified].';

const sentenceCount = async (app: TestApp, verdict: string) => {
  const line = (await app.deps.metrics.scrape())
    .split('\n')
    .find((each) => each.startsWith(`kbqa_answer_sentences_total{verdict="${verdict}"}`));
  return Number(line?.split(' ').at(-1));
};

test.serial(
  'the citation check: every sentence kept; the unsupported, the uncited and the one citing no passage marked [unverified]',
  async (t) => {
    const { fake, app, user, lighthouse, tides } = t.context;
    const before = {
      supported: await sentenceCount(app, 'supported'),
      unsupported: await sentenceCount(app, 'unsupported'),
      uncited: await sentenceCount(app, 'uncited'),
    };
    fake.script({ reply: CHECKED_REPLY });
    const response = await ask(t);
    t.is(response.status, 200, JSON.stringify(response.body));
    t.is(response.body.answer, CHECKED_ANSWER);
    t.deepEqual(
      response.body.citations.map((citation: { document_id: string }) => citation.document_id),
      [lighthouse.id, tides.id],
    );
    for (const citation of response.body.citations) assertCitationShape(t, citation);
    assertMarkersMatchCitations(t, response.body);
    // Counted by verdict, once per answer (the answer's text is never logged or counted).
    t.is(await sentenceCount(app, 'supported'), before.supported + 1);
    t.is(await sentenceCount(app, 'unsupported'), before.unsupported + 1);
    t.is(await sentenceCount(app, 'uncited'), before.uncited + 2);

    // Streamed token by token: the same text and citations, the marks inside the deltas, each citation with its marker.
    fake.script({ reply: CHECKED_REPLY, tokenChars: 4 });
    const streamed = await postForEvents(app.baseUrl, '/api/v1/query', {
      key: user.key,
      body: { query: QUESTION, knowledge_base_ids: [t.context.kb], stream: true },
    });
    const events = await allEvents(streamed);
    const deltas = events.filter((event) => event.event === 'delta');
    t.true(deltas.length > 4, `${deltas.length} deltas: the text still streams`);
    t.deepEqual(concatDeltas(events), { text: CHECKED_ANSWER, citations: response.body.citations });
    t.deepEqual(events.at(-1)?.data, response.body, 'done is the JSON answer');
    t.true(deltas.some((event) => event.data.text.includes('[unverified]')));
    for (const event of deltas.filter((each) => each.data.citations.length > 0)) t.regex(event.data.text, /\[\d+\]/);
    t.is(await sentenceCount(app, 'uncited'), before.uncited + 4);
  },
);

test.serial(
  "the extractive model's answers are source sentences: unchanged, and every sentence passes the check",
  async (t) => {
    const { fake } = t.context;
    fake.script({ reply: 'must not be asked [1]' });
    const response = await ask(t, { model: 'kbqa-extractive', include_chunks: true });
    t.is(response.status, 200, JSON.stringify(response.body));
    t.false(response.body.answer.includes('[unverified]'));
    // The same answer through the check, its [k] naming citation k's passage: nothing marked, nothing uncited.
    const chunks = response.body.chunks as Array<{ document_id: string; text: string; title: string }>;
    const passages = response.body.citations.map((citation: { document_id: string }, index: number) => {
      const chunk = chunks.find((each) => each.document_id === citation.document_id) as (typeof chunks)[number];
      return toPassageDocument(chunk.text, {
        chunk_id: `c${index}`,
        document_id: chunk.document_id,
        knowledge_base_id: t.context.kb,
        title: chunk.title,
        filename: chunk.title,
        heading_path: [],
        chunk_index: 0,
        page_start: null,
        page_end: null,
        similarity: 1,
      });
    });
    const checked = await new CitationMarkers(passages, QUESTION, true).invoke(response.body.answer);
    t.is(checked.text, response.body.answer);
    t.true((checked.sentences?.supported ?? 0) >= 1);
    t.deepEqual([checked.sentences?.unsupported, checked.sentences?.uncited], [0, 0]);
  },
);
