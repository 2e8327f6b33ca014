// The OpenAI-compatible embedder (KBQA_EMBEDDER=openai) through the rag module, against the local stand-in
// (test/helpers/fakeOpenAI.ts, POST /v1/embeddings): dimensions read from the model, base64 vectors decoded, passages
// batched, transient failures retried, an endpoint that is down reported (503, readiness) without stopping start-up,
// and the local bge embedder still there beside it. Serial: the stand-in's script is shared.
import { createServer } from 'node:net';
import { Document } from '@langchain/core/documents';
import anyTest, { type TestFn } from 'ava';
import { loadConfig } from '../../service/config.ts';
import { ConfigError, EmbedderNotConfiguredError, UpstreamUnavailableError } from '../../service/errors.ts';
import type { PassageMetadata } from '../../service/rag/answerChain.ts';
import { loadRag, type Rag } from '../../service/rag/index.ts';
import { OPENAI_BATCH_INPUTS } from '../../service/rag/openaiEmbeddings.ts';
import { embeddingInput, type TextSegment } from '../../service/rag/splitter.ts';
import { fakeEmbedding, startFakeOpenAI, type FakeOpenAI } from '../helpers/fakeOpenAI.ts';

interface Context {
  fake: FakeOpenAI;
  rag: Rag;
  /** Embeddings requests the rag made while loading (recorded before any test scripts the fake). */
  loadRequests: FakeOpenAI['embeddingRequests'];
}

const test = anyTest as TestFn<Context>;
const rags: Rag[] = [];

const dot = (a: number[], b: number[]) => a.reduce((sum, value, index) => sum + value * b[index], 0);

async function openaiRag(fake: { baseUrl: string }, environment: Record<string, string> = {}): Promise<Rag> {
  const config = loadConfig({
    ...process.env,
    KBQA_LOG_LEVEL: 'silent',
    KBQA_MODEL_WORKERS: '1',
    KBQA_EMBEDDER: 'openai',
    KBQA_OPENAI_BASE_URL: fake.baseUrl,
    KBQA_OPENAI_API_KEY: 'test-key',
    KBQA_LLM_TIMEOUT_MS: '5000',
    KBQA_LLM_MAX_RETRIES: '2',
    ...environment,
  });
  const rag = await loadRag(config);
  rags.push(rag);
  return rag;
}

