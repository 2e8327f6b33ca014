// POST /api/v1/query against the running stack with the built-in extractive answer model: response shape, [n] ↔
// citations, include_chunks, max_results, knowledge_base_ids, validation, soft-deleted KBs and tenant isolation.
import type { ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { NO_KNOWLEDGE_BASE_ANSWER, NOTHING_RELEVANT_ANSWER } from '../service/commands/answerQuestion.ts';
import { makeUser } from './factories/accounts.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { allEvents, concatDeltas, postForEvents } from './helpers/eventStream.ts';
import {
  QUERY_FIELDS,
  assertChunkShape,
  assertCitationShape,
  assertMarkersMatchCitations,
  createKb,
  markers,
  ingest,
  normaliseSpace,
  sortedKeys,
} from './helpers/documentsApi.ts';

// The ranking tests' documents are sized for 256-token chunks (a paragraph each): more chunks than a side's depth.
const test = testWithApp({ env: { KBQA_CHUNK_TOKENS: '256' } });

const FERRY = `# Skerry Island Ferry

## Timetable

The harbour ferry to Skerry Island leaves the north pier at 07:15 and at 16:40 on weekdays. On Saturdays there is a
single crossing at 10:00, and there is no service on Sundays.

## Fares

An adult return ticket costs 12 euros. Children under twelve travel free, and bicycles cost 3 euros each way.
`;

const BEES = `Keeping bees on a city rooftop needs a permit from the borough. Hives must stand at least two metres from the
roof edge, and a water tray should be placed nearby so the bees do not visit neighbours' ponds. Honey is harvested
in late August, leaving at least fifteen kilograms in each hive for the winter.`;

const VOLCANO = `# Mount Ardent

Mount Ardent is a stratovolcano whose last eruption was in 1883. The summit crater holds an acidic lake, and the
observatory on the eastern flank measures sulphur dioxide every hour.
Hiking to the crater rim takes about four hours from the Ashfield trailhead.`;

type Body = Record<string, any>;

async function query(app: TestApp, key: string, body: Body) {
  return app.call('POST', '/api/v1/query', { key, body });
}

async function ok(t: ExecutionContext, app: TestApp, key: string, body: Body): Promise<Body> {
  const response = await query(app, key, body);
  t.is(response.status, 200, JSON.stringify(response.body));
  return response.body;
}

/** A user whose default KB holds the ferry, bees and volcano documents. */
async function seededUser(app: TestApp) {
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  const ferry = await ingest(app, user.key, kb, 'ferry.md', FERRY);
  const bees = await ingest(app, user.key, kb, 'rooftop-bees.txt', BEES);
  const volcano = await ingest(app, user.key, kb, 'mount-ardent.md', VOLCANO);
  return { user, kb, ferry, bees, volcano };
}

/** Every citation is one of the retrieved chunks: same document, same title, its snippet taken from the chunk text. */
function assertCitationsComeFromChunks(t: ExecutionContext, body: Body): void {
  for (const citation of body.citations) {
    const sources = body.chunks.filter(
      (chunk: Body) =>
        chunk.document_id === citation.document_id &&
        normaliseSpace(chunk.text).includes(citation.snippet.replace(/…$/, '')),
    );
    t.true(sources.length > 0, `citation ${JSON.stringify(citation)} comes from a retrieved chunk`);
    t.true(sources.some((chunk: Body) => chunk.title === citation.title));
    t.true(
      sources.some((chunk: Body) => Math.abs(chunk.similarity - citation.similarity) < 1e-3),
      'a citation carries its chunk similarity',
    );
  }
}

test('response shape: answer with [n] markers, citations, the default model, the searched KBs', async (t) => {
  const { app } = t.context;
  const { user, kb, ferry } = await seededUser(app);
  const body = await ok(t, app, user.key, { query: 'When does the harbour ferry to Skerry Island leave on weekdays?' });
  t.deepEqual(sortedKeys(body), QUERY_FIELDS, 'no chunks key unless include_chunks');
  t.is(typeof body.answer, 'string');
  t.is(body.model, 'kbqa-extractive');
  t.true(Array.isArray(body.knowledge_base_ids));
  t.true(body.knowledge_base_ids.includes(kb), 'omitted knowledge_base_ids → every reachable KB, own default included');
  t.true(body.citations.length >= 1);
  for (const citation of body.citations) assertCitationShape(t, citation);
  assertMarkersMatchCitations(t, body);
  t.true(/\[1\]/.test(body.answer), body.answer);
  t.is(body.citations[0].document_id, ferry.id);
  t.is(body.citations[0].title, 'ferry');
  t.regex(body.answer, /07:15/);

  // The model named explicitly is echoed the same way.
  const named = await ok(t, app, user.key, {
    query: 'How much is an adult return ticket on the ferry?',
    model: 'kbqa-extractive',
    knowledge_base_ids: [kb],
    include_chunks: false,
  });
  t.deepEqual(sortedKeys(named), QUERY_FIELDS);
  t.is(named.model, 'kbqa-extractive');
  t.deepEqual(named.knowledge_base_ids, [kb]);
  t.is(named.citations[0].document_id, ferry.id);
  t.regex(named.answer, /12 euros/);
});

test('citations are exactly the cited passages, in order of first use, for several questions', async (t) => {
  const { app } = t.context;
  const { user, kb, ferry, bees, volcano } = await seededUser(app);
  const expectations: Array<[string, string]> = [
    ['When does the harbour ferry to Skerry Island leave on weekdays?', ferry.id],
    ['Do children pay for the Skerry Island ferry?', ferry.id],
    ['When is honey harvested from rooftop hives?', bees.id],
    ['How far from the roof edge must a beehive stand?', bees.id],
    ['When did Mount Ardent last erupt?', volcano.id],
    ['How long is the hike to the crater rim of Mount Ardent?', volcano.id],
  ];
  for (const [question, documentId] of expectations) {
    const body = await ok(t, app, user.key, { query: question, knowledge_base_ids: [kb], include_chunks: true });
    t.true(body.citations.length >= 1, question);
    assertMarkersMatchCitations(t, body);
    for (const citation of body.citations) assertCitationShape(t, citation);
    assertCitationsComeFromChunks(t, body);
    t.is(body.citations[0].document_id, documentId, question);
    // No two citations name the same passage twice in a row of first uses: citations are distinct passages.
    const keys = body.citations.map((citation: Body) => `${citation.document_id}|${citation.snippet}`);
    t.is(new Set(keys).size, keys.length, `distinct citations: ${question}`);
  }
});

test('include_chunks: chunk records, side ranks (integer ≥ 1 or null), only from searched KBs', async (t) => {
  const { app } = t.context;
  const { user, kb, ferry, bees, volcano } = await seededUser(app);
  const other = await createKb(app, user.key, 'other');
  await ingest(
    app,
    user.key,
    other,
    'mineral.md',
    '# Zanzibarite\n\nZanzibarite is a fictional blue mineral mined near Dar.',
  );
  const rare = await ingest(app, user.key, kb, 'notes.txt', 'The museum shows a crystal of zanzibarite in room four.');

  const body = await ok(t, app, user.key, { query: 'zanzibarite', knowledge_base_ids: [kb], include_chunks: true });
  t.deepEqual(sortedKeys(body), [...QUERY_FIELDS, 'chunks'].sort());
  t.true(body.chunks.length >= 2);
  for (const chunk of body.chunks) {
    assertChunkShape(t, chunk);
    t.is(chunk.knowledge_base_id, kb, 'only chunks of the searched KB');
  }
  const documentIds = new Set(body.chunks.map((chunk: Body) => chunk.document_id));
  t.true([...documentIds].every((id) => [ferry.id, bees.id, volcano.id, rare.id].includes(id as string)));
  // Fused order: scores never increase down the list.
  const scores = body.chunks.map((chunk: Body) => chunk.score);
  t.deepEqual(
    scores,
    [...scores].sort((a, b) => b - a),
  );

  // Only one chunk contains the word: BM25 ranks it first and returns nothing else; k-NN ranks every chunk.
  const withWord = body.chunks.filter((chunk: Body) => /zanzibarite/i.test(chunk.text));
  t.is(withWord.length, 1);
  t.is(withWord[0].document_id, rare.id);
  t.is(withWord[0].bm25_rank, 1);
  t.is(withWord[0].filename, 'notes.txt');
  t.is(withWord[0].title, 'notes');
  t.deepEqual(withWord[0].heading_path, []);
  for (const chunk of body.chunks.filter((candidate: Body) => candidate !== withWord[0])) {
    t.is(chunk.bm25_rank, null, `no BM25 hit for ${chunk.filename}`);
    t.is(typeof chunk.vector_rank, 'number');
  }
  const vectorRanks = body.chunks.map((chunk: Body) => chunk.vector_rank).filter((rank: unknown) => rank !== null);
  t.is(new Set(vectorRanks).size, vectorRanks.length, 'vector ranks are distinct');

  // A markdown chunk keeps its heading path in the chunk record.
  const ferryBody = await ok(t, app, user.key, {
    query: 'How much does a bicycle cost on the Skerry Island ferry?',
    knowledge_base_ids: [kb],
    include_chunks: true,
  });
  const fares = ferryBody.chunks.find((chunk: Body) => chunk.document_id === ferry.id && /bicycles/.test(chunk.text));
  t.truthy(fares);
  t.deepEqual(fares.heading_path, ['Skerry Island Ferry', 'Fares']);
  t.is(fares.filename, 'ferry.md');
  t.is(fares.title, 'ferry');
  t.is(fares.id.length > 0, true);

  // Without include_chunks the key is absent; include_chunks false is the same.
  const without = await ok(t, app, user.key, { query: 'zanzibarite', knowledge_base_ids: [kb], include_chunks: false });
  t.false('chunks' in without);
});

test('bm25_rank and vector_rank are the ranks the standalone BM25 and k-NN searches give', async (t) => {
  t.timeout(120_000);
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  // 56 paragraphs of ~150 tokens: one chunk each, more chunks than the k-NN side's depth of 50.
  const weather = ['calm', 'windy', 'foggy', 'stormy'];
  const paragraphs = Array.from({ length: 56 }, (_value, index) => {
    const sentences = [
      `Crossing ${index + 1} of the harbour ferry to Skerry Island leaves pier ${(index % 4) + 1} and takes ${20 + index} minutes in ${weather[index % 4]} weather.`,
      `The skipper on this crossing checks the life jackets, counts the passengers and radios the coastguard before casting off.`,
      `Passengers with bicycles board first, cars follow, and foot passengers wait behind the yellow line until the ramp is lowered.`,
      `On the return leg the ferry calls at the fish quay, where crates of crab and lobster are loaded for the mainland market.`,
      `In winter the timetable of crossing ${index + 1} may change at short notice, so travellers should check the board at the terminal.`,
      `Refreshments are sold in the lounge, and the deck is closed whenever the wind is stronger than force seven.`,
    ];
    return sentences.join(' ');
  });
  const ferries = await ingest(app, user.key, kb, 'crossings.txt', paragraphs.join('\n\n'));
  t.true(ferries.chunks > 50, `more chunks than the k-NN depth: ${ferries.chunks}`);
  const odd = await ingest(
    app,
    user.key,
    kb,
    'bakery-tax.txt',
    'Quarterly tax filing for the bakery is due in April; the accountant uses the blorptastic spreadsheet.',
  );

  const question = 'blorptastic ferry timetable';
  const body = await ok(t, app, user.key, {
    query: question,
    knowledge_base_ids: [kb],
    include_chunks: true,
    max_results: 50,
  });
  t.is(body.chunks.length, 50);
  for (const chunk of body.chunks) assertChunkShape(t, chunk);

  const vector = await app.deps.rag.embedQuestion(question);
  const request = { text: question, vector, knowledgeBaseIds: [kb], size: 50, depth: 50 };
  const lexical = await app.deps.search.lexicalSearch(request);
  const dense = await app.deps.search.vectorSearch(request);
  const lexicalRank = new Map(lexical.map((chunk, index) => [chunk.chunk_id, index + 1]));
  const denseRank = new Map(dense.map((chunk, index) => [chunk.chunk_id, index + 1]));
  for (const chunk of body.chunks) {
    t.is(chunk.bm25_rank, lexicalRank.get(chunk.id) ?? null, `bm25_rank of ${chunk.id}`);
    t.is(chunk.vector_rank, denseRank.get(chunk.id) ?? null, `vector_rank of ${chunk.id}`);
  }
  // The off-topic chunk is found by its rare word alone: a BM25 rank and no k-NN rank.
  const bakery = body.chunks.find((chunk: Body) => chunk.document_id === odd.id);
  t.truthy(bakery, 'the BM25-only chunk is among the fused results');
  t.is(typeof bakery.bm25_rank, 'number');
  t.is(bakery.vector_rank, null);
  t.true(
    body.chunks.some((chunk: Body) => chunk.bm25_rank !== null && chunk.vector_rank !== null),
    'some chunks come from both sides',
  );
});

test('max_results bounds the retrieved chunks (default 8)', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  const paragraphs = Array.from(
    { length: 80 },
    (_value, index) =>
      `Station ${index + 1} of the coastal weather network reports wind speed, air pressure and sea temperature ` +
      `every ten minutes. Its mast stands ${10 + index} metres tall and its batteries are replaced each spring.`,
  );
  const document = await ingest(app, user.key, kb, 'stations.txt', paragraphs.join('\n\n'));
  t.true(document.chunks >= 9, `needs more chunks than the default max_results: ${document.chunks}`);
  const question = 'How often does a coastal weather station report sea temperature?';
  for (const maxResults of [1, 3, 5]) {
    const body = await ok(t, app, user.key, {
      query: question,
      knowledge_base_ids: [kb],
      include_chunks: true,
      max_results: maxResults,
    });
    t.is(body.chunks.length, maxResults, `max_results ${maxResults}`);
    t.true(body.citations.length <= maxResults);
    assertMarkersMatchCitations(t, body);
    assertCitationsComeFromChunks(t, body);
  }
  const byDefault = await ok(t, app, user.key, { query: question, knowledge_base_ids: [kb], include_chunks: true });
  t.is(byDefault.chunks.length, 8);
  const most = await ok(t, app, user.key, {
    query: question,
    knowledge_base_ids: [kb],
    include_chunks: true,
    max_results: 50,
  });
  t.is(most.chunks.length, Math.min(50, document.chunks));
});

