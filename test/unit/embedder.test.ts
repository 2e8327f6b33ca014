import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BGE_QUERY_INSTRUCTION, BgeOnnxEmbeddings, normalizedMean } from '../../service/rag/bgeEmbeddings.ts';

const MODEL_DIR = fileURLToPath(new URL('../../.local/models/bge-small-en-v1.5-q', import.meta.url));

let embedderPromise: Promise<BgeOnnxEmbeddings> | undefined;
const embedder = () => (embedderPromise ??= BgeOnnxEmbeddings.load({ modelDir: MODEL_DIR }));

const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0);
const norm = (a: number[]) => Math.sqrt(dot(a, a));

test('exposes model metadata', async (t) => {
  const e = await embedder();
  t.is(e.dimensions, 384);
  t.is(e.modelName, 'bge-small-en-v1.5');
  t.is(e.maxTokens, 512);
  t.is(e.batchSize, 16);
  t.is(e.batchMode, 'exact');
});

test('query and document vectors have 384 dims and unit length', async (t) => {
  const e = await embedder();
  const docs = await e.embedDocuments([
    'Cats sleep a lot.',
    'A much longer sentence about the billing cycle of enterprise accounts.',
    '',
  ]);
  const q = await e.embedQuery('How long do cats sleep?');
  for (const v of [...docs, q]) {
    t.is(v.length, 384);
    t.true(Math.abs(norm(v) - 1) < 1e-4, `norm ${norm(v)}`);
    t.true(v.every(Number.isFinite));
  }
});

test('paraphrases are closer than unrelated sentences', async (t) => {
  const e = await embedder();
  const triples: Array<[string, string, string]> = [
    [
      'How do I reset my password?',
      'What are the steps to change a forgotten password?',
      'The Eiffel Tower is in Paris.',
    ],
    ['The cat is sleeping on the sofa.', 'A kitten naps on the couch.', 'Quarterly revenue rose by eight percent.'],
    [
      'How can I cancel my subscription?',
      'What is the way to stop my monthly plan?',
      'Photosynthesis converts light into chemical energy.',
    ],
    [
      'The flight was delayed because of a storm.',
      'Bad weather caused the plane to leave late.',
      'Add two cups of flour to the bowl.',
    ],
  ];
  for (const [anchor, paraphrase, unrelated] of triples) {
    const [a, p, u] = await e.embedDocuments([anchor, paraphrase, unrelated]);
    const close = dot(a, p);
    const far = dot(a, u);
    t.true(close > far + 0.1, `"${anchor}": paraphrase ${close.toFixed(3)} vs unrelated ${far.toFixed(3)}`);
  }
  // Asymmetric retrieval: a query should rank the answering passage above an unrelated one.
  const q = await e.embedQuery('How do I reset my password?');
  const [good, bad] = await e.embedDocuments([
    'To reset your password, open the sign-in page and click "Forgot password".',
    'The Eiffel Tower is in Paris.',
  ]);
  t.true(dot(q, good) > dot(q, bad) + 0.1);
});

test('embedQuery is the unit mean of the instructed and the bare query, close to both', async (t) => {
  const e = await embedder();
  const text = 'How do I reset my password?';
  const q = await e.embedQuery(text);
  const [d] = await e.embedDocuments([text]);
  const [prefixed] = await e.embedDocuments([BGE_QUERY_INSTRUCTION + text]);
  for (const [name, other] of [
    ['bare', d],
    ['instructed', prefixed],
  ] as const) {
    const sim = dot(q, other);
    t.true(sim < 0.9999, `query and ${name} vectors should differ (cos ${sim})`);
    t.true(sim > 0.9, `query and ${name} vectors should stay close (cos ${sim})`);
  }
  t.true(Math.abs(dot(q, q) - 1) < 1e-4, 'unit length');
  const mean = normalizedMean(d, prefixed);
  for (let i = 0; i < q.length; i++) t.true(Math.abs(q[i] - mean[i]) < 1e-4);
});

