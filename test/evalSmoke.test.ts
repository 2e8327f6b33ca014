// `kbqa eval beir` on the project's own fixture corpus written out in BEIR layout (test/helpers/fixtureBeir.ts): it
// runs end to end against the real stack, produces sane numbers, and resumes (a second run ingests nothing). Nothing
// outside the repository is read; the benchmarks (bench/) are where the SciFact quality targets live.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  formatEvalTable,
  formatSweepTable,
  runEval,
  runEvalCommand,
  runSweep,
  type EvalResult,
  type SweepResult,
} from '../service/cli/eval.ts';
import { parseSweep } from '../service/eval/sweep.ts';
import { testWithApp } from './helpers/app.ts';
import { buildFixtureBeir, FIXTURE_BEIR_NAME, type FixtureBeir } from './helpers/fixtureBeir.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';

const test = testWithApp<{
  user: TestUser;
  dataset: FixtureBeir;
  knowledgeBaseIds: string[];
  runs: { first?: EvalResult };
}>({
  beforeClose: async (t) => {
    for (const id of t.context.knowledgeBaseIds ?? []) await t.context.app.deps.search.deleteChunksOfKnowledgeBase(id);
  },
});

test.before(async (t) => {
  t.context.knowledgeBaseIds = [];
  t.context.runs = {}; // shared by the serial tests (ava copies the context object itself per test)
  t.context.dataset = await buildFixtureBeir('test');
  t.context.user = await makeUser(t.context.app.deps.store, { label: 'eval' });
});

test.after.always(async (t) => {
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
  t.context.runs.first = first;
  t.log(formatEvalTable(first));
  t.is(first.dataset, FIXTURE_BEIR_NAME);
  t.is(first.documents, documents);
  t.is(first.queries, dataset.queries, 'every question with an expected document is judged');
  t.is(first.ingest.ingested, documents);
  t.is(first.ingest.skipped, 0);
  t.is(first.config.sentence_vectors, 'separate', 'the recipe the results were made with, by name');
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
  for (const mode of ['bm25', 'dense'])
    t.true(first.modes[mode].recall_at_10 >= 0.75, `${mode} Recall@10 ${first.modes[mode].recall_at_10}`);
  // The answers of the same responses: what was cited first, against retrieval's own first document.
  const answers = first.answers;
  t.is(answers?.queries, dataset.queries);
  t.true(
    (answers?.citations ?? 0) >= dataset.queries - (answers?.uncited_queries ?? 0),
    'a cited answer cites at least one passage',
  );
  for (const value of [answers?.first_citation_relevant, answers?.retrieval_p_at_1, answers?.citation_precision])
    t.true(value !== undefined && value > 0 && value <= 1, String(value));
  // The fixture questions name their document: retrieval ranks it first, and the answer cites it first, for nearly all
  // (the right document cited first for 64/64 fixture questions is issue 23's bar).
  t.true((answers?.first_citation_relevant ?? 0) >= 0.9, `first citation relevant ${answers?.first_citation_relevant}`);
  t.true((answers?.retrieval_p_at_1 ?? 0) >= 0.9, `P@1 ${answers?.retrieval_p_at_1}`);
  t.true(formatEvalTable(first).includes('first citation relevant'));

  const second = await runEval({ ...options, ablate: false });
  t.log(formatEvalTable(second));
  t.is(second.knowledge_base_id, first.knowledge_base_id, 'the KB named after the dataset is reused');
  t.is(second.ingest.ingested, 0);
  t.is(second.ingest.skipped, documents);
  t.is(second.ingest.chunks, 0);
  // Same index, same queries: the same quality (HNSW is approximate, and segments may merge between the runs).
  t.true(Math.abs(second.modes.hybrid.ndcg_at_10 - first.modes.hybrid.ndcg_at_10) < 0.05);
});