test('knowledge_base_ids restricts retrieval to the named KBs and is echoed (deduplicated)', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const first = user.defaultKnowledgeBaseId;
  const second = await createKb(app, user.key, 'second');
  const inFirst = await ingest(app, user.key, first, 'ferry.md', FERRY);
  const inSecond = await ingest(
    app,
    user.key,
    second,
    'ferry-winter.md',
    '# Winter ferry\n\nIn winter the harbour ferry to Skerry Island leaves at 09:30 only, and the café on board is closed.',
  );
  const question = 'When does the harbour ferry to Skerry Island leave?';

  const both = await ok(t, app, user.key, { query: question, include_chunks: true });
  t.true(both.knowledge_base_ids.includes(first) && both.knowledge_base_ids.includes(second));
  const bothDocuments = new Set(both.chunks.map((chunk: Body) => chunk.document_id));
  t.true(bothDocuments.has(inFirst.id) && bothDocuments.has(inSecond.id), 'unrestricted: both KBs are searched');

  const onlySecond = await ok(t, app, user.key, {
    query: question,
    knowledge_base_ids: [second],
    include_chunks: true,
  });
  t.deepEqual(onlySecond.knowledge_base_ids, [second]);
  t.true(onlySecond.chunks.length >= 1);
  for (const chunk of onlySecond.chunks) {
    t.is(chunk.knowledge_base_id, second);
    t.not(chunk.document_id, inFirst.id);
  }
  t.true(onlySecond.citations.length >= 1);
  for (const citation of onlySecond.citations) t.is(citation.document_id, inSecond.id);
  t.regex(onlySecond.answer, /09:30/);

  const onlyFirst = await ok(t, app, user.key, {
    query: question,
    knowledge_base_ids: [first, first],
    include_chunks: true,
  });
  t.deepEqual(onlyFirst.knowledge_base_ids, [first], 'duplicates collapse');
  for (const chunk of onlyFirst.chunks) t.is(chunk.knowledge_base_id, first);
  for (const citation of onlyFirst.citations) t.is(citation.document_id, inFirst.id);

  const named = await ok(t, app, user.key, { query: question, knowledge_base_ids: [second, first] });
  t.deepEqual([...named.knowledge_base_ids].sort(), [first, second].sort());
});

