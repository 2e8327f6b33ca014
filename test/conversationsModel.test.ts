// A conversation with an OpenAI-compatible model (the fake server of helpers/fakeOpenAI.ts): the follow-up is
// condensed by the model from the history (LangChain's history-aware step) and that is what is searched; the answer
// prompt carries the previous turns, bounded.
import { makeUser } from './factories/accounts.ts';
import { testWithApp } from './helpers/app.ts';
import { ingest } from './helpers/documentsApi.ts';
import { answerModelsAt, startFakeOpenAI, type FakeOpenAI } from './helpers/fakeOpenAI.ts';
import { HISTORY_TURNS } from '../service/rag/conversationHistory.ts';

const CONDENSED = 'How much does a child pay for the ferry to Skerry Island?';

const test = testWithApp<{ fake: FakeOpenAI }>({
  env: async (t) => {
    t.context.fake = await startFakeOpenAI();
    t.context.fake.script({
      reply: (request) =>
        (request.body.messages ?? []).some((message) => message.content.startsWith('Follow-up question:'))
          ? CONDENSED
          : 'Children under twelve travel free [1].',
    });
    return answerModelsAt(t.context.fake, 'gpt-test', 10_000);
  },
});

test.after.always(async (t) => {
  await t.context.fake?.close();
});

test('the model condenses the follow-up from the history; the answer prompt carries the turns', async (t) => {
  const { app, fake } = t.context;
  const user = await makeUser(app.deps.store);
  const ferry = await ingest(
    app,
    user.key,
    user.defaultKnowledgeBaseId,
    'ferry.md',
    '# Skerry Island Ferry\n\nAn adult return ticket costs 12 euros. Children under twelve travel free, and bicycles cost 3 euros each way.',
  );
  const { id } = (await app.call('POST', '/api/v1/conversations', { key: user.key, body: {} })).body.conversation;
  const ask = async (query: string) => {
    const response = await app.call('POST', `/api/v1/conversations/${id}/messages`, {
      key: user.key,
      body: { query, model: 'gpt-test' },
    });
    t.is(response.status, 200, JSON.stringify(response.body));
    return response.body.message;
  };
  const first = await ask('How much is an adult return ticket on the ferry?');
  t.is(first.standalone_query, 'How much is an adult return ticket on the ferry?', 'nothing to condense on turn 1');
  t.is(fake.requests.length, 1, 'no condensing call on the first turn');

  fake.requests.length = 0;
  const second = await ask('And for children?');
  t.is(second.standalone_query, CONDENSED);
  t.is(second.citations[0]?.document_id, ferry.id);
  t.is(fake.requests.length, 2, 'one condensing call, one answer');
  const [condense, answer] = fake.requests;
  const roles = (request: typeof condense) => (request.body.messages ?? []).map((message) => message.role);
  t.deepEqual(roles(condense), ['system', 'user', 'assistant', 'user']);
  t.is(condense.body.messages![1].content, 'How much is an adult return ticket on the ferry?');
  t.is(condense.body.messages![2].content, first.answer);
  t.is(condense.body.messages![3].content, 'Follow-up question: And for children?');
  // The answer prompt: the system rules, the previous turn, then the passages and the question as asked.
  t.deepEqual(roles(answer), ['system', 'user', 'assistant', 'user']);
  t.is(answer.body.messages![1].content, 'How much is an adult return ticket on the ferry?');
  t.regex(answer.body.messages![3].content, /Question: And for children\?$/);

  // Bounded: after more turns than HISTORY_TURNS, the oldest no longer reaches the model.
  for (let turn = 0; turn < HISTORY_TURNS; turn += 1) await ask(`And bicycles, question ${turn}?`);
  const last = fake.requests.at(-1)!;
  t.is(roles(last).length, 2 + HISTORY_TURNS * 2);
  t.false(
    (last.body.messages ?? []).some(
      (message) => message.content === 'How much is an adult return ticket on the ferry?',
    ),
  );
});
