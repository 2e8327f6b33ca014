// The extractive answerer against the running stack: it reads the sentence vectors stored at ingestion (no model
// inference in a query beyond the question's vector), and it answers "nothing" when no sentence of the retrieved
// passages holds the kind of fact an on-topic question asks for, while still answering the answerable ones.
import { NOTHING_RELEVANT_ANSWER } from '../service/commands/answerQuestion.ts';
import { makeUser } from './factories/accounts.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';

// Serial: the second test counts the model pool's calls, which another test's ingestion would add to.
const test = testWithApp();

// Every passage names Skerry Island: the town's name alone must not make a sentence answer a question.
const FERRY = `# Skerry Island Ferry

## Timetable

The harbour ferry to Skerry Island leaves the north pier at 07:15 and at 16:40 on weekdays. On Saturdays there is a single crossing at 10:00, and there is no service on Sundays. The crossing to Skerry Island takes 35 minutes in calm weather.

## Fares

An adult return ticket to Skerry Island costs 12 euros. Children under twelve travel free, and bicycles cost 3 euros each way. Tickets are sold on board, by card only.
`;

const ISLAND = `# Skerry Island visitor notes

Skerry Island has one shop, beside the pier, which opens from 09:00 to 17:00. The lighthouse on Skerry Island is 4 km from the pier by the coastal path. Camping on Skerry Island is allowed only at the field behind the chapel, and fires are not allowed anywhere on the island.
`;

async function seeded(app: TestApp) {
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  await ingest(app, user.key, kb, 'ferry.md', FERRY);
  await ingest(app, user.key, kb, 'skerry-island.md', ISLAND);
  return { user, kb };
}

async function ask(app: TestApp, key: string, kb: string, question: string) {
  const response = await app.call('POST', '/api/v1/query', {
    key,
    body: { query: question, knowledge_base_ids: [kb] },
  });
  if (response.status !== 200) throw new Error(`${question}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as { answer: string; citations: unknown[] };
}

test.serial(
  'an on-topic question asking for a kind of fact no passage holds gets "nothing"; the answerable ones their fact',
  async (t) => {
    const { app } = t.context;
    const { user, kb } = await seeded(app);
    // A KB of the visitor notes alone: no price anywhere in it.
    const notes = await createKb(app, user.key, 'visitor notes');
    await ingest(app, user.key, notes, 'skerry-island.md', ISLAND);
    for (const question of [
      'How much does it cost to camp on Skerry Island?',
      'How much is the fine for lighting a fire on Skerry Island?',
    ]) {
      const body = await ask(app, user.key, notes, question);
      t.is(body.answer, NOTHING_RELEVANT_ANSWER, `${question} → ${body.answer}`);
      t.deepEqual(body.citations, [], question);
    }
    // On topic, near in words, and unanswered by both documents: each fails one of the answer's constraints.
    for (const question of [
      'How many people live on Skerry Island?', // the numbers there measure or bound ("4 km", "under twelve")
      'Who is the harbour master of Skerry Island?', // no sentence names the role
      'How deep is the harbour at Skerry Island?', // no depth of the harbour
      'What is the phone number of the shop on Skerry Island?', // no number to ring
      'What time does the ferry leave on Fridays?', // Fridays are not named
    ]) {
      const body = await ask(app, user.key, kb, question);
      t.is(body.answer, NOTHING_RELEVANT_ANSWER, `${question} → ${body.answer}`);
      t.deepEqual(body.citations, [], question);
    }
    for (const [question, fact] of [
      ['What time does the shop on Skerry Island open?', '09:00'],
      ['How far is the lighthouse from the pier?', '4 km'],
      ['How much is an adult return ticket?', '12 euros'],
      ['Where can I camp on Skerry Island?', 'behind the chapel'],
    ]) {
      const body = await ask(app, user.key, kb, question);
      t.true(body.answer.includes(fact), `${question} → ${body.answer}`);
      t.true(body.citations.length > 0, question);
    }
  },
);

test.serial(
  'a query runs no model inference beyond the question: the answer reads the stored sentence vectors',
  async (t) => {
    const { app } = t.context;
    const { user, kb } = await seeded(app);
    const models = app.deps.rag.models;
    const calls = { query: 0, sentences: 0, passages: 0 };
    const original = {
      embedQuery: models.embedQuery,
      embedUnitsPadded: models.embedUnitsPadded,
      embedPassagesLate: models.embedPassagesLate,
      embedPassages: models.embedPassages,
    };
    models.embedQuery = (text) => ((calls.query += 1), original.embedQuery(text));
    // Every other way the pool embeds text: sentence units (batched), late-chunked passages, passages.
    models.embedUnitsPadded = (texts) => ((calls.sentences += texts.length), original.embedUnitsPadded(texts));
    models.embedPassagesLate = (passages) => (
      (calls.passages += passages.length),
      original.embedPassagesLate(passages)
    );
    models.embedPassages = (texts) => ((calls.passages += texts.length), original.embedPassages(texts));
    try {
      const body = await ask(app, user.key, kb, 'How far is the lighthouse from the pier?');
      t.true(body.answer.includes('4 km'), body.answer);
    } finally {
      Object.assign(models, original);
    }
    t.true(calls.query > 0, 'the question is embedded');
    t.deepEqual({ sentences: calls.sentences, passages: calls.passages }, { sentences: 0, passages: 0 });
  },
);