test('403 when knowledge_base_ids names a KB the key cannot reach; the first such id is named', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const stranger = await makeUser(app.deps.store);
  const deleted = await createKb(app, user.key, 'to delete');
  t.is((await app.call('DELETE', `/api/v1/knowledge-bases/${deleted}`, { key: user.key })).status, 200);
  const unknown = randomUUID();
  const cases: Array<[string[], string]> = [
    [[stranger.defaultKnowledgeBaseId], stranger.defaultKnowledgeBaseId],
    [[user.defaultKnowledgeBaseId, unknown, stranger.defaultKnowledgeBaseId], unknown],
    [[user.defaultKnowledgeBaseId, stranger.defaultKnowledgeBaseId, unknown], stranger.defaultKnowledgeBaseId],
    [[deleted], deleted],
    [['garbage-id', user.defaultKnowledgeBaseId], 'garbage-id'],
  ];
  for (const [ids, firstBad] of cases) {
    const response = await query(app, user.key, { query: 'anything at all', knowledge_base_ids: ids });
    t.is(response.status, 403, JSON.stringify(response.body));
    t.deepEqual(response.body, {
      error: { code: 'forbidden', message: `API key lacks access to knowledge base ${firstBad}` },
    });
  }
});

test('400: invalid query bodies', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  const valid = { query: 'What is in my knowledge base?' };
  const cases: Array<[string, unknown, RegExp]> = [
    ['missing query', {}, /^query: is required/],
    ['query number', { query: 5 }, /^query: must be a string/],
    ['query null', { query: null }, /^query: must be a string/],
    ['empty query', { query: '' }, /^query: must be 1–4000 characters/],
    ['blank query', { query: ' \n\t ' }, /^query: must be 1–4000 characters/],
    ['4001 characters', { query: 'a'.repeat(4001) }, /^query: must be 1–4000 characters/],
    ['max_results 0', { ...valid, max_results: 0 }, /^max_results: must be an integer from 1 to 50/],
    ['max_results 51', { ...valid, max_results: 51 }, /^max_results: must be an integer from 1 to 50/],
    ['max_results -1', { ...valid, max_results: -1 }, /^max_results: must be an integer from 1 to 50/],
    ['max_results 2.5', { ...valid, max_results: 2.5 }, /^max_results: must be an integer from 1 to 50/],
    ['max_results "8"', { ...valid, max_results: '8' }, /^max_results: must be an integer from 1 to 50/],
    ['max_results null', { ...valid, max_results: null }, /^max_results: /],
    ['include_chunks "yes"', { ...valid, include_chunks: 'yes' }, /^include_chunks: must be true or false/],
    ['include_chunks 1', { ...valid, include_chunks: 1 }, /^include_chunks: must be true or false/],
    ['knowledge_base_ids []', { ...valid, knowledge_base_ids: [] }, /^knowledge_base_ids: must not be empty/],
    [
      'knowledge_base_ids 101 items',
      { ...valid, knowledge_base_ids: Array.from({ length: 101 }, () => kb) },
      /^knowledge_base_ids: must list at most 100/,
    ],
    ['knowledge_base_ids [1]', { ...valid, knowledge_base_ids: [1] }, /^knowledge_base_ids\.0: /],
    ['knowledge_base_ids string', { ...valid, knowledge_base_ids: kb }, /^knowledge_base_ids: /],
    ['knowledge_base_ids null', { ...valid, knowledge_base_ids: null }, /^knowledge_base_ids: /],
    ['unknown model', { ...valid, model: 'gpt-imaginary' }, /^model: must be one of: .*kbqa-extractive/],
    ['model number', { ...valid, model: 4 }, /^model: /],
    ['array body', [valid], /^body: must be a JSON object/],
  ];
  for (const [name, body, message] of cases) {
    const response = await query(app, user.key, body as Body);
    t.is(response.status, 400, `${name}: ${JSON.stringify(response.body)}`);
    t.is(response.body?.error?.code, 'bad_request', name);
    t.regex(response.body?.error?.message ?? '', message, name);
  }

  // The edges that are valid.
  const edges: Array<[string, Body]> = [
    ['max_results 1', { ...valid, max_results: 1 }],
    ['max_results 50', { ...valid, max_results: 50 }],
    ['100 ids (one KB repeated)', { ...valid, knowledge_base_ids: Array.from({ length: 100 }, () => kb) }],
    ['4000 characters after trim', { query: `  ${'why '.repeat(1000).trim()}x   ` }],
    ['include_chunks true', { ...valid, include_chunks: true }],
  ];
  for (const [name, body] of edges) {
    t.is('why '.repeat(1000).trim().length + 1, 4000);
    const response = await query(app, user.key, { ...body, knowledge_base_ids: body.knowledge_base_ids ?? [kb] });
    t.is(response.status, 200, `${name}: ${JSON.stringify(response.body)}`);
  }
});