test('batched embedDocuments matches one-at-a-time, in the original order', async (t) => {
  const e = await embedder();
  const texts = [
    'A fairly long sentence that talks about how invoices are generated at the end of every billing period for each workspace.',
    'Short.',
    'Medium length text about password resets.',
    'Another long one: the export job writes CSV files to the configured bucket and notifies the owner by e-mail once it finishes.',
    'Tiny',
    'Cats sleep sixteen hours a day.',
    'Dogs bark.',
    'The Eiffel Tower is in Paris, France, and was completed in 1889 for the World Fair.',
    'Refunds are processed within five business days.',
    'ok',
  ];
  const batched = await e.embedDocuments(texts);
  t.is(batched.length, texts.length);
  for (let i = 0; i < texts.length; i++) {
    const [single] = await e.embedDocuments([texts[i]]);
    const maxDiff = Math.max(...single.map((x, k) => Math.abs(x - batched[i][k])));
    t.true(maxDiff < 1e-4, `text ${i} differs by ${maxDiff}`);
  }
  // Padded batching (batchSize 3: several calls, different padding) must also restore the
  // caller's order. The int8 model quantises activations per tensor, so padded batches
  // shift vectors slightly; order mistakes would show up as cosines far below 0.99.
  const padded = e.withBatchMode('padded', 3); // same session, padded batches of 3
  t.is(padded.batchMode, 'padded');
  const again = await padded.embedDocuments(texts);
  t.is(again.length, texts.length);
  for (let i = 0; i < texts.length; i++) {
    t.true(Math.abs(norm(again[i]) - 1) < 1e-4);
    const own = dot(again[i], batched[i]);
    const others = Math.max(...batched.map((b, k) => (k === i ? -1 : dot(again[i], b))));
    t.true(own > 0.99 && own > others, `padded: text ${i} cos ${own.toFixed(4)} vs best other ${others.toFixed(4)}`);
  }
  await padded.dispose(); // a view does not release the shared session
  const [still] = await e.embedDocuments([texts[0]]);
  t.true(Math.max(...still.map((x, k) => Math.abs(x - batched[0][k]))) < 1e-4);
  t.deepEqual(await e.embedDocuments([]), []);
});

test('very long input is truncated to 512 tokens without error', async (t) => {
  const e = await embedder();
  const words = Array.from(
    { length: 3000 },
    (_, i) =>
      ['retrieval', 'augmented', 'generation', 'kittens', 'paris', 'database'][i % 6] + (i % 7 === 0 ? '.' : ''),
  );
  const long = words.join(' ');
  t.true(e.countTokens(long) > 512);
  const [v] = await e.embedDocuments([long]);
  t.is(v.length, 384);
  t.true(Math.abs(norm(v) - 1) < 1e-4);
  // Truncation keeps the head: text beyond the first ~510 tokens does not change the vector.
  const [v2] = await e.embedDocuments([long + ' completely different tail about volcanoes and tax law']);
  t.true(Math.max(...v.map((x, k) => Math.abs(x - v2[k]))) < 1e-4);
  const q = await e.embedQuery(long);
  t.is(q.length, 384);
});

test('countTokens counts WordPiece tokens without [CLS]/[SEP]', async (t) => {
  const e = await embedder();
  t.is(e.countTokens(''), 0);
  t.is(e.countTokens('hello world'), 2);
  // hello world , un ##bel ##ie ##va ##bly !
  t.is(e.countTokens('Hello World, unbelievably!'), 9);
  t.is(e.countTokens('word '.repeat(1000)), 1000);
});

test('load() names the missing file and suggests npm run stack:up', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kbqa-bge-missing-'));
  try {
    const err = await t.throwsAsync(BgeOnnxEmbeddings.load({ modelDir: dir }));
    t.true(err!.message.includes(path.join(dir, 'bge-small-en-v1.5-q.onnx')), err!.message);
    t.true(err!.message.includes('npm run stack:up'), err!.message);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
