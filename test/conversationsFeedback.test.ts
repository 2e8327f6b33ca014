// Feedback becomes evaluation: `kbqa feedback export` writes the rated answers as JSONL (filtered by KB, date and
// rating; never who asked), and /metrics counts ratings per model with no text and no ids.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { makeUser } from './factories/accounts.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';

const test = testWithApp();
const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));

async function kbqa(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['bin/kbqa.mjs', ...args], {
      cwd: ROOT,
      env: process.env,
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

async function turn(app: TestApp, key: string, conversationId: string, query: string) {
  const response = await app.call('POST', `/api/v1/conversations/${conversationId}/messages`, {
    key,
    body: { query },
  });
  if (response.status !== 200) throw new Error(JSON.stringify(response.body));
  return response.body.message as { id: string; answer: string; standalone_query: string };
}

test('kbqa feedback export: JSONL of rated answers, filtered by --kb, --since and --rating; /metrics counts ratings', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = await createKb(app, user.key, 'Ferry');
  await ingest(
    app,
    user.key,
    kb,
    'ferry.md',
    '# Ferry\n\nAn adult return ticket costs 12 euros. Children under twelve travel free, and bicycles cost 3 euros each way.',
  );
  const other = user.defaultKnowledgeBaseId;
  await ingest(app, user.key, other, 'bees.md', 'Keeping bees on a city rooftop needs a permit from the borough.');

  const ferryConversation = (
    await app.call('POST', '/api/v1/conversations', { key: user.key, body: { knowledge_base_ids: [kb] } })
  ).body.conversation.id;
  const first = await turn(app, user.key, ferryConversation, 'How much is an adult return ticket on the ferry?');
  const second = await turn(app, user.key, ferryConversation, 'And for children?');
  const beesConversation = (
    await app.call('POST', '/api/v1/conversations', { key: user.key, body: { knowledge_base_ids: [other] } })
  ).body.conversation.id;
  const bees = await turn(app, user.key, beesConversation, 'What does keeping bees on a rooftop need?');
  const rate = (conversation: string, message: string, body: object) =>
    app.call('PUT', `/api/v1/conversations/${conversation}/messages/${message}/feedback`, { key: user.key, body });
  t.is((await rate(ferryConversation, first.id, { rating: 'up' })).status, 200);
  t.is((await rate(ferryConversation, second.id, { rating: 'down', comment: 'Bicycles?' })).status, 200);
  t.is((await rate(beesConversation, bees.id, { rating: 'down', comment: 'secret-comment-text' })).status, 200);

  const all = await kbqa('feedback', 'export');
  t.is(all.code, 0, all.stderr);
  const lines = all.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  t.is(lines.length, 3);
  t.deepEqual(Object.keys(lines[1]).sort(), [
    'answer',
    'citations',
    'comment',
    'knowledge_base_ids',
    'model',
    'question',
    'rated_at',
    'rating',
    'standalone_query',
  ]);
  t.like(lines[1], {
    question: 'And for children?',
    standalone_query: second.standalone_query,
    answer: second.answer,
    rating: 'down',
    comment: 'Bicycles?',
    model: 'kbqa-extractive',
    knowledge_base_ids: [kb],
  });
  t.false(all.stdout.includes(user.id), 'never who asked');

  const dir = mkdtempSync(join(tmpdir(), 'kbqa-feedback-'));
  try {
    const out = join(dir, 'down.jsonl');
    const down = await kbqa('feedback', 'export', '--kb', kb, '--rating', 'down', '--out', out);
    t.is(down.code, 0, down.stderr);
    const exported = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    t.deepEqual(
      exported.map((line) => line.question),
      ['And for children?'],
    );
    t.is(statSync(out).mode & 0o777, 0o600);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const later = await kbqa('feedback', 'export', '--since', '2999-01-01');
  t.is(later.stdout.trim(), '');
  const badRating = await kbqa('feedback', 'export', '--rating', 'meh');
  t.is(badRating.code, 2);
  t.regex(badRating.stderr, /--rating meh: give up or down/);

  const scraped = await app.deps.metrics.scrape();
  t.regex(scraped, /kbqa_answer_ratings_total\{model="kbqa-extractive",rating="down"\} 2/);
  t.regex(scraped, /kbqa_answer_ratings_total\{model="kbqa-extractive",rating="up"\} 1/);
  t.false(scraped.includes('secret-comment-text'));
  t.false(scraped.includes(bees.id));
});