test('a soft-deleted KB is never retrieved, although its chunks are still stored', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  await ingest(
    app,
    user.key,
    user.defaultKnowledgeBaseId,
    'pastry.md',
    '# Pastry\n\nShortcrust pastry needs cold butter and a light touch.',
  );
  const doomed = await createKb(app, user.key, 'recipes to delete');
  const secret = await ingest(
    app,
    user.key,
    doomed,
    'glaze.md',
    '# Maple glaze\n\nThe maple glaze for the pecan pie uses three tablespoons of maple syrup and a pinch of sea salt.',
  );
  const question = 'How much maple syrup goes into the maple glaze for the pecan pie?';

  const before = await ok(t, app, user.key, { query: question, include_chunks: true });
  t.true(before.knowledge_base_ids.includes(doomed));
  t.is(before.citations[0]?.document_id, secret.id, 'before deletion the glaze document answers');

  const deleted = await app.call('DELETE', `/api/v1/knowledge-bases/${doomed}`, { key: user.key });
  t.deepEqual(deleted.body, { deleted: true, mode: 'soft' });
  t.true((await app.deps.search.countChunks({ knowledge_base_id: doomed })) > 0, 'soft delete keeps the chunks');

  for (const includeChunks of [true, false]) {
    const after = await ok(t, app, user.key, { query: question, include_chunks: includeChunks });
    t.false(after.knowledge_base_ids.includes(doomed));
    t.true(after.knowledge_base_ids.includes(user.defaultKnowledgeBaseId));
    for (const citation of after.citations) t.not(citation.document_id, secret.id);
    t.notRegex(after.answer, /three tablespoons/);
    for (const chunk of after.chunks ?? []) {
      t.not(chunk.knowledge_base_id, doomed);
      t.not(chunk.document_id, secret.id);
    }
  }
  const named = await query(app, user.key, { query: question, knowledge_base_ids: [doomed] });
  t.is(named.status, 403);
  t.is(named.body.error.message, `API key lacks access to knowledge base ${doomed}`);
});

