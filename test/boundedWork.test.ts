// Issue 8 §4: work per request is bounded in bytes, not only in tokens, and CPU-bound work on user content does
// not run on the event loop.
import { resolveSearchedKnowledgeBases } from '../service/commands/answerQuestion.ts';
import { newKnowledgeBaseRecord } from '../service/commands/knowledgeBases.ts';
import { openStore } from '../service/store/index.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { testWithApp } from './helpers/app.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';

const test = testWithApp<{ user: TestUser }>();

test.before(async (t) => {
  t.context.user = await makeUser(t.context.app.deps.store, { label: 'bounded' });
});

test('a 1 MB document of 200 "words" of 5,000 characters becomes chunks of at most KBQA_CHUNK_MAX_CHARS characters', async (t) => {
  const { app, user } = t.context;
  const maxChars = app.deps.config.chunking.maxChars;
  const kb = await createKb(app, user.key, 'long words');
  const words = Array.from({ length: 200 }, (_, index) =>
    `${String.fromCharCode(97 + (index % 26))}${index}`.padEnd(5000, String.fromCharCode(97 + ((index * 7) % 26))),
  );
  const content = words.join(' ');
  t.true(content.length >= 1_000_000);
  const document = await ingest(app, user.key, kb, 'words.txt', content);
  t.true(document.chunks > 100, `${document.chunks} chunks`);

  const response = await fetch(`${app.baseUrl}/api/v1/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'a0aaaa', knowledge_base_ids: [kb], include_chunks: true, max_results: 50 }),
  });
  const text = await response.text();
  t.is(response.status, 200);
  const body = JSON.parse(text);
  t.is(body.chunks.length, 50);
  for (const chunk of body.chunks) t.true(chunk.text.length <= maxChars, `${chunk.text.length} characters`);
  // 50 chunks of at most 4 KiB, with their metadata: the response is bounded (it was 1.2 MB for one chunk before).
  t.true(Buffer.byteLength(text) <= 50 * (maxChars + 1024), `${Buffer.byteLength(text)} bytes`);
});

test('splitting a 1 MiB document runs off the event loop: /healthz answers while it splits', async (t) => {
  const { app } = t.context;
  const sentence = 'The quick brown fox jumps over the lazy dog near the river bank on a sunny day, number ';
  const content = Array.from({ length: 12_000 }, (_, index) => `${sentence}${index}.`).join(' ');
  t.true(content.length >= 1024 * 1024);
  const order: string[] = [];
  let ticks = 0;
  const timer = setInterval(() => (ticks += 1), 1);
  const splitting = app.deps.rag.split(content, 'big.md').then((result) => {
    order.push('split');
    return result;
  });
  // Let the task reach the worker, then ask the server something while the split is (still) running.
  await new Promise((resolve) => setImmediate(resolve));
  const health = await fetch(`${app.baseUrl}/healthz`);
  order.push('healthz');
  const result = await splitting;
  clearInterval(timer);
  t.is(health.status, 200);
  t.deepEqual(order, ['healthz', 'split'], 'the health check was answered before the split finished');
  t.true(ticks >= 20, `the event loop ran ${ticks} timer callbacks during the split`);
  t.true(result.segments.length > 100);
});

test('a query naming 100 knowledge bases resolves them in one store round trip, and is answered', async (t) => {
  const { app, user } = t.context;
  const ids: string[] = [];
  for (let index = 0; index < 99; index += 1) {
    const record = newKnowledgeBaseRecord(user.id, `many ${index}`, '', false);
    await app.deps.store.insertKnowledgeBase(record);
    ids.push(record._id);
  }
  ids.push(user.defaultKnowledgeBaseId);
  // Resolving the 100 ids is one round trip to the store, not one per id.
  const commands: string[] = [];
  const counted = await openStore(app.deps.config.mongodb.url, app.deps.config.mongodb.timeoutMs, {
    onCommand: (name) => commands.push(name),
  });
  try {
    commands.length = 0;
    const resolved = await resolveSearchedKnowledgeBases(
      counted,
      { _id: user.id, email: user.email, organisation_id: null },
      ids,
      100,
    );
    t.is(resolved.length, 100);
    t.deepEqual(commands, ['find'], `store commands: ${commands.join(', ')}`);
  } finally {
    await counted.close();
  }
  const response = await app.call('POST', '/api/v1/query', {
    key: user.key,
    body: { query: 'anything at all', knowledge_base_ids: ids },
  });
  t.is(response.status, 200, JSON.stringify(response.body));
  t.is(response.body.knowledge_base_ids.length, 100);
  // One unreachable id among them: 403 naming it.
  const stranger = await makeUser(app.deps.store, { label: 'bounded-stranger' });
  const denied = await app.call('POST', '/api/v1/query', {
    key: user.key,
    body: {
      query: 'anything',
      knowledge_base_ids: [...ids.slice(0, 50), stranger.defaultKnowledgeBaseId, ...ids.slice(50, 99)],
    },
  });
  t.is(denied.status, 403);
  t.is(denied.body.error.message, `API key lacks access to knowledge base ${stranger.defaultKnowledgeBaseId}`);
});
