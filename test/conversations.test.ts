// /api/v1/conversations against the running stack with the extractive answerer: the settled details of issue 33
// (titles, standalone_query, include_chunks, streaming, nothing stored on a 4xx, feedback rules), follow-up
// retrieval, 404 across users on every route, access checked at every turn, and the bounds.
import type { ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { acceptKnowledgeBaseShare } from '../service/commands/knowledgeBases.ts';
import { inviteToKnowledgeBase, unshareKnowledgeBaseWithUser } from '../service/commands/shareInvitations.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { serveVariant, testWithApp, type TestApp } from './helpers/app.ts';
import { callJson } from './helpers/http.ts';
import { QUERY_FIELDS, UUID, createKb, ingest, sortedKeys } from './helpers/documentsApi.ts';
import { allEvents, concatDeltas, postForEvents } from './helpers/eventStream.ts';

const test = testWithApp({ env: { KBQA_CHUNK_TOKENS: '256' } });

const FERRY = `# Skerry Island Ferry

## Timetable

The harbour ferry to Skerry Island leaves the north pier at 07:15 and at 16:40 on weekdays. On Saturdays there is a
single crossing at 10:00, and there is no service on Sundays.

## Fares

An adult return ticket costs 12 euros. Children under twelve travel free, and bicycles cost 3 euros each way.
`;

const MUSEUM = `# Harbour Museum

The Harbour Museum shows the history of the fishing fleet. Children's tickets cost 4 euros and family tickets 20 euros.
The museum opens at 09:00 and closes at 17:00, and it is closed on Mondays.`;

const BEES = `Keeping bees on a city rooftop needs a permit from the borough. Hives must stand at least two metres from the
roof edge, and a water tray should be placed nearby so the bees do not visit neighbours' ponds. Honey is harvested
in late August, leaving at least fifteen kilograms in each hive for the winter.`;

type Body = Record<string, any>;

async function seeded(app: TestApp) {
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  const ferry = await ingest(app, user.key, kb, 'ferry.md', FERRY);
  const museum = await ingest(app, user.key, kb, 'harbour-museum.md', MUSEUM);
  const bees = await ingest(app, user.key, kb, 'rooftop-bees.txt', BEES);
  return { user, kb, ferry, museum, bees };
}

async function expectStatus(t: ExecutionContext, response: { status: number; body: any }, status: number) {
  t.is(response.status, status, JSON.stringify(response.body));
  return response.body as Body;
}

async function start(t: ExecutionContext, app: TestApp, user: TestUser, body: Body = {}): Promise<Body> {
  const created = await expectStatus(t, await app.call('POST', '/api/v1/conversations', { key: user.key, body }), 201);
  return created.conversation;
}

async function ask(t: ExecutionContext, app: TestApp, user: TestUser, id: string, body: Body): Promise<Body> {
  const response = await app.call('POST', `/api/v1/conversations/${id}/messages`, { key: user.key, body });
  return (await expectStatus(t, response, 200)).message;
}

const read = async (t: ExecutionContext, app: TestApp, user: TestUser, id: string) =>
  (await expectStatus(t, await app.call('GET', `/api/v1/conversations/${id}`, { key: user.key }), 200)).conversation;

test('a conversation: created, a first turn titles it, follow-ups keep the topic, read back in order', async (t) => {
  const { app } = t.context;
  const { user, kb, ferry } = await seeded(app);
  const conversation = await start(t, app, user);
  t.deepEqual(sortedKeys(conversation), ['created_at', 'id', 'knowledge_base_ids', 'title', 'updated_at']);
  t.regex(conversation.id, UUID);
  t.is(conversation.title, null);
  t.is(conversation.knowledge_base_ids, null, 'omitted: every KB reached at each turn');

  const question =
    'How much is an adult return ticket on the ferry to Skerry Island, and is it worth it in winter time?';
  const first = await ask(t, app, user, conversation.id, { query: question });
  t.deepEqual(sortedKeys(first), ['id', 'role', 'standalone_query', ...QUERY_FIELDS].sort());
  t.is(first.role, 'assistant');
  t.is(first.standalone_query, question, 'the first turn searches the question itself');
  t.true(first.knowledge_base_ids.includes(kb));
  t.is(first.citations[0]?.document_id, ferry.id);

  // "And for children?" alone finds nothing about the ferry; in the conversation it does.
  const alone = await app.call('POST', '/api/v1/query', { key: user.key, body: { query: 'And for children?' } });
  t.not(alone.body.citations[0]?.document_id, ferry.id, 'asked alone, the follow-up misses the ferry');
  const followUp = await ask(t, app, user, conversation.id, { query: 'And for children?' });
  t.not(followUp.standalone_query, 'And for children?');
  t.true(followUp.standalone_query.startsWith('And for children?'), followUp.standalone_query);
  t.regex(followUp.standalone_query, /ferry/);
  t.is(followUp.citations[0]?.document_id, ferry.id, JSON.stringify(followUp));
  t.regex(followUp.answer, /[Cc]hildren under twelve travel free/);

  const read1 = await read(t, app, user, conversation.id);
  t.is(read1.title, Array.from(question).slice(0, 80).join(''), 'the first question cut to 80 characters');
  t.is(read1.title.length, 80);
  t.is(read1.messages.length, 4);
  t.deepEqual(
    read1.messages.map((message: Body) => message.role),
    ['user', 'assistant', 'user', 'assistant'],
  );
  t.is(read1.messages[0].content, question);
  t.deepEqual(sortedKeys(read1.messages[0]), ['content', 'created_at', 'id', 'role']);
  t.is(read1.messages[1].id, first.id);
  t.is(read1.messages[1].content, first.answer);
  t.deepEqual(read1.messages[1].citations, first.citations);
  t.is(read1.messages[1].model, 'kbqa-extractive');
  t.is(read1.messages[1].feedback, null);
  t.is(read1.messages[3].standalone_query, followUp.standalone_query);
  t.true(read1.updated_at > conversation.updated_at);
});

test('a turn reads only its conversation record; one stored before recent_turns reads its messages once', async (t) => {
  const { app } = t.context;
  const { user, ferry } = await seeded(app);
  const { id } = await start(t, app, user);
  await ask(t, app, user, id, { query: 'How much is an adult return ticket on the ferry to Skerry Island?' });
  const stored = await app.deps.store.findConversationOfUser(id, user.id);
  t.is(stored?.recent_turns?.length, 1);
  t.is(stored?.recent_turns?.[0].cited_titles[0], 'ferry');
  const mongo = await MongoClient.connect(app.deps.config.mongodb.url);
  try {
    const messages = mongo.db().collection<{ conversation_id: string }>('conversation_messages');
    const conversations = mongo.db().collection<{ _id: string }>('conversations');
    // Its messages gone behind its back: the follow-up still has the topic, from the record alone.
    await messages.deleteMany({ conversation_id: id });
    const followUp = await ask(t, app, user, id, { query: 'And for children?' });
    t.regex(followUp.standalone_query, /ferry/);
    t.is(followUp.citations[0]?.document_id, ferry.id);

    // A conversation as stored before the record kept its turns: the follow-up reads the messages, then the record
    // holds both turns (the next turn reads only it).
    const legacy = await start(t, app, user);
    await ask(t, app, user, legacy.id, { query: 'How much is an adult return ticket on the ferry to Skerry Island?' });
    await conversations.updateOne({ _id: legacy.id }, { $unset: { recent_turns: '' } });
    const legacyFollowUp = await ask(t, app, user, legacy.id, { query: 'And for children?' });
    t.regex(legacyFollowUp.standalone_query, /ferry/);
    t.is(legacyFollowUp.citations[0]?.document_id, ferry.id);
    const migrated = await app.deps.store.findConversationOfUser(legacy.id, user.id);
    t.is(migrated?.turns, 2, 'two turns counted (not 3: the answer of turn n is at 2n+1)');
    t.deepEqual(
      migrated?.recent_turns?.map((turn) => turn.question),
      ['How much is an adult return ticket on the ferry to Skerry Island?', 'And for children?'],
    );

    // A counter left behind (messages stored, the conversation's update lost): one 409, then the turn goes through.
    await conversations.updateOne({ _id: legacy.id }, { $set: { turns: 1 } });
    const refused = await app.call('POST', `/api/v1/conversations/${legacy.id}/messages`, {
      key: user.key,
      body: { query: 'And bicycles?' },
    });
    t.is(refused.status, 409, JSON.stringify(refused.body));
    const retried = await ask(t, app, user, legacy.id, { query: 'And bicycles?' });
    t.regex(retried.standalone_query, /ferry/, 'the history read back from the messages');
    // The refused turn stored nothing, not even its question.
    t.deepEqual(
      (await read(t, app, user, legacy.id)).messages
        .map((message: Body) => `${message.role}:${message.content}`)
        .filter((line: string) => line.startsWith('user:')),
      [
        'user:How much is an adult return ticket on the ferry to Skerry Island?',
        'user:And for children?',
        'user:And bicycles?',
      ],
    );
  } finally {
    await mongo.close();
  }
  // A list does not read them (a page of conversations would carry up to four answers each).
  const listed = await app.deps.store.listConversationsOfUser(user.id, {});
  t.is(listed.items.length, 2);
  t.true(listed.items.every((conversation) => conversation.recent_turns === undefined));
});

test('follow-ups resolve pronouns; a change of topic is not dragged back', async (t) => {
  const { app } = t.context;
  const { user, museum, bees } = await seeded(app);
  const { id } = await start(t, app, user);
  await ask(t, app, user, id, { query: 'What does the Harbour Museum show?' });
  const closes = await ask(t, app, user, id, { query: 'When does it close?' });
  t.regex(closes.standalone_query, /museum/i);
  t.is(closes.citations[0]?.document_id, museum.id);
  t.regex(closes.answer, /17:00/);
  const topic = 'How many kilograms of honey stay in each rooftop hive for the winter?';
  const changed = await ask(t, app, user, id, { query: topic });
  t.is(changed.standalone_query, topic, 'a question with a topic of its own is searched as it is');
  t.is(changed.citations[0]?.document_id, bees.id);
});

test('include_chunks, a named model, stream: true and Accept: text/event-stream; done is the JSON body', async (t) => {
  const { app } = t.context;
  const { user, kb } = await seeded(app);
  const { id } = await start(t, app, user, { knowledge_base_ids: [kb], title: 'Ferry' });
  const withChunks = await ask(t, app, user, id, {
    query: 'When does the ferry leave on weekdays?',
    include_chunks: true,
    model: 'kbqa-extractive',
  });
  t.true(Array.isArray(withChunks.chunks) && withChunks.chunks.length > 0);
  t.deepEqual(withChunks.knowledge_base_ids, [kb]);

  const requests: Array<{ body: Body; headers: Record<string, string> }> = [
    { body: { query: 'And on Saturdays?', stream: true }, headers: {} },
    { body: { query: 'And on Sundays?' }, headers: { accept: 'text/event-stream' } },
  ];
  for (const request of requests) {
    const response = await postForEvents(app.baseUrl, `/api/v1/conversations/${id}/messages`, {
      key: user.key,
      ...request,
    });
    t.is(response.status, 200);
    const events = await allEvents(response);
    t.deepEqual([...new Set(events.map((event) => event.event))], ['retrieval', 'delta', 'done']);
    const done = events.at(-1)!.data;
    t.deepEqual(sortedKeys(done), ['message']);
    t.is(concatDeltas(events).text, done.message.answer);
    t.regex(done.message.standalone_query, /ferry/);
    // The stored turn is what `done` said.
    const stored = (await read(t, app, user, id)).messages.at(-1);
    t.is(stored.id, done.message.id);
    t.is(stored.content, done.message.answer);
  }
  const conversation = await read(t, app, user, id);
  t.is(conversation.title, 'Ferry', 'a given title stays');
  t.is(conversation.messages.length, 6);
});

test('a turn refused with 4xx stores nothing; validation words are /query’s', async (t) => {
  const { app } = t.context;
  const { user } = await seeded(app);
  const { id } = await start(t, app, user);
  const path = `/api/v1/conversations/${id}/messages`;
  for (const [body, message] of [
    [{}, 'query: is required'],
    [{ query: '' }, 'query: must be 1–4000 characters'],
    [{ query: 'x', max_results: 0 }, 'max_results: must be an integer from 1 to 50'],
    [{ query: 'x', model: 'gpt-nothing' }, 'model: must be one of: kbqa-extractive'],
    [{ query: 'x', include_chunks: 'yes' }, 'include_chunks: must be true or false'],
  ] as const) {
    const response = await app.call('POST', path, { key: user.key, body });
    t.is(response.status, 400);
    t.deepEqual(response.body, { error: { code: 'bad_request', message } });
    const queried = await app.call('POST', '/api/v1/query', { key: user.key, body });
    t.is(queried.body.error?.message, message, 'the same words as /query');
  }
  const streamed = await postForEvents(app.baseUrl, path, { key: user.key, body: { query: '', stream: true } });
  t.is(streamed.status, 400);
  const conversation = await read(t, app, user, id);
  t.deepEqual(conversation.messages, []);
  t.is(conversation.title, null);

  // Creation checks KBs as /query does: unknown or unreachable is 403, and nothing is created.
  const stranger = await makeUser(app.deps.store);
  for (const kb of [randomUUID(), stranger.defaultKnowledgeBaseId]) {
    const refused = await app.call('POST', '/api/v1/conversations', {
      key: user.key,
      body: { knowledge_base_ids: [kb] },
    });
    t.is(refused.status, 403);
    t.deepEqual(refused.body, {
      error: { code: 'forbidden', message: `API key lacks access to knowledge base ${kb}` },
    });
  }
  const bad = await app.call('POST', '/api/v1/conversations', { key: user.key, body: { knowledge_base_ids: [] } });
  t.is(bad.status, 400);
  t.is(
    bad.body.error.message,
    'knowledge_base_ids: must not be empty (omit it to search every knowledge base you can reach)',
  );
  const list = await app.call('GET', '/api/v1/conversations', { key: user.key });
  t.is(list.body.conversations.length, 1);
});

test('feedback: answers only, up or down, PUT replaces it whole, DELETE clears it', async (t) => {
  const { app } = t.context;
  const { user } = await seeded(app);
  const { id } = await start(t, app, user);
  const answer = await ask(t, app, user, id, { query: 'When does the ferry leave on weekdays?' });
  const [question] = (await read(t, app, user, id)).messages;
  const path = (messageId: string) => `/api/v1/conversations/${id}/messages/${messageId}/feedback`;

  const rated = await expectStatus(
    t,
    await app.call('PUT', path(answer.id), {
      key: user.key,
      body: { rating: 'down', comment: 'Missed the Saturday crossing' },
    }),
    200,
  );
  t.like(rated.feedback, { rating: 'down', comment: 'Missed the Saturday crossing' });
  const replaced = await expectStatus(
    t,
    await app.call('PUT', path(answer.id), { key: user.key, body: { rating: 'up' } }),
    200,
  );
  t.like(replaced.feedback, { rating: 'up', comment: null }, 'no comment given, none kept');
  t.like((await read(t, app, user, id)).messages[1].feedback, { rating: 'up', comment: null });

  const sideways = await app.call('PUT', path(answer.id), { key: user.key, body: { rating: 'meh' } });
  t.deepEqual(sideways.body, { error: { code: 'bad_request', message: 'rating: must be up or down' } });
  const onQuestion = await app.call('PUT', path(question.id), { key: user.key, body: { rating: 'up' } });
  t.is(onQuestion.status, 400);
  t.regex(onQuestion.body.error.message, /only an answer/);
  t.is((await app.call('DELETE', path(question.id), { key: user.key })).status, 400);
  t.is((await app.call('PUT', path(randomUUID()), { key: user.key, body: { rating: 'up' } })).status, 404);

  const cleared = await expectStatus(t, await app.call('DELETE', path(answer.id), { key: user.key }), 200);
  t.deepEqual(cleared, { deleted: true });
  t.is((await read(t, app, user, id)).messages[1].feedback, null);
});

test('another user’s conversation is 404 on every route, SSE and feedback included', async (t) => {
  const { app } = t.context;
  const { user } = await seeded(app);
  const { id } = await start(t, app, user);
  const answer = await ask(t, app, user, id, { query: 'When does the ferry leave on weekdays?' });
  const other = await makeUser(app.deps.store);
  const feedback = `/api/v1/conversations/${id}/messages/${answer.id}/feedback`;
  const routes: Array<[string, string, Body | undefined]> = [
    ['GET', `/api/v1/conversations/${id}`, undefined],
    ['PATCH', `/api/v1/conversations/${id}`, { title: 'mine now' }],
    ['DELETE', `/api/v1/conversations/${id}`, undefined],
    ['POST', `/api/v1/conversations/${id}/messages`, { query: 'And on Saturdays?' }],
    ['PUT', feedback, { rating: 'down' }],
    ['DELETE', feedback, undefined],
  ];
  for (const [method, path, body] of routes) {
    const response = await app.call(method, path, { key: other.key, ...(body ? { body } : {}) });
    t.is(response.status, 404, `${method} ${path}`);
    t.deepEqual(response.body, { error: { code: 'not_found', message: `conversation ${id} not found` } });
  }
  const streamed = await postForEvents(app.baseUrl, `/api/v1/conversations/${id}/messages`, {
    key: other.key,
    body: { query: 'And on Saturdays?' },
    headers: { accept: 'text/event-stream' },
  });
  t.is(streamed.status, 404);
  t.is(streamed.json.error.code, 'not_found');
  t.deepEqual((await app.call('GET', '/api/v1/conversations', { key: other.key })).body, { conversations: [] });
  // Untouched, for its user.
  const mine = await read(t, app, user, id);
  t.is(mine.messages.length, 2);
  t.is(mine.messages[1].feedback, null);
  t.is(mine.title, 'When does the ferry leave on weekdays?');
});

test('list: newest first by updated_at, paged with limit and cursor; rename and delete', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const ids: string[] = [];
  for (let index = 0; index < 3; index += 1) ids.push((await start(t, app, user, { title: `c${index}` })).id);
  // Renaming the oldest makes it the most recently updated.
  const renamed = await expectStatus(
    t,
    await app.call('PATCH', `/api/v1/conversations/${ids[0]}`, { key: user.key, body: { title: 'renamed' } }),
    200,
  );
  t.is(renamed.conversation.title, 'renamed');
  const all = (await app.call('GET', '/api/v1/conversations', { key: user.key })).body;
  t.deepEqual(
    all.conversations.map((conversation: Body) => conversation.id),
    [ids[0], ids[2], ids[1]],
  );
  t.false('next_cursor' in all);
  const first = (await app.call('GET', '/api/v1/conversations?limit=2', { key: user.key })).body;
  t.is(first.conversations.length, 2);
  t.truthy(first.next_cursor);
  const second = (await app.call('GET', `/api/v1/conversations?limit=2&cursor=${first.next_cursor}`, { key: user.key }))
    .body;
  t.deepEqual(
    second.conversations.map((conversation: Body) => conversation.id),
    [ids[1]],
  );
  t.is(second.next_cursor, null);
  t.is((await app.call('GET', '/api/v1/conversations?cursor=nope', { key: user.key })).status, 400);
  t.is(
    (await app.call('PATCH', `/api/v1/conversations/${ids[1]}`, { key: user.key, body: { title: '' } })).body.error
      .message,
    'title: must be 1–200 characters',
  );

  t.deepEqual((await app.call('DELETE', `/api/v1/conversations/${ids[1]}`, { key: user.key })).body, { deleted: true });
  t.is((await app.call('GET', `/api/v1/conversations/${ids[1]}`, { key: user.key })).status, 404);
  t.is((await app.call('DELETE', `/api/v1/conversations/${ids[1]}`, { key: user.key })).status, 404);
});