test("tenant isolation: another user's private KB is never cited or returned, however well it matches", async (t) => {
  const { app } = t.context;
  const alice = await makeUser(app.deps.store, { label: 'alice' });
  const bob = await makeUser(app.deps.store, { label: 'bob' });
  await ingest(
    app,
    alice.key,
    alice.defaultKnowledgeBaseId,
    'bread.md',
    '# Bread\n\nBread is made from flour, water, salt and yeast.',
  );
  const bobsKb = await createKb(app, bob.key, 'private baking notes');
  const bobsDocument = await ingest(
    app,
    bob.key,
    bobsKb,
    'sourdough-bake.md',
    '# Sourdough bake\n\nThe sourdough loaf is baked at 250 degrees Celsius for 40 minutes, covered for the first 20.',
  );
  const question = 'At what temperature and for how long is the sourdough loaf baked?';

  // Bob's own question is answered from his document: it is the best match.
  const bobs = await ok(t, app, bob.key, { query: question, include_chunks: true });
  t.is(bobs.citations[0]?.document_id, bobsDocument.id);

  for (const includeChunks of [true, false]) {
    const alices = await ok(t, app, alice.key, { query: question, include_chunks: includeChunks });
    t.false(alices.knowledge_base_ids.includes(bobsKb));
    t.false(alices.knowledge_base_ids.includes(bob.defaultKnowledgeBaseId));
    for (const citation of alices.citations) t.not(citation.document_id, bobsDocument.id);
    t.notRegex(alices.answer, /250 degrees/);
    for (const chunk of alices.chunks ?? []) {
      t.not(chunk.knowledge_base_id, bobsKb);
      t.not(chunk.document_id, bobsDocument.id);
    }
  }
  const forced = await query(app, alice.key, {
    query: question,
    knowledge_base_ids: [alice.defaultKnowledgeBaseId, bobsKb],
  });
  t.is(forced.status, 403);
  t.is(forced.body.error.message, `API key lacks access to knowledge base ${bobsKb}`);
});