test.serial(
  '--sweep: one row per grid point and the single sides, the best marked, duplicates reused, impossible depths skipped, JSON written',
  async (t) => {
    const { dataset } = t.context;
    // 2 fusions × 2 rank constants × 2 k-NN depths: min_max ignores the rank constant (measured once), and a k-NN
    // side deeper than the BM25 side's 50 cannot be asked for (skipped).
    const parsed = parseSweep(['fusion=rrf,min_max', 'rrf_rank_constant=5,20', 'knn_depth=50,60']);
    if (!('grid' in parsed)) return t.fail(parsed.problem);
    t.is(parsed.grid.length, 8);
    const out = join(dataset.directory, 'sweep.json');
    const result: SweepResult = await runSweep({
      directory: dataset.directory,
      url: t.context.app.baseUrl,
      apiKey: t.context.user.key,
      split: dataset.split,
      concurrency: 4,
      quiet: true,
      grid: parsed.grid,
      out,
    });
    t.context.knowledgeBaseIds.push(result.knowledge_base_id);
    const table = formatSweepTable(result);
    t.log(table);
    t.is(result.queries, dataset.queries);
    t.is(result.embedding.queries, dataset.queries, 'each query embedded once');
    t.is(result.rows.length, 8);
    t.deepEqual(
      result.rows.map((row) => row.params),
      parsed.grid.map((point) => point.values),
      'rows in the order given',
    );
    const tableRows = table.split('\n').filter((line) => /^\| \d+ \|/.test(line));
    t.is(tableRows.length, 8, 'one table row per grid point');
    t.true(table.includes('| bm25 only |') && table.includes('| dense only |'));

    const skipped = result.rows.filter((row) => row.skipped);
    t.deepEqual(
      skipped.map((row) => row.params.knn_depth),
      ['60', '60', '60', '60'],
    );
    t.true(
      skipped.every(
        (row) => row.metrics === null && row.config.knn_depth === 60 && /pagination_depth/.test(row.skipped ?? ''),
      ),
    );
    const minMax = result.rows.filter((row) => row.params.fusion === 'min_max' && !row.skipped);
    t.is(minMax.length, 2);
    t.is(minMax[1].same_as, result.rows.indexOf(minMax[0]) + 1, 'min_max with another rank constant is the same point');
    t.deepEqual(minMax[1].metrics, minMax[0].metrics);
    for (const row of result.rows.filter((candidate) => candidate.metrics)) {
      const metrics = row.metrics as NonNullable<typeof row.metrics>;
      for (const value of [metrics.ndcg_at_10, metrics.recall_at_10, metrics.recall_at_50, metrics.mrr_at_10])
        t.true(value > 0 && value <= 1, `${JSON.stringify(row.params)}: ${value}`);
      t.is(row.config.bm25_depth, 50);
    }
    const best = Math.max(...result.rows.map((row) => row.metrics?.ndcg_at_10 ?? 0));
    t.true(
      result.rows.some((row) => row.best) &&
        result.rows.every((row) => row.best === (row.metrics !== null && row.metrics.ndcg_at_10 === best)),
    );
    t.true(
      tableRows.some((line) => line.includes(`${best.toFixed(3)}*`)),
      'the best nDCG@10 is marked',
    );
    for (const side of [result.reference.bm25, result.reference.dense])
      t.true(side.ndcg_at_10 > 0 && side.recall_at_10 >= 0.75);

    // The configured point (RRF 5, 0.3:0.7, 50/50, sentence weight 0.5) measured through the search module matches the API's hybrid.
    const configuredRow = result.rows.find(
      (row) => row.params.fusion === 'rrf' && row.params.rrf_rank_constant === '5' && row.params.knn_depth === '50',
    );
    const apiHybrid = t.context.runs.first?.modes.hybrid;
    t.truthy(configuredRow?.metrics && apiHybrid);
    t.true(Math.abs((configuredRow?.metrics?.ndcg_at_10 ?? 0) - (apiHybrid?.ndcg_at_10 ?? 1)) < 0.05);

    t.true(existsSync(out));
    const written = JSON.parse(readFileSync(out, 'utf8')) as SweepResult;
    t.is(written.kind, 'sweep');
    t.is(written.rows.length, 8);
    t.deepEqual(written.rows[0].config, {
      fusion: 'rrf',
      rrf_rank_constant: 5,
      weights: [0.3, 0.7],
      bm25_depth: 50,
      knn_depth: 50,
      bm25_fields: 'text:title',
      sentence_weight: 0.5,
    });
  },
);

test.serial('--sweep over an ingest-time knob exits 2 saying it needs re-ingesting (a migration) first', async (t) => {
  const errors: string[] = [];
  const original = console.error;
  console.error = (...parts: unknown[]) => errors.push(parts.map(String).join(' '));
  let code: number;
  try {
    code = await runEvalCommand('beir', [t.context.dataset.directory], {
      sweep: ['weights=0.5:0.5', 'chunk_tokens=128,256'],
      'api-key': t.context.user.key,
      url: t.context.app.baseUrl,
    });
  } finally {
    console.error = original;
  }
  t.is(code, 2);
  t.regex(errors.join('\n'), /chunk_tokens is an ingest-time knob.*KBQA_CHUNK_TOKENS.*kbqa index migrate/);
});
