// POST /api/v1/search against the running stack: ranked chunks without an answer, in three modes; the same access
// rules as /query (403 naming the first KB the key cannot reach, no reachable KB → no results), hidden versions
// excluded, max_results bounds, validation. Filters: metadataFilters.test.ts.
import { randomUUID } from 'node:crypto';
import { makeUser } from './factories/accounts.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { assertChunkShape, createKb, ingest } from './helpers/documentsApi.ts';

const test = testWithApp();

type Body = Record<string, any>;

const FERRY = `The harbour ferry to Skerry Island leaves the north pier at 07:15 and at 16:40 on weekdays. On Saturdays there
is a single crossing at 10:00, and there is no service on Sundays.`;
const BEES = `Keeping bees on a city rooftop needs a permit from the borough. Hives must stand at least two metres from the
roof edge.`;
const VOLCANO = `Mount Ardent is a stratovolcano whose last eruption was in 1883. The summit crater holds an acidic lake.`;

async function search(app: TestApp, key: string, body: Body) {
  return app.call('POST', '/api/v1/search', { key, body });
}

async function seeded(app: TestApp) {
  const user = await makeUser(app.deps.store);
  const kb = await createKb(app, user.key, 'search');
  const ferry = await ingest(app, user.key, kb, 'ferry.md', FERRY);
  const bees = await ingest(app, user.key, kb, 'bees.md', BEES);
  const volcano = await ingest(app, user.key, kb, 'volcano.md', VOLCANO);
  return { user, kb, ferry, bees, volcano };
}

test("hybrid (the default): ranked chunk records, best first, with both sides' ranks; no relevance floor", async (t) => {
  const { app } = t.context;
  const { user, kb, ferry } = await seeded(app);
  const response = await search(app, user.key, {
    query: 'When does the ferry leave the pier?',
    knowledge_base_ids: [kb],
  });
  t.is(response.status, 200, JSON.stringify(response.body));
  t.deepEqual(Object.keys(response.body).sort(), ['knowledge_base_ids', 'results']);
  t.deepEqual(response.body.knowledge_base_ids, [kb]);
  const results = response.body.results as Body[];
  t.is(results.length, 3, 'every chunk of the KB (no relevance floor, max_results 10)');
  for (const chunk of results) assertChunkShape(t, chunk);
  t.is(results[0].document_id, ferry.id);
  t.true(results[0].bm25_rank === 1 && results[0].vector_rank === 1);
  for (let index = 1; index < results.length; index += 1)
    t.true(results[index - 1].score >= results[index].score, 'best first');

  // Off-topic: /query would answer "nothing relevant"; /search still ranks what there is.
  const offTopic = await search(app, user.key, {
    query: 'Who won the 1974 FIFA World Cup final?',
    knowledge_base_ids: [kb],
  });
  t.is(offTopic.body.results.length, 3);
});

test('modes: bm25 ranks lexical matches only (similarity 0, no embedding); dense ranks every chunk by cosine', async (t) => {
  const { app } = t.context;
  const { user, kb, ferry, volcano } = await seeded(app);
  const bm25 = await search(app, user.key, { query: 'crater eruption', knowledge_base_ids: [kb], mode: 'bm25' });
  t.is(bm25.status, 200, JSON.stringify(bm25.body));
  t.deepEqual(
    bm25.body.results.map((chunk: Body) => chunk.document_id),
    [volcano.id],
    'only the chunk holding the words',
  );
  const [lexical] = bm25.body.results as Body[];
  assertChunkShape(t, lexical);
  t.is(lexical.bm25_rank, 1);
  t.is(lexical.vector_rank, null);
  t.is(lexical.similarity, 0, 'no question vector in bm25 mode');

  const dense = await search(app, user.key, {
    query: 'boat departures from the harbour',
    knowledge_base_ids: [kb],
    mode: 'dense',
  });
  t.is(dense.status, 200);
  const results = dense.body.results as Body[];
  t.is(results.length, 3);
  t.is(results[0].document_id, ferry.id, 'nearest by meaning without sharing the words');
  for (const [index, chunk] of results.entries()) {
    assertChunkShape(t, chunk);
    t.is(chunk.bm25_rank, null);
    t.is(chunk.vector_rank, index + 1);
    if (index > 0) t.true(results[index - 1].similarity >= chunk.similarity, 'by similarity');
  }

  const bad = await search(app, user.key, { query: 'x', mode: 'semantic' });
  t.is(bad.status, 400);
  t.deepEqual(bad.body, { error: { code: 'bad_request', message: 'mode: must be one of: hybrid, bm25, dense' } });
});

