// An owner sees their KB's answer ratings in the web app (issue 33 §5): the counts and the questions rated down
// (question, standalone query, comment, when), from the turns that searched the KB; never who asked. Owner only:
// a reader of the KB is 403, anyone else 404 (policies/knowledgeBases.ts authorizeManage).
import { createApiKey } from '../service/commands/apiKeys.ts';
import { makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { testWithApp } from './helpers/app.ts';
import { ingest } from './helpers/documentsApi.ts';
import { WebClient } from './helpers/webClient.ts';

const test = testWithApp();

const FERRY =
  '# Ferry\n\nAn adult return ticket costs 12 euros. Children under twelve travel free, and bicycles cost 3 euros each way.';

async function signedIn(baseUrl: string, email: string): Promise<WebClient> {
  const client = new WebClient(baseUrl);
  await client.signIn(email, TEST_PASSWORD);
  return client;
}

async function ask(client: WebClient, conversationId: string, query: string) {
  const response = await client.call('POST', `/api/web/conversations/${conversationId}/messages`, { body: { query } });
  if (response.status !== 200) throw new Error(JSON.stringify(response.body));
  return response.body.message as { id: string; standalone_query: string; citations: Array<Record<string, unknown>> };
}

test('the owner sees counts and the questions rated down, never the asker; a reader is 403, others 404', async (t) => {
  const { app } = t.context;
  const { store } = app.deps;
  const owner = await makeWebUser(store, { label: 'owner' });
  const asker = await makeWebUser(store, { label: 'asker' });
  const stranger = await makeWebUser(store, { label: 'stranger' });
  const kb = owner.defaultKnowledgeBaseId;
  const { key } = await createApiKey(store, owner.email, 'ingest');
  await ingest(app, key, kb, 'ferry.md', FERRY);
  await store.addSharedUser(kb, asker.id, true);

  const askerWeb = await signedIn(app.baseUrl, asker.email);
  const created = await askerWeb.call('POST', '/api/web/conversations', { body: { knowledge_base_ids: [kb] } });
  t.is(created.status, 201);
  const conversationId = created.body.conversation.id as string;
  const first = await ask(askerWeb, conversationId, 'How much is an adult return ticket on the ferry?');
  // The web realm's answers carry a citation's pages, as its /query does.
  t.true(first.citations.length > 0 && 'page_start' in first.citations[0], JSON.stringify(first.citations));
  const second = await ask(askerWeb, conversationId, 'And for children?');
  const rate = (messageId: string, body: object) =>
    askerWeb.call('PUT', `/api/web/conversations/${conversationId}/messages/${messageId}/feedback`, { body });
  t.is((await rate(first.id, { rating: 'up' })).status, 200);
  t.is((await rate(second.id, { rating: 'down', comment: 'It did not say the bicycle fare' })).status, 200);

  // A rating of a turn that did not search the KB is not the owner's to see.
  const elsewhere = await askerWeb.call('POST', '/api/web/conversations', {
    body: { knowledge_base_ids: [asker.defaultKnowledgeBaseId] },
  });
  const unrelated = await ask(askerWeb, elsewhere.body.conversation.id, 'What is in my own notes?');
  t.is(
    (
      await askerWeb.call(
        'PUT',
        `/api/web/conversations/${elsewhere.body.conversation.id}/messages/${unrelated.id}/feedback`,
        { body: { rating: 'down', comment: 'private-comment' } },
      )
    ).status,
    200,
  );

  const ownerWeb = await signedIn(app.baseUrl, owner.email);
  const seen = await ownerWeb.call('GET', `/api/web/knowledge-bases/${kb}/ratings`);
  t.is(seen.status, 200, JSON.stringify(seen.body));
  t.is(seen.body.ratings.up, 1);
  t.is(seen.body.ratings.down, 1);
  t.is(seen.body.ratings.down_rated.length, 1);
  const [downRated] = seen.body.ratings.down_rated;
  t.deepEqual(Object.keys(downRated).sort(), ['comment', 'question', 'rated_at', 'standalone_query']);
  t.like(downRated, {
    question: 'And for children?',
    standalone_query: second.standalone_query,
    comment: 'It did not say the bicycle fare',
  });
  t.regex(downRated.rated_at, /^\d{4}-\d{2}-\d{2}T/);
  const text = JSON.stringify(seen.body);
  for (const secret of [asker.id, asker.email, conversationId, second.id, 'private-comment'])
    t.false(text.includes(secret), `the body names nothing of the asker: ${secret}`);

  // A reader of the KB (the asker) is refused; a stranger is told it does not exist; /api/v1 has no such route.
  const reader = await askerWeb.call('GET', `/api/web/knowledge-bases/${kb}/ratings`);
  t.is(reader.status, 403);
  t.is(reader.body.error.code, 'forbidden');
  const strangerWeb = await signedIn(app.baseUrl, stranger.email);
  const other = await strangerWeb.call('GET', `/api/web/knowledge-bases/${kb}/ratings`);
  t.is(other.status, 404);
  t.is(other.body.error.code, 'not_found');
  t.is((await app.call('GET', `/api/v1/knowledge-bases/${kb}/ratings`, { key })).status, 404);

  // The asker's own KB: its owner (the asker) sees the unrelated rating there, and only that one.
  const own = await askerWeb.call('GET', `/api/web/knowledge-bases/${asker.defaultKnowledgeBaseId}/ratings`);
  t.like(own.body.ratings, { up: 0, down: 1 });
});

test('a KB nobody rated answers from: zero counts and an empty list', async (t) => {
  const { app } = t.context;
  const owner = await makeWebUser(app.deps.store, { label: 'quiet' });
  const web = await signedIn(app.baseUrl, owner.email);
  const seen = await web.call('GET', `/api/web/knowledge-bases/${owner.defaultKnowledgeBaseId}/ratings`);
  t.deepEqual(seen.body, { ratings: { up: 0, down: 0, down_rated: [] } });
});