test('nothing relevant: 200, citations [] and an answer saying the KBs hold nothing on it', async (t) => {
  const { app } = t.context;
  const { user, kb } = await seededUser(app);
  for (const question of [
    'What is the capital of Mongolia?',
    'Which Roman emperor built the wall across northern Britain?',
  ]) {
    const body = await ok(t, app, user.key, { query: question, knowledge_base_ids: [kb], include_chunks: true });
    t.deepEqual(body.citations, [], question);
    t.is(body.answer, NOTHING_RELEVANT_ANSWER);
    t.regex(body.answer, /hold nothing/);
    t.deepEqual(body.knowledge_base_ids, [kb]);
    t.is(body.model, 'kbqa-extractive');
    t.true(Array.isArray(body.chunks));
    t.false(/\[\d+\]/.test(body.answer), 'no markers without citations');
  }
  // An empty KB holds nothing on anything.
  const empty = await createKb(app, user.key, 'empty');
  const body = await ok(t, app, user.key, {
    query: 'When does the ferry leave?',
    knowledge_base_ids: [empty],
    include_chunks: true,
  });
  t.deepEqual(body, {
    answer: NOTHING_RELEVANT_ANSWER,
    citations: [],
    model: 'kbqa-extractive',
    knowledge_base_ids: [empty],
    chunks: [],
  });
});

