// `kbqa eval beir` on the project's own fixture corpus written out in BEIR layout (test/helpers/fixtureBeir.ts): it
// runs end to end against the real stack, produces sane numbers, and resumes (a second run ingests nothing). Nothing
// outside the repository is read; the benchmarks (bench/) are where the SciFact quality targets live.
import anyTest, { type TestFn } from 'ava';
import { formatEvalTable, runEval } from '../service/cli/eval.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { buildFixtureBeir, FIXTURE_BEIR_NAME, type FixtureBeir } from './helpers/fixtureBeir.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';

const test = anyTest as TestFn<{ app: TestApp; user: TestUser; dataset: FixtureBeir; knowledgeBaseIds: string[] }>;

test.before(async (t) => {
  t.context.knowledgeBaseIds = [];
  t.context.dataset = await buildFixtureBeir('test');
  t.context.app = await startTestApp();
  t.context.user = await makeUser(t.context.app.deps.store, { label: 'eval' });
});

test.after.always(async (t) => {
  for (const id of t.context.knowledgeBaseIds) await t.context.app.deps.search.deleteChunksOfKnowledgeBase(id);
  await t.context.app?.close();
  await t.context.dataset?.cleanup();
});

test.serial('eval on the fixture corpus produces sane metrics for every mode, and a re-run resumes', async (t) => {
  const { dataset } = t.context;
  const documents = dataset.documentIds.length;
  t.true(documents >= 32, `the fixture corpus has ${documents} documents`);
  t.true(dataset.queries >= 36, `the fixture questions give ${dataset.queries} queries`);
  const options = {
    directory: dataset.directory,
    url: t.context.app.baseUrl,
    apiKey: t.context.user.key,
    ablate: true,
    split: dataset.split,
    concurrency: 4,
    quiet: true,
  };
  const first = await runEval(options);
  t.context.knowledgeBaseIds.push(first.knowledge_base_id);
  t.log(formatEvalTable(first));
  t.is(first.dataset, FIXTURE_BEIR_NAME);
  t.is(first.documents, documents);
  t.is(first.queries, dataset.queries, 'every question with an expected document is judged');
  t.is(first.ingest.ingested, documents);
  t.is(first.ingest.skipped, 0);
  t.true(first.ingest.chunks >= documents);
  t.deepEqual(Object.keys(first.modes).sort(), ['bm25', 'dense', 'hybrid']);
  for (const [mode, metrics] of Object.entries(first.modes)) {
    for (const value of [metrics.ndcg_at_10, metrics.recall_at_10, metrics.recall_at_50, metrics.mrr_at_10]) {
      t.true(value > 0 && value <= 1, `${mode}: ${value}`);
    }
    t.true(metrics.recall_at_50 >= metrics.recall_at_10, mode);
  }
  // A quality floor, with margin: the fixture questions were written for this corpus, and every mode measured 1.000
  // Recall@10 (hybrid and dense nDCG@10 1.000, BM25 0.994) when this was written.
  t.true(first.modes.hybrid.recall_at_10 >= 0.9, `hybrid Recall@10 ${first.modes.hybrid.recall_at_10}`);
  t.true(first.modes.hybrid.ndcg_at_10 >= 0.8, `hybrid nDCG@10 ${first.modes.hybrid.ndcg_at_10}`);
  for (const mode of ['bm25', 'dense']) t.true(first.modes[mode].recall_at_10 >= 0.75, `${mode} Recall@10 ${first.modes[mode].recall_at_10}`);

  const second = await runEval({ ...options, ablate: false });
  t.log(formatEvalTable(second));
  t.is(second.knowledge_base_id, first.knowledge_base_id, 'the KB named after the dataset is reused');
  t.is(second.ingest.ingested, 0);
  t.is(second.ingest.skipped, documents);
  t.is(second.ingest.chunks, 0);
  // Same index, same queries: the same quality (HNSW is approximate, and other files' writes may merge segments).
  t.true(Math.abs(second.modes.hybrid.ndcg_at_10 - first.modes.hybrid.ndcg_at_10) < 0.05);
});
