// `kbqa eval beir` on a 200-document slice of SciFact: it runs end to end against the real stack, produces sane
// numbers, and resumes (a second run ingests nothing). Quality targets live in the benchmarks, not here.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import anyTest, { type TestFn } from 'ava';
import { formatEvalTable, runEval } from '../service/cli/eval.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';

const test = anyTest as TestFn<{ app: TestApp; user: TestUser; knowledgeBaseIds: string[] }>;
const scifact = join(import.meta.dirname, '..', '..', 'shared', 'datasets', 'scifact');

test.before(async (t) => {
  t.context.app = await startTestApp();
  t.context.user = await makeUser(t.context.app.deps.store, { label: 'eval' });
  t.context.knowledgeBaseIds = [];
});

test.after.always(async (t) => {
  for (const id of t.context.knowledgeBaseIds) await t.context.app.deps.search.deleteChunksOfKnowledgeBase(id);
  await t.context.app?.close();
});

test.serial('eval on a 200-document slice produces sane metrics for every mode, and a re-run resumes', async (t) => {
  t.true(existsSync(join(scifact, 'corpus.jsonl')), `the SciFact dataset is expected at ${scifact} (shared/ beside the clone)`);
  const options = {
    directory: scifact,
    url: t.context.app.baseUrl,
    apiKey: t.context.user.key,
    ablate: true,
    split: 'test',
    limit: 200,
    concurrency: 4,
    quiet: true,
  };
  const first = await runEval(options);
  t.context.knowledgeBaseIds.push(first.knowledge_base_id);
  t.log(formatEvalTable(first));
  t.is(first.documents, 200);
  t.true(first.queries > 0);
  t.is(first.ingest.ingested, 200);
  t.true(first.ingest.chunks >= 200);
  t.deepEqual(Object.keys(first.modes).sort(), ['bm25', 'dense', 'hybrid']);
  for (const [mode, metrics] of Object.entries(first.modes)) {
    for (const value of [metrics.ndcg_at_10, metrics.recall_at_10, metrics.recall_at_50, metrics.mrr_at_10]) {
      t.true(value > 0 && value <= 1, `${mode}: ${value}`);
    }
    t.true(metrics.recall_at_50 >= metrics.recall_at_10, mode);
  }

  const second = await runEval({ ...options, ablate: false });
  t.is(second.knowledge_base_id, first.knowledge_base_id, 'the KB named after the dataset slice is reused');
  t.is(second.ingest.ingested, 0);
  t.is(second.ingest.skipped, 200);
  // Same index, same queries: the same quality (HNSW is approximate, and other files' writes may merge segments).
  t.true(Math.abs(second.modes.hybrid.ndcg_at_10 - first.modes.hybrid.ndcg_at_10) < 0.05);
});