// The relevance floor (KBQA_RELEVANCE_FLOOR, 0.6) sits between the fixture corpus's figures (README, "Query"): every
// answerable question's best chunk is ≥ 0.622 and these off-topic ones' best ≤ 0.591 (the Rust one; the others ≤ 0.545).
test('nothing relevant: a clearly off-topic question is not answered from the nearest passage', async (t) => {
  const { app } = t.context;
  const { user, kb } = await seededUser(app);
  for (const question of [
    'What is the orbital period of the exoplanet Kepler-452b in Earth days?',
    'Who won the 1974 FIFA World Cup final?',
    'How do I compile a Rust program for WebAssembly?',
  ]) {
    const body = await ok(t, app, user.key, { query: question, knowledge_base_ids: [kb] });
    t.deepEqual(body.citations, [], `${question} → ${body.answer}`);
    t.is(body.answer, NOTHING_RELEVANT_ANSWER, question);
  }
});

test('no reachable KB: 200 with knowledge_base_ids [], citations [] and an answer saying so', async (t) => {
  t.timeout(120_000);
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  // Every user has a default KB the API cannot delete; remove its record directly.
  await app.deps.store.deleteKnowledgeBaseRecord(user.defaultKnowledgeBaseId);
  const listed = await app.call('GET', '/api/v1/knowledge-bases', { key: user.key });
  t.is(listed.status, 200);
  t.deepEqual(listed.body.knowledge_bases, []);

  const body = await ok(t, app, user.key, { query: 'When does the ferry leave?' });
  t.deepEqual(body, {
    answer: NO_KNOWLEDGE_BASE_ANSWER,
    citations: [],
    model: 'kbqa-extractive',
    knowledge_base_ids: [],
  });
  // Streamed: no passages, the fixed answer as one delta, then the same body.
  const streamed = await allEvents(
    await postForEvents(app.baseUrl, '/api/v1/query', {
      key: user.key,
      body: { query: 'When does the ferry leave?', stream: true },
    }),
  );
  t.deepEqual(streamed, [
    { event: 'retrieval', data: { passages: [] } },
    { event: 'delta', data: { text: NO_KNOWLEDGE_BASE_ANSWER, citations: [] } },
    { event: 'done', data: body },
  ]);
  t.regex(body.answer, /no knowledge bases/i);
  const withChunks = await ok(t, app, user.key, {
    query: 'When does the ferry leave?',
    include_chunks: true,
    max_results: 3,
  });
  t.deepEqual(withChunks.chunks, []);
  t.deepEqual(withChunks.knowledge_base_ids, []);
  // Naming the deleted default KB is still a 403.
  const named = await query(app, user.key, {
    query: 'When does the ferry leave?',
    knowledge_base_ids: [user.defaultKnowledgeBaseId],
  });
  t.is(named.status, 403);
});

