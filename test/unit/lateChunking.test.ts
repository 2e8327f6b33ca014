// Late chunking (rag/lateChunking.ts): a sentence's vector from its passage's own forward pass.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from '@huggingface/tokenizers';
import { loadConfig } from '../../service/config.ts';
import { BgeOnnxEmbeddings, BGE_TOKENIZER_FILE } from '../../service/rag/bgeEmbeddings.ts';
import { meanPooled, unitTokenSpans } from '../../service/rag/lateChunking.ts';
import { startModelPool } from '../../service/rag/modelPool.ts';

const MODEL_DIR = fileURLToPath(new URL('../../.local/models/bge-small-en-v1.5-q', import.meta.url));
let embedderPromise: Promise<BgeOnnxEmbeddings> | undefined;
const embedder = () => (embedderPromise ??= BgeOnnxEmbeddings.load({ modelDir: MODEL_DIR }));

const dot = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i], 0);

const TITLE = 'Sleep in cats';
const SENTENCES = [
  'Domestic cats sleep between twelve and sixteen hours a day.',
  'Kittens and old cats sleep even longer.',
  'Their sleep is mostly light, so they wake quickly when a sound startles them.',
];
const PASSAGE = `${TITLE}\n${SENTENCES.join(' ')}`;

test('unitTokenSpans finds units in order, past the previous one, and cut by the window only when half is inside', (t) => {
  const sequence = [101, 5, 6, 7, 8, 5, 6, 9, 102];
  t.deepEqual(unitTokenSpans(sequence, [[5, 6], [5, 6, 9], [4]], 1, 8), [
    { start: 1, end: 3 },
    { start: 5, end: 8 },
    null,
  ]);
  // [6, 9, 10, 11]: 2 of 4 tokens before the window's end (position 8) count; [9, 10, 11, 12, 13] (1 of 5) does not.
  t.deepEqual(unitTokenSpans(sequence, [[6, 9, 10, 11]], 1, 8), [{ start: 6, end: 8 }]);
  t.deepEqual(unitTokenSpans(sequence, [[9, 10, 11, 12, 13]], 1, 8), [null]);
});

test('a late-chunked sentence vector is the normalised mean of its tokens, computed by hand', async (t) => {
  const model = await embedder();
  const { vector, units } = await model.embedPassageWithUnits(PASSAGE, SENTENCES);
  const [passageAlone] = await model.embedDocuments([PASSAGE]);
  // The passage's vector is the one embedDocuments gives (same unpadded pass).
  t.deepEqual(vector, passageAlone);

  // By hand: the tokenizer's ids of the second sentence, found in the passage's ids, their rows averaged.
  const tokenizer = new Tokenizer(
    JSON.parse(await readFile(`${MODEL_DIR}/${BGE_TOKENIZER_FILE}`, 'utf8')) as object,
    {},
  );
  const { ids, rows } = await model.tokenEmbeddings(PASSAGE);
  const sentenceIds = tokenizer.encode(SENTENCES[1], { add_special_tokens: false }).ids;
  const start = ids.findIndex((_, position) => sentenceIds.every((id: number, k: number) => ids[position + k] === id));
  t.true(start > 0, 'the sentence is inside the passage');
  const sum = new Array<number>(rows[0].length).fill(0);
  for (let row = start; row < start + sentenceIds.length; row += 1) rows[row].forEach((value, k) => (sum[k] += value));
  const length = Math.hypot(...sum);
  const byHand = sum.map((value) => value / length);
  const late = units[1];
  t.truthy(late);
  for (let k = 0; k < byHand.length; k += 1) t.true(Math.abs(late![k] - byHand[k]) < 1e-5, `component ${k}`);
  t.deepEqual(
    meanPooled(new Float32Array(rows.flat()), 0, rows[0].length, { start, end: start + sentenceIds.length }),
    late,
  );
});

test('late-chunked sentence vectors are unit length and differ from the passage vector and each other', async (t) => {
  const model = await embedder();
  const { vector, units } = await model.embedPassageWithUnits(PASSAGE, SENTENCES);
  t.is(units.length, SENTENCES.length);
  for (const unit of units) {
    t.truthy(unit);
    t.is(unit!.length, 384);
    t.true(Math.abs(dot(unit!, unit!) - 1) < 1e-5);
    t.true(dot(unit!, vector) < 0.999, 'a sentence vector is not the passage vector');
  }
  t.true(dot(units[0]!, units[2]!) < 0.999);
  // A sentence the passage does not hold has no late vector (the worker embeds it alone).
  const { units: missing } = await model.embedPassageWithUnits(PASSAGE, ['Dogs bark at night.']);
  t.deepEqual(missing, [null]);
});

test('the model pool returns each passage with its units late-chunked, and a unit not found embedded alone', async (t) => {
  const config = loadConfig();
  const models = startModelPool({ ...config.chunking, modelDir: config.embedder.modelDir, workers: 1 });
  try {
    const stray = 'Dogs bark at night.';
    const [withUnits] = await models.embedPassagesLate([{ text: PASSAGE, units: [SENTENCES[0], stray, SENTENCES[2]] }]);
    const model = await embedder();
    const { vector, units } = await model.embedPassageWithUnits(PASSAGE, SENTENCES);
    const close = (a: number[], b: number[]) => a.every((value, k) => Math.abs(value - b[k]) < 1e-5);
    t.true(close(withUnits.vector, vector));
    t.true(close(withUnits.units[0], units[0]!));
    t.true(close(withUnits.units[2], units[2]!));
    const [alone] = await models.embedPassages([stray]);
    t.true(close(withUnits.units[1], alone));
  } finally {
    await models.close();
  }
});