test('max_results: 1–100, default 10', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = await createKb(app, user.key, 'many');
  const words = ['ferry', 'harbour', 'pier', 'island', 'timetable', 'crossing', 'boat', 'fare'];
  for (let start = 0; start < 24; start += 8) {
    await Promise.all(
      Array.from({ length: 8 }, (_v, offset) => start + offset).map((index) =>
        ingest(
          app,
          user.key,
          kb,
          `note-${index}.md`,
          `Note ${index} about the ${words[index % words.length]} and the ${words[(index + 3) % words.length]}.`,
        ),
      ),
    );
  }
  const count = async (body: Body) => {
    const response = await search(app, user.key, { query: 'ferry harbour', knowledge_base_ids: [kb], ...body });
    t.is(response.status, 200, JSON.stringify(response.body));
    return response.body.results.length as number;
  };
  t.is(await count({}), 10);
  t.is(await count({ max_results: 1 }), 1);
  t.is(await count({ max_results: 100 }), 24);
  t.is(await count({ max_results: 17, mode: 'dense' }), 17);
  for (const max_results of [0, 101, 2.5, '5', null]) {
    const response = await search(app, user.key, { query: 'ferry', max_results });
    t.is(response.status, 400, String(max_results));
    t.deepEqual(response.body, {
      error: { code: 'bad_request', message: 'max_results: must be an integer from 1 to 100' },
    });
  }
});

test('400: invalid bodies', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const cases: Array<[unknown, string]> = [
    [{}, 'query: is required'],
    [{ query: '   ' }, 'query: must be 1–4000 characters'],
    [{ query: 'x'.repeat(4001) }, 'query: must be 1–4000 characters'],
    [{ query: { $gt: '' } }, 'query: must be a string'],
    [
      { query: 'x', knowledge_base_ids: [] },
      'knowledge_base_ids: must not be empty (omit it to search every knowledge base you can reach)',
    ],
    [{ query: 'x', knowledge_base_ids: 'kb' }, 'knowledge_base_ids: must be an array of knowledge base id strings'],
    [[], 'body: must be a JSON object'],
  ];
  for (const [body, message] of cases) {
    const response = await search(app, user.key, body as Body);
    t.is(response.status, 400, JSON.stringify(body));
    t.deepEqual(response.body, { error: { code: 'bad_request', message } }, JSON.stringify(body));
  }
  t.is((await app.call('POST', '/api/v1/search', { body: { query: 'x' } })).status, 401);
  // Another method answers as it does on /query.
  t.is(
    (await app.call('GET', '/api/v1/search', { key: user.key })).status,
    (await app.call('GET', '/api/v1/query', { key: user.key })).status,
  );
});