test('stream: true with the default (extractive) model: one delta per sentence, done is the JSON answer', async (t) => {
  const { app } = t.context;
  const { user, kb } = await seededUser(app);
  for (const question of [
    'When does the harbour ferry to Skerry Island leave on weekdays?',
    'When is honey harvested from rooftop hives?',
  ]) {
    const body = { query: question, knowledge_base_ids: [kb], include_chunks: true };
    const response = await postForEvents(app.baseUrl, '/api/v1/query', {
      key: user.key,
      body: { ...body, stream: true },
    });
    t.is(response.status, 200);
    const events = await allEvents(response);
    const names = events.map((event) => event.event);
    t.is(names[0], 'retrieval');
    t.is(names.at(-1), 'done');
    t.true(names.slice(1, -1).every((name) => name === 'delta') && names.length >= 3, names.join(' '));
    const done = events.at(-1)!.data;
    t.deepEqual(done, await ok(t, app, user.key, body), question);
    const { text, citations } = concatDeltas(events);
    t.is(text, done.answer);
    t.deepEqual(citations, done.citations);
    assertMarkersMatchCitations(t, done);
    // One delta per sentence: each ends in its marker, and there are as many as the answer has markers.
    const deltas = events.filter((event) => event.event === 'delta').map((event) => event.data.text as string);
    t.is(deltas.length, markers(done.answer).length, JSON.stringify(deltas));
    for (const delta of deltas) t.regex(delta, /\[\d+\][.!?…]?$/);
    t.deepEqual(
      events[0].data.passages.map(({ number, ...chunk }: Body) => ({ number, id: chunk.id })),
      done.chunks.map((chunk: Body, index: number) => ({ number: index + 1, id: chunk.id })),
    );
  }
});
