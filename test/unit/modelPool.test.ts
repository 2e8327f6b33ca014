// The model pool's lanes: a question goes before queued document work, and while questions come, document work
// leaves a worker free for them. Asserted on completion order, never on time.
import test from 'ava';
import { loadConfig } from '../../service/config.ts';
import { HEAVY_QUESTION_CHARS, startModelPool } from '../../service/rag/modelPool.ts';

const config = loadConfig();
const passage = Array.from(
  { length: 40 },
  (_, index) => `Passage sentence ${index} about tidal energy and the moon.`,
).join(' ');

function pool(interactiveReserveMs?: number) {
  return startModelPool({
    ...config.chunking,
    modelDir: config.embedder.modelDir,
    workers: 2,
    threadsPerWorker: 1,
    interactiveReserveMs,
  });
}

test.serial('a question overtakes the document work queued before it', async (t) => {
  const models = pool();
  try {
    // Warm both workers up with document work only: no question is recent, so document work may take both workers.
    await Promise.all([models.embedPassages(['warm up']), models.embedPassages(['warm up'])]);
    const finished: string[] = [];
    const background = Array.from({ length: 12 }, (_, index) =>
      models.embedPassages([passage]).then(() => finished.push(`passage ${index}`)),
    );
    t.is(
      models.queued().background,
      10,
      "both workers run a passage; the rest wait in the pool's own queue, not in piscina's",
    );
    const question = models.embedQuery('When is the spring tide?').then(() => finished.push('question'));
    await Promise.all([...background, question]);
    // It waits only for a passage already running on a worker: at most the two in flight finish before it.
    t.true(finished.indexOf('question') <= 2, finished.join(', '));
  } finally {
    await models.close();
  }
});

test.serial('while questions come, document work keeps one worker free for them', async (t) => {
  // A long reservation: on a loaded machine the two warm-up questions alone can outlast the default 2 s.
  const models = pool(60_000);
  try {
    // Two questions at once: each worker loads its model, and a question is now recent.
    await Promise.all([models.embedQuery('a question was just asked'), models.embedQuery('and another one')]);
    const finished: string[] = [];
    const background = Array.from({ length: 8 }, (_, index) =>
      models.embedPassages([passage]).then(() => finished.push(`passage ${index}`)),
    );
    t.is(models.queued().background, 7, 'one worker takes a passage; the other is kept for questions');
    // The question starts at once on the free worker (a few tokens against a long passage running beside it).
    const question = models.embedQuery('When is the spring tide?').then(() => finished.push('question'));
    await Promise.all([...background, question]);
    t.is(finished[0], 'question', finished.join(', '));
    t.is(finished.length, 9, 'the document work still all finished');
  } finally {
    await models.close();
  }
});

test.serial("another user's question does not wait behind a bursting user's heavy questions", async (t) => {
  const models = pool();
  try {
    await Promise.all([models.embedQuery('warm up', 'a'), models.embedQuery('warm up', 'b')]);
    const long = Array.from({ length: 12 }, (_, index) => `${passage} Question ${index} of the burst?`).join(' ');
    const finished: string[] = [];
    const burst = Array.from({ length: 12 }, (_, index) =>
      models.embedQuery(long, 'burst').then(() => finished.push(`burst ${index}`)),
    );
    t.true(long.length > HEAVY_QUESTION_CHARS);
    t.is(models.queued().interactive, 11, 'one worker runs a heavy question of the burst; the other is kept');
    const other = models.embedQuery('When is the spring tide?', 'other').then(() => finished.push('other'));
    await Promise.all([...burst, other]);
    // First come first served would start it 13th. It starts at once on the worker kept from heavy questions: at
    // most the heavy one running beside it finishes first.
    t.true(finished.indexOf('other') <= 1, finished.join(', '));
  } finally {
    await models.close();
  }
});