test('a share revoked mid-conversation: scoped is 403 and stores nothing, unscoped no longer searches it', async (t) => {
  const { app } = t.context;
  const { store } = app.deps;
  const owner = await makeUser(app.deps.store);
  const shared = await createKb(app, owner.key, 'Island guide');
  const ferry = await ingest(app, owner.key, shared, 'ferry.md', FERRY);
  const reader = await makeUser(app.deps.store);
  const ownerPrincipal = (await store.findUserByEmail(owner.email))!;
  const readerPrincipal = (await store.findUserByEmail(reader.email))!;
  const sharing = { ...app.deps.config.knowledgeBases.sharing, windowMs: app.deps.config.web.signIn.windowMs };
  await inviteToKnowledgeBase(store, sharing, ownerPrincipal, shared, reader.email);
  await acceptKnowledgeBaseShare(store, readerPrincipal, shared);

  const scoped = await start(t, app, reader, { knowledge_base_ids: [shared] });
  const unscoped = await start(t, app, reader);
  const question = { query: 'How much is an adult return ticket on the ferry?' };
  const scopedAnswer = await ask(t, app, reader, scoped.id, question);
  t.is(scopedAnswer.citations[0]?.document_id, ferry.id);
  const unscopedAnswer = await ask(t, app, reader, unscoped.id, question);
  t.true(unscopedAnswer.knowledge_base_ids.includes(shared));
  t.is(unscopedAnswer.citations[0]?.document_id, ferry.id);
  t.true((await read(t, app, reader, unscoped.id)).messages[1].citations[0].snippet.length > 0);

  await unshareKnowledgeBaseWithUser(store, ownerPrincipal, shared, reader.id);

  const refused = await app.call('POST', `/api/v1/conversations/${scoped.id}/messages`, {
    key: reader.key,
    body: { query: 'And for children?' },
  });
  t.is(refused.status, 403);
  t.deepEqual(refused.body, {
    error: { code: 'forbidden', message: `API key lacks access to knowledge base ${shared}` },
  });
  t.is((await read(t, app, reader, scoped.id)).messages.length, 2, 'the refused turn stored nothing');

  const after = await ask(t, app, reader, unscoped.id, { query: 'And for children?' });
  t.false(after.knowledge_base_ids.includes(shared), 'no longer searched');
  t.false(after.citations.some((citation: Body) => citation.document_id === ferry.id));

  // Read back, the citation from the KB no longer reachable keeps no snippet.
  const readBack = await read(t, app, reader, unscoped.id);
  t.is(readBack.messages[1].citations[0].document_id, ferry.id);
  t.is(readBack.messages[1].citations[0].snippet, null);
  t.is(readBack.messages[1].citations[0].title, 'ferry');
});