test('access: 403 naming the first KB the key cannot reach, as /query; only reachable KBs are searched', async (t) => {
  const { app } = t.context;
  const owner = await seeded(app);
  const user = await makeUser(app.deps.store);
  const mine = await createKb(app, user.key, 'mine');
  await ingest(app, user.key, mine, 'mine.md', 'My own note about the ferry to the island.');
  const deleted = await createKb(app, user.key, 'to delete');
  t.is((await app.call('DELETE', `/api/v1/knowledge-bases/${deleted}`, { key: user.key })).status, 200);
  const unknown = randomUUID();
  const cases: Array<[string[], string]> = [
    [[owner.kb], owner.kb],
    [[mine, unknown, owner.kb], unknown],
    [[deleted], deleted],
    [['garbage-id', mine], 'garbage-id'],
  ];
  for (const [ids, firstBad] of cases) {
    for (const path of ['/api/v1/search', '/api/v1/query']) {
      const response = await app.call('POST', path, {
        key: user.key,
        body: { query: 'ferry', knowledge_base_ids: ids },
      });
      t.is(response.status, 403, `${path} ${JSON.stringify(response.body)}`);
      t.deepEqual(response.body, {
        error: { code: 'forbidden', message: `API key lacks access to knowledge base ${firstBad}` },
      });
    }
  }
  // Without knowledge_base_ids: every KB the key reaches, never another user's.
  const everything = await search(app, user.key, { query: 'ferry', max_results: 100 });
  t.is(everything.status, 200);
  t.true(everything.body.knowledge_base_ids.includes(mine));
  t.false(everything.body.knowledge_base_ids.includes(owner.kb));
  t.false(everything.body.results.some((chunk: Body) => chunk.knowledge_base_id === owner.kb));
  t.true(everything.body.results.some((chunk: Body) => chunk.knowledge_base_id === mine));
  // Duplicates collapse.
  const twice = await search(app, user.key, { query: 'ferry', knowledge_base_ids: [mine, mine] });
  t.deepEqual(twice.body.knowledge_base_ids, [mine]);
});

test('no reachable KB: 200 with no results and no KBs', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  await app.deps.store.deleteKnowledgeBaseRecord(user.defaultKnowledgeBaseId);
  t.deepEqual(await app.deps.store.listReachableKnowledgeBaseIds({ _id: user.id, organisation_id: null }), []);
  for (const mode of ['hybrid', 'bm25', 'dense']) {
    const response = await search(app, user.key, { query: 'When does the ferry leave?', mode });
    t.is(response.status, 200);
    t.deepEqual(response.body, { results: [], knowledge_base_ids: [] });
  }
});

test('hidden versions are excluded: a replacement in flight is not seen beside the live version', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = await createKb(app, user.key, 'versions');
  const doc = await ingest(app, user.key, kb, 'ferry.md', FERRY);
  const queued = await app.call('PUT', `/api/v1/documents/${doc.id}`, {
    key: user.key,
    headers: { Prefer: 'respond-async' },
    body: { content: `${FERRY}\n\nFrom May the ferry also leaves at 12:00.` },
  });
  t.is(queued.status, 202);
  // While the new version is built or retired, every search sees exactly one version of the document.
  t.timeout(180_000);
  const deadline = Date.now() + 150_000;
  let sawDone = false;
  let last: unknown = null;
  while (Date.now() < deadline) {
    // BM25 (no question to embed: the loop leaves the model pool to the ingestion); the filter is the same for all modes.
    const response = await search(app, user.key, {
      query: 'ferry',
      knowledge_base_ids: [kb],
      mode: 'bm25',
      max_results: 100,
    });
    t.is(response.status, 200);
    const versions = new Set((response.body.results as Body[]).map((chunk) => String(chunk.id).split(':')[1]));
    t.is(versions.size, 1, `one version at a time: ${[...versions].join(', ')}`);
    const state = await app.call('GET', `/api/v1/documents/${doc.id}`, { key: user.key });
    last = state.body.document;
    if (state.body.document.status === 'ready' && (await app.deps.store.findJob(doc.id)) === null) {
      sawDone = true;
      t.deepEqual([...versions], ['2']);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.true(sawDone, `the replacement finished; last seen ${JSON.stringify(last)}`);
});

test('the web app gets /search too (the shared resource routes)', async (t) => {
  const { app } = t.context;
  const response = await app.call('POST', '/api/web/search', { body: { query: 'ferry' } });
  t.not(response.status, 404, 'mounted under /api/web');
});