/** A port nothing listens on (taken, then given back). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test.before(async (t) => {
  const fake = await startFakeOpenAI();
  const rag = await openaiRag(fake);
  t.context = { fake, rag, loadRequests: [...fake.embeddingRequests] };
});

test.after.always(async (t) => {
  await Promise.allSettled(rags.map((rag) => rag.close()));
  await t.context.fake?.close();
});

test('KBQA_EMBEDDER=openai needs KBQA_OPENAI_BASE_URL; the model must name something', (t) => {
  const noUrl = t.throws(() => loadConfig({ KBQA_EMBEDDER: 'openai' }), { instanceOf: ConfigError });
  t.regex(noUrl?.message ?? '', /KBQA_EMBEDDER=openai needs KBQA_OPENAI_BASE_URL/);
  t.throws(() => loadConfig({ KBQA_EMBEDDER: 'bge' }), { instanceOf: ConfigError, message: /KBQA_EMBEDDER/ });
  t.throws(
    () =>
      loadConfig({
        KBQA_EMBEDDER: 'openai',
        KBQA_OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
        KBQA_OPENAI_EMBEDDING_MODEL: '--',
      }),
    {
      instanceOf: ConfigError,
      message: /KBQA_OPENAI_EMBEDDING_MODEL/,
    },
  );
  t.throws(() => loadConfig({ KBQA_OPENAI_EMBEDDING_DIMENSIONS: '0' }), {
    instanceOf: ConfigError,
    message: /KBQA_OPENAI_EMBEDDING_DIMENSIONS/,
  });

  const defaults = loadConfig({});
  t.is(defaults.embedder.selected, 'bge-small-en-v1.5');
  t.is(defaults.embedder.openai, null);
  const selected = loadConfig({
    KBQA_EMBEDDER: 'openai',
    KBQA_OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
    KBQA_LLM_MAX_RETRIES: '4',
  });
  t.like(selected.embedder.openai, {
    model: 'text-embedding-3-small',
    dimensions: null,
    maxRetries: 4,
    apiKey: 'not-needed',
  });
  // Selected bge, but the OpenAI embedder named: kept, to query an index it built while migrating away from it.
  const beside = loadConfig({
    KBQA_OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
    KBQA_OPENAI_EMBEDDING_MODEL: 'text-embedding-3-large',
  });
  t.is(beside.embedder.selected, 'bge-small-en-v1.5');
  t.like(beside.embedder.openai, { model: 'text-embedding-3-large' });
  // An LLM endpoint alone does not make an embedder.
  t.is(loadConfig({ KBQA_OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }).embedder.openai, null);
});

test.serial('the dimensions are read from the model at load: 1536 for text-embedding-3-small', (t) => {
  const { rag, loadRequests } = t.context;
  t.deepEqual(rag.embedder, { modelName: 'openai-text-embedding-3-small', dimensions: 1536 });
  t.is(rag.embedderName, 'openai-text-embedding-3-small');
  t.deepEqual(rag.embedders(), [
    { modelName: 'bge-small-en-v1.5', dimensions: 384 },
    { modelName: 'openai-text-embedding-3-small', dimensions: 1536 },
  ]);
  t.is(loadRequests.length, 1, 'one probe at load');
  const [probe] = loadRequests;
  t.is(probe.status, 200);
  t.is(probe.body.model, 'text-embedding-3-small');
  t.false('dimensions' in probe.body, 'no dimensions asked: the model answers with its own');
  t.is(probe.headers.authorization, 'Bearer test-key');
});

test.serial(
  'a question is embedded as it is, and the base64 answer decodes to exactly the vector the stand-in computed',
  async (t) => {
    const { fake, rag } = t.context;
    fake.script({});
    const question = 'When was the Corran Point lighthouse automated?';
    const vector = await rag.embedQuestion(question);
    t.is(fake.embeddingRequests.length, 1);
    const [request] = fake.embeddingRequests;
    t.is(request.body.encoding_format, 'base64', 'the openai SDK asks for base64');
    t.deepEqual(request.inputs, [question], 'no instruction prefix');
    t.is(vector.length, 1536);
    t.deepEqual(vector, fakeEmbedding(question, 1536));
    t.true(Math.abs(Math.sqrt(dot(vector, vector)) - 1) < 1e-5);
    // Meaningful vectors: the passage sharing the question's words is much closer than an unrelated one.
    const [related, unrelated] = (
      await rag.embedSegments('Corran Point', [
        { text: 'The lighthouse at Corran Point was automated in 1987.', heading_path: [] },
        { text: 'Add two cups of flour to the bowl and stir.', heading_path: [] },
      ])
    ).map((embedding) => embedding.vector);
    t.true(
      dot(vector, related) > dot(vector, unrelated) + 0.3,
      `related ${dot(vector, related)}, unrelated ${dot(vector, unrelated)}`,
    );
  },
);

test.serial(
  "a 150-segment document goes in batches of at most 64 inputs, its vectors in the segments' order",
  async (t) => {
    const { fake, rag } = t.context;
    fake.script({});
    const title = 'Harbour log';
    const segments: TextSegment[] = Array.from({ length: 150 }, (_unused, index) => ({
      text: `Entry ${index}: the tide at ${index % 12} o'clock stood at ${index} centimetres.`,
      heading_path: index % 2 === 0 ? ['Tides', `Week ${Math.floor(index / 7)}`] : [],
    }));
    const embeddings = await rag.embedSegments(title, segments);
    t.is(embeddings.length, 150);
    t.true(
      embeddings.every((embedding) => embedding.sentences.length === 0),
      'one sentence each: no sentence vectors',
    );
    t.true(fake.embeddingRequests.length >= 3, `${fake.embeddingRequests.length} requests`);
    t.true(
      fake.embeddingRequests.every((request) => request.inputs.length <= OPENAI_BATCH_INPUTS && request.status === 200),
    );
    const inputs = segments.map((segment) => embeddingInput(title, segment));
    t.deepEqual(
      fake.embeddingRequests.flatMap((request) => request.inputs).sort(),
      [...inputs].sort(),
      'each segment sent once, as the local embedder gets it',
    );
    embeddings.forEach((embedding, index) =>
      t.deepEqual(embedding.vector, fakeEmbedding(inputs[index], 1536), `segment ${index}`),
    );
  },
);

test.serial('a segment of several sentences gets a vector per sentence, each sentence embedded alone', async (t) => {
  const { fake, rag } = t.context;
  fake.script({});
  const segment = {
    text: 'The keeper lit the lamp at dusk. He trimmed the wick at midnight! Was the fog thick?',
    heading_path: ['Night'],
  };
  const [embedding, single] = await rag.embedSegments('Harbour log', [
    segment,
    { text: 'One sentence only.', heading_path: [] },
  ]);
  const sentences = ['The keeper lit the lamp at dusk.', 'He trimmed the wick at midnight!', 'Was the fog thick?'];
  t.deepEqual(embedding.vector, fakeEmbedding(embeddingInput('Harbour log', segment), 1536));
  t.deepEqual(
    embedding.sentences,
    sentences.map((sentence) => fakeEmbedding(sentence, 1536)),
  );
  t.deepEqual(single.sentences, []);
  t.deepEqual(
    fake.embeddingRequests
      .flatMap((request) => request.inputs)
      .filter((input) => sentences.includes(input))
      .sort(),
    [...sentences].sort(),
  );
});

test.serial('500 and 429 are retried with backoff, then the call succeeds; a 400 is not retried', async (t) => {
  const { fake, rag } = t.context;
  fake.script({ embeddings: { statuses: [500, 429] } });
  const vector = await rag.embedQuestion('retried question');
  t.deepEqual(vector, fakeEmbedding('retried question', 1536));
  t.deepEqual(
    fake.embeddingRequests.map((request) => request.status),
    [500, 429, 200],
  );

  // Past KBQA_LLM_MAX_RETRIES (2): three attempts, then 503.
  fake.script({ embeddings: { thenStatus: 503 } });
  const exhausted = await t.throwsAsync(rag.embedSegments('t', [{ text: 'a passage', heading_path: [] }]), {
    instanceOf: UpstreamUnavailableError,
  });
  t.is(exhausted?.status, 503);
  t.is(fake.embeddingRequests.length, 3);

  fake.script({ embeddings: { statuses: [400] } });
  await t.throwsAsync(rag.embedQuestion('bad request'), { instanceOf: UpstreamUnavailableError });
  t.is(fake.embeddingRequests.length, 1, 'a client error is final');
});

test.serial(
  'the local bge embedder answers in the same rag when named; an unknown embedder is a clear error',
  async (t) => {
    const { fake, rag } = t.context;
    fake.script({});
    const question = 'When was the lighthouse automated?';
    const bge = await rag.embedQuestion(question, 'bge-small-en-v1.5');
    t.is(bge.length, 384);
    t.true(Math.abs(Math.sqrt(dot(bge, bge)) - 1) < 1e-4);
    t.deepEqual(
      bge,
      await rag.models.embedQuery(question),
      "the pool's query vector (the instructed and the bare question's mean)",
    );
    const passages = (
      await rag.embedSegments(
        'Corran Point',
        [{ text: 'The lighthouse was automated in 1987.', heading_path: [] }],
        'bge-small-en-v1.5',
      )
    ).map((embedding) => embedding.vector);
    t.is(passages[0].length, 384);
    t.true(dot(bge, passages[0]) > 0.6);
    t.is(fake.embeddingRequests.length, 0, 'bge vectors never reach the endpoint');

    const unknown = await t.throwsAsync(rag.embedQuestion(question, 'openai-text-embedding-3-large'), {
      instanceOf: EmbedderNotConfiguredError,
    });
    t.regex(unknown?.message ?? '', /openai-text-embedding-3-large.*KBQA_OPENAI_EMBEDDING_MODEL/);
    await t.throwsAsync(rag.embedSegments('t', [{ text: 'x', heading_path: [] }], 'no-such-model'), {
      instanceOf: EmbedderNotConfiguredError,
    });
  },
);

// The extractive answerer compares the question with the sentence vectors stored beside the passages, which the
// serving index's embedder made: it takes the question vector retrieval used, in that space, and embeds nothing.
test.serial(
  'the extractive answerer embeds nothing: it reads the question vector retrieval used, whichever embedder made it',
  async (t) => {
    const { fake, rag } = t.context;
    fake.script({});
    const question = 'When was the lighthouse automated?';
    const passage = (text: string, n: number) =>
      new Document<PassageMetadata>({
        pageContent: text,
        metadata: {
          chunk_id: `c${n}`,
          document_id: `d${n}`,
          knowledge_base_id: 'kb',
          title: 'Corran Point',
          filename: 'corran.md',
          heading_path: [],
          chunk_index: 0,
          page_start: null,
          page_end: null,
          similarity: 0.8,
        },
      });
    const passages = [
      passage(
        'The keepers left in 1987. The lighthouse was automated in 1987 after a storm. Gulls nest on the rocks.',
        1,
      ),
      passage('The harbour silted up in the 1950s. Fishing boats moved to Fort William.', 2),
    ];
    const openaiVector = await rag.embedQuestion(question);
    const bgeVector = await rag.embedQuestion(question, 'bge-small-en-v1.5');
    t.is(openaiVector.length, 1536);
    // The pool's query lane, watched: the answer path never asks it for anything.
    const embedQuery = rag.models.embedQuery;
    const asked: string[] = [];
    rag.models.embedQuery = (text) => (asked.push(text), embedQuery(text));
    try {
      const withOpenai = await rag.answer({
        question,
        questionEmbedding: openaiVector,
        model: 'kbqa-extractive',
        passages,
      });
      const withBge = await rag.answer({ question, questionEmbedding: bgeVector, model: 'kbqa-extractive', passages });
      t.deepEqual(asked, [], 'no question is embedded again');
      // Without stored vectors every sentence has its passage's similarity: the vector's space cannot change the answer.
      t.deepEqual(withOpenai, withBge);
      t.regex(withOpenai.answer, /automated in 1987/);
    } finally {
      rag.models.embedQuery = embedQuery;
    }
  },
);

test.serial(
  'KBQA_OPENAI_EMBEDDING_DIMENSIONS=256: sent as dimensions, and the identity is 256 (another vector space: another name)',
  async (t) => {
    const { fake } = t.context;
    fake.script({});
    const rag = await openaiRag(fake, { KBQA_OPENAI_EMBEDDING_DIMENSIONS: '256' });
    t.deepEqual(rag.embedder, { modelName: 'openai-text-embedding-3-small-256', dimensions: 256 });
    const vectors = (
      await rag.embedSegments('t', [
        { text: 'one passage', heading_path: [] },
        { text: 'another passage', heading_path: [] },
      ])
    ).map((embedding) => embedding.vector);
    t.true(fake.embeddingRequests.length >= 2);
    t.true(fake.embeddingRequests.every((request) => request.body.dimensions === 256));
    t.deepEqual(vectors, [fakeEmbedding('t\none passage', 256), fakeEmbedding('t\nanother passage', 256)]);
  },
);

test.serial('a model of another size: the identity is whatever the model answers with', async (t) => {
  const { fake } = t.context;
  fake.script({ embeddings: { dimensions: 768 } });
  const rag = await openaiRag(fake, { KBQA_OPENAI_EMBEDDING_MODEL: 'Nomic/Embed-Text:v1.5' });
  t.deepEqual(rag.embedder, { modelName: 'openai-nomic-embed-text-v1.5', dimensions: 768 });
  t.is((await rag.embedQuestion('anything')).length, 768);
});

test.serial(
  'an endpoint failing at start-up: the rag loads, the embedder is not ready and answers 503, until the endpoint recovers',
  async (t) => {
    const { fake } = t.context;
    fake.script({ embeddings: { thenStatus: 503 } });
    const rag = await openaiRag(fake);
    t.true(fake.embeddingRequests.length > 1, 'start-up retried');
    t.is(rag.embedderName, 'openai-text-embedding-3-small');
    const unknown = t.throws(() => rag.embedder, { instanceOf: UpstreamUnavailableError });
    t.regex(unknown?.message ?? '', /dimensions are unknown/);
    t.deepEqual(rag.embedders(), [{ modelName: 'bge-small-en-v1.5', dimensions: 384 }]);
    await t.throwsAsync(rag.embedderProblem(), { message: /503/ });
    const refused = await t.throwsAsync(rag.embedQuestion('a question'), { instanceOf: UpstreamUnavailableError });
    t.is(refused?.status, 503);
    t.is((await rag.embedQuestion('a question', 'bge-small-en-v1.5')).length, 384, 'bge still answers');

    fake.script({});
    t.is(await rag.embedderProblem(), null);
    t.deepEqual(rag.embedder, { modelName: 'openai-text-embedding-3-small', dimensions: 1536 });
    // Answered lately: readiness does not ask again.
    t.is(await rag.embedderProblem(), null);
    t.is(fake.embeddingRequests.length, 1);
  },
);

test('an endpoint refusing connections: start-up gives up after a few tries, embedderProblem names it, calls are 503', async (t) => {
  const rag = await openaiRag({ baseUrl: `http://127.0.0.1:${await closedPort()}/v1` }, { KBQA_LLM_MAX_RETRIES: '0' });
  t.throws(() => rag.embedder, { instanceOf: UpstreamUnavailableError });
  const problem = await t.throwsAsync(rag.embedderProblem());
  t.regex(problem?.message ?? '', /connection/i);
  const refused = await t.throwsAsync(rag.embedQuestion('a question'), { instanceOf: UpstreamUnavailableError });
  t.is(refused?.status, 503);
  t.is(refused?.upstream, 'embedder');
  t.is(await rag.splitterProblem(), null, 'the local models are unaffected');
});