test('bounds: conversations per user (413 naming the limit), turns per conversation', async (t) => {
  const { app } = t.context;
  const { user } = await seeded(app);
  const variant = await serveVariant(app.deps, (config) => ({
    ...config,
    conversations: { maxPerUser: 2, maxTurns: 2 },
  }));
  try {
    const call = (method: string, path: string, body?: Body) =>
      callJson(variant.baseUrl, method, path, { key: user.key, ...(body ? { body } : {}) });
    const first = (await call('POST', '/api/v1/conversations', {})).body.conversation;
    t.is((await call('POST', '/api/v1/conversations', {})).status, 201);
    const third = await call('POST', '/api/v1/conversations', {});
    t.is(third.status, 413);
    t.deepEqual(third.body.error, {
      code: 'payload_too_large',
      message:
        'conversation limit reached: you have 2, the most one user may keep (2, KBQA_MAX_CONVERSATIONS_PER_USER); delete one first',
    });
    const path = `/api/v1/conversations/${first.id}/messages`;
    t.is((await call('POST', path, { query: 'When does the ferry leave on weekdays?' })).status, 200);
    t.is((await call('POST', path, { query: 'And on Saturdays?' })).status, 200);
    const full = await call('POST', path, { query: 'And on Sundays?' });
    t.is(full.status, 413);
    t.is(
      full.body.error.message,
      `conversation ${first.id} holds 2 turns, the most one conversation may (2, KBQA_MAX_TURNS_PER_CONVERSATION); start a new conversation`,
    );
    t.is((await call('GET', `/api/v1/conversations/${first.id}`)).body.conversation.messages.length, 4);
    // Deleting one makes room again.
    t.is((await call('DELETE', `/api/v1/conversations/${first.id}`)).status, 200);
    t.is((await call('POST', '/api/v1/conversations', {})).status, 201);
  } finally {
    await variant.close();
  }
});
