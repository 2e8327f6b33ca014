// A migration from bge-small-en-v1.5 to the OpenAI-compatible embedder (the local stand-in, test/helpers/fakeOpenAI.ts),
// against the real OpenSearch and FerretDB: the API serves bge with the OpenAI embedder configured beside it (as a
// deployment about to switch does); `kbqa index migrate` runs in-process with KBQA_EMBEDDER=openai (as the CLI's
// process would) while a query loop runs through the API the whole time, then `kbqa index rollback`. Along the way:
// the relevance floor follows the embedder that made the question's vector (KBQA_RELEVANCE_FLOOR for bge,
// KBQA_OPENAI_RELEVANCE_FLOOR for the OpenAI one), and an API whose live index was built by an embedder it is not
// configured with answers 503 naming what to set, and is not ready.
//
// Scope: an alias of its own (KBQA_CHUNKS_ALIAS=kbqa-chunks-<name>), so its indices never sit behind the default
// alias; they and the alias's template are deleted at the end. One serial test: each step needs the last.
import { randomUUID } from 'node:crypto';
import { NOTHING_RELEVANT_ANSWER, relevanceFloorFor } from '../service/commands/answerQuestion.ts';
import { migrateIndex } from '../service/operations/indexMigration/migrate.ts';
import type { IndexMigrationDeps } from '../service/operations/indexMigration/plan.ts';
import { useIndex } from '../service/operations/indexMigration/swap.ts';
import { loadConfig, type Config } from '../service/config.ts';
import { ConfigError, EmbedderNotConfiguredError, UpstreamUnavailableError } from '../service/errors.ts';
import { BGE_SMALL_EN } from '../service/rag/embedderIdentity.ts';
import { loadRag } from '../service/rag/index.ts';
import { CHUNKS_ALIAS, loadSearchAssets } from '../service/search/assets.ts';
import { createSearchClient } from '../service/search/client.ts';
import { openConfiguredSearchIndex } from '../service/search/index.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { serveVariant, startTestApp, testWithDatabase, type TestApp } from './helpers/app.ts';
import { until } from './helpers/apiProcess.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fakeOpenAI.ts';
import { callJson, type CallResult } from './helpers/http.ts';
import { capturingLogger } from './helpers/logCapture.ts';

const test = testWithDatabase();
const opensearchUrl = process.env.KBQA_OPENSEARCH_URL?.split(',')[0] ?? 'http://127.0.0.1:9200';

const OPENAI_EMBEDDER = 'openai-text-embedding-3-small';

const DOCUMENTS = {
  lighthouse: {
    filename: 'lighthouse.md',
    content:
      '# Corran Point lighthouse\n\nThe Corran Point lighthouse was automated in 1987. Its keepers left the island that spring, and the lamp now turns by itself.',
    question: 'When was the Corran Point lighthouse automated?',
  },
  bakery: {
    filename: 'bakery.md',
    content:
      '# Sourdough bakery\n\nThe sourdough bakery on Mill Lane bakes rye loaves every morning at five. Its starter is fed with flour and water twice a day.',
    question: 'When does the sourdough bakery on Mill Lane bake rye loaves?',
  },
  orchard: {
    filename: 'orchard.md',
    content:
      '# Cider orchard\n\nThe cider orchard grows forty apple trees. Apples are pressed in October, and the cider rests in oak barrels through winter.',
    question: 'When are the apples of the cider orchard pressed?',
  },
  observatory: {
    filename: 'observatory.md',
    content:
      '# Hilltop observatory\n\nThe hilltop observatory opens its telescope to visitors on clear Friday nights. The dome faces the northern sky.',
    question: 'When does the hilltop observatory open its telescope to visitors?',
  },
};

/** Ingested after the alias moved to the OpenAI index. */
const GLASSWORKS = {
  filename: 'glassworks.md',
  content:
    '# Glassworks\n\nThe glassworks furnace on Quay Street melts sand and soda ash for blown glass vases every Tuesday.',
  question: 'What does the glassworks furnace on Quay Street melt for blown glass vases?',
};

const name = `emb${randomUUID().replaceAll('-', '').slice(0, 10)}`;
const alias = `${CHUNKS_ALIAS}-${name}`;
/** The current chunk template's version: a fresh alias's indices are built with it. */
const VERSION = loadSearchAssets().version;
const bgeIndex = `${CHUNKS_ALIAS}-v${VERSION}-${name}-${BGE_SMALL_EN.modelName}`;
const openaiIndex = `${CHUNKS_ALIAS}-v${VERSION}-${name}-${OPENAI_EMBEDDER}`;

/** Deletes the alias's indices and its template (cleanup, whatever the test left). */
async function removeFamily(): Promise<void> {
  const client = createSearchClient({ nodes: [opensearchUrl], timeoutMs: 30_000 });
  try {
    await client.request('DELETE', `/${CHUNKS_ALIAS}-v*-${name}-*`, { acceptStatuses: [404] });
    await client.request('DELETE', `/_index_template/${CHUNKS_ALIAS}-v${VERSION}-${name}`, { acceptStatuses: [404] });
  } finally {
    await client.close();
  }
}

/** The concrete indices behind the alias, straight from OpenSearch. */
async function aliasTargets(app: TestApp): Promise<string[]> {
  const body = await app.deps.search.request<Record<string, unknown> & { status?: number }>('GET', `/_alias/${alias}`, {
    acceptStatuses: [404],
  });
  if (!body || body.status === 404) return [];
  return Object.keys(body).sort();
}

/** Distinct documents and chunks of one KB in one concrete index. */
async function indexCounts(app: TestApp, index: string, kb: string): Promise<{ documents: number; chunks: number }> {
  await app.deps.search.request('POST', `/${index}/_refresh`, { idempotent: true });
  const body = await app.deps.search.request<{
    hits: { total: { value: number } };
    aggregations: { documents: { value: number } };
  }>('POST', `/${index}/_search`, {
    body: {
      size: 0,
      track_total_hits: true,
      query: { term: { knowledge_base_id: kb } },
      aggs: { documents: { cardinality: { field: 'document_id' } } },
    },
  });
  return { documents: body.aggregations.documents.value, chunks: body.hits.total.value };
}

const ask = (baseUrl: string, user: TestUser, kb: string, question: string): Promise<CallResult> =>
  callJson(baseUrl, 'POST', '/api/v1/query', {
    key: user.key,
    body: { query: question, knowledge_base_ids: [kb], max_results: 4 },
  });

const citedDocuments = (response: CallResult): string[] => [
  ...new Set(
    ((response.body?.citations ?? []) as Array<{ document_id: string }>).map((citation) => citation.document_id),
  ),
];

/** The question's answer under each floor setting, through a variant of the app (same stores, models, index). */
async function answersUnderFloors(
  app: TestApp,
  user: TestUser,
  kb: string,
  question: string,
): Promise<{ bgeFloorHigh: string; openaiFloorHigh: string }> {
  const answer = async (retrieval: Partial<Config['retrieval']>) => {
    const variant = await serveVariant(app.deps, (config) => ({
      ...config,
      retrieval: { ...config.retrieval, ...retrieval },
    }));
    try {
      const response = await ask(variant.baseUrl, user, kb, question);
      if (response.status !== 200) throw new Error(`${response.status} ${JSON.stringify(response.body)}`);
      return response.body.answer as string;
    } finally {
      await variant.close();
    }
  };
  return {
    bgeFloorHigh: await answer({ relevanceFloor: 0.99 }),
    openaiFloorHigh: await answer({ openaiRelevanceFloor: 0.99 }),
  };
}

test('the relevance floor is per embedder: KBQA_RELEVANCE_FLOOR for bge, KBQA_OPENAI_RELEVANCE_FLOOR (default 0) for the OpenAI one', (t) => {
  const defaults = loadConfig({}).retrieval;
  t.deepEqual(defaults, { relevanceFloor: 0.6, openaiRelevanceFloor: 0, answerMinSupport: 0.25 });
  t.is(relevanceFloorFor(defaults, BGE_SMALL_EN.modelName), 0.6);
  t.is(relevanceFloorFor(defaults, OPENAI_EMBEDDER), 0);
  const measured = loadConfig({ KBQA_RELEVANCE_FLOOR: '0.55', KBQA_OPENAI_RELEVANCE_FLOOR: '0.3' }).retrieval;
  t.is(relevanceFloorFor(measured, BGE_SMALL_EN.modelName), 0.55);
  t.is(relevanceFloorFor(measured, 'openai-text-embedding-3-large-256'), 0.3);
  t.throws(() => loadConfig({ KBQA_OPENAI_RELEVANCE_FLOOR: '1.5' }), {
    instanceOf: ConfigError,
    message: /KBQA_OPENAI_RELEVANCE_FLOOR/,
  });
});

test('an embedder this process is not configured with is a 503 (server_error) naming what to set, not a 500', (t) => {
  const error = new EmbedderNotConfiguredError(OPENAI_EMBEDDER, [BGE_SMALL_EN.modelName]);
  t.true(error instanceof UpstreamUnavailableError);
  t.like(error, {
    status: 503,
    code: 'server_error',
    upstream: 'embedder',
    embedder: OPENAI_EMBEDDER,
    name: 'EmbedderNotConfiguredError',
  });
  t.regex(error.message, /set KBQA_OPENAI_BASE_URL and KBQA_OPENAI_EMBEDDING_MODEL/);
});

test.serial(
  'a migration to the stand-in OpenAI embedder under a query loop: no failed query, a 1536-dimension index, its floor, rollback',
  async (t) => {
    t.timeout(180_000);
    const started = performance.now();
    const fake: FakeOpenAI = await startFakeOpenAI();
    // The API: bge selected (KBQA_EMBEDDER left alone), the OpenAI-compatible embedder configured beside it.
    const environment = {
      KBQA_CHUNKS_ALIAS: alias,
      KBQA_OPENAI_BASE_URL: fake.baseUrl,
      KBQA_OPENAI_API_KEY: 'test-key',
      KBQA_OPENAI_EMBEDDING_MODEL: 'text-embedding-3-small',
      // The base URL offers LLM answers too; this test's answers are extractive (no chat requests to script).
      KBQA_DEFAULT_MODEL: 'kbqa-extractive',
    };
    const cleanup: Array<() => Promise<unknown>> = [() => fake.close()];
    try {
      const app = await startTestApp(environment);
      cleanup.unshift(() => app.close());
      t.is(app.deps.config.embedder.selected, BGE_SMALL_EN.modelName);
      const user = await makeUser(app.deps.store);
      const kb = await createKb(app, user.key, 'embedder migration');
      const ids: Record<string, string> = {};
      for (const [key, document] of Object.entries(DOCUMENTS))
        ids[key] = (await ingest(app, user.key, kb, document.filename, document.content)).id;
      t.deepEqual(await aliasTargets(app), [bgeIndex]);
      t.is(
        fake.embeddingRequests.filter((request) => request.inputs.some((input) => input.includes('lighthouse'))).length,
        0,
        'bge embedded the documents',
      );

      // Before: bge vectors, so KBQA_RELEVANCE_FLOOR applies and KBQA_OPENAI_RELEVANCE_FLOOR does not.
      const floorsBefore = await answersUnderFloors(app, user, kb, DOCUMENTS.bakery.question);
      t.is(floorsBefore.bgeFloorHigh, NOTHING_RELEVANT_ANSWER);
      t.not(floorsBefore.openaiFloorHigh, NOTHING_RELEVANT_ANSWER);

      // The migration's process: KBQA_EMBEDDER=openai, its own rag and search client (as `kbqa index migrate` opens them).
      const cliConfig = loadConfig({
        ...process.env,
        KBQA_LOG_LEVEL: 'silent',
        ...environment,
        KBQA_EMBEDDER: 'openai',
        KBQA_MODEL_WORKERS: '1',
      });
      const cliRag = await loadRag(cliConfig);
      cleanup.unshift(() => cliRag.close());
      const cliSearch = openConfiguredSearchIndex(cliConfig, BGE_SMALL_EN);
      cleanup.unshift(() => cliSearch.close());
      t.deepEqual(cliRag.embedder, { modelName: OPENAI_EMBEDDER, dimensions: 1536 });
      const cliDeps: IndexMigrationDeps = { store: app.deps.store, search: cliSearch, rag: cliRag, config: cliConfig };

      // The query loop through the API, from before the migration to after the rollback: every answer must be a 200
      // citing the lighthouse document (never a half-built index, never vectors of one embedder against the other's).
      let running = true;
      const queries = { sent: 0, failed: [] as string[] };
      const queryLoop = (async () => {
        while (running) {
          const response = await ask(app.baseUrl, user, kb, DOCUMENTS.lighthouse.question).catch((error: unknown) => ({
            status: 0,
            body: String(error),
            headers: new Headers(),
          }));
          queries.sent += 1;
          if (response.status !== 200 || !citedDocuments(response).includes(ids.lighthouse))
            queries.failed.push(`${response.status} ${JSON.stringify(response.body).slice(0, 300)}`);
        }
      })();
      const loopSent = async (more: number) => {
        const target = queries.sent + more;
        await until(`${more} more queries`, 30_000, async () => queries.sent >= target);
      };

      try {
        await loopSent(2);
        const outcome = await migrateIndex(cliDeps, { knowledgeBaseIds: [kb] });
        await loopSent(3);
        t.like(outcome, { outcome: 'migrated', fill: 'rebuild', from: bgeIndex, to: openaiIndex, documents: 4 });
        t.deepEqual(await aliasTargets(app), [openaiIndex], 'the alias points only to the OpenAI index');

        // The new index: a 1536-dimension knn_vector, and _meta naming the embedder.
        const mapping = await app.deps.search.request<
          Record<
            string,
            {
              mappings: {
                properties: Record<string, { type: string; dimension?: number }>;
                _meta: { kbqa: { embedder: unknown; alias: string } };
              };
            }
          >
        >('GET', `/${openaiIndex}/_mapping`);
        const { properties, _meta: meta } = mapping[openaiIndex].mappings;
        t.like(properties.embedding, { type: 'knn_vector', dimension: 1536 });
        t.deepEqual(meta.kbqa.embedder, { name: OPENAI_EMBEDDER, dimensions: 1536 });
        t.is(meta.kbqa.alias, alias);
        // Counts: the same documents and, chunking unchanged, as many chunks as the bge index.
        const [before, after] = [await indexCounts(app, bgeIndex, kb), await indexCounts(app, openaiIndex, kb)];
        t.deepEqual(after, before);
        t.is(after.documents, 4);
        t.is(outcome.chunks.target, after.chunks);

        // The API now embeds questions with the stand-in (its serving index moved within a couple of seconds).
        await until(
          'the API to serve the OpenAI index',
          30_000,
          async () => (await app.deps.search.servingIndex()).embedder.modelName === OPENAI_EMBEDDER,
        );
        const requestsBefore = fake.embeddingRequests.length;
        const bakery = await ask(app.baseUrl, user, kb, DOCUMENTS.bakery.question);
        t.is(bakery.status, 200);
        t.true(fake.embeddingRequests.length > requestsBefore, 'the question went to the stand-in');
        t.true(
          fake.embeddingRequests
            .slice(requestsBefore)
            .some((request) => request.inputs.includes(DOCUMENTS.bakery.question) && request.status === 200),
        );
        // Answered under the OpenAI floor (default 0: none), citing the document the question is about.
        t.not(bakery.body.answer, NOTHING_RELEVANT_ANSWER);
        t.deepEqual(citedDocuments(bakery), [ids.bakery], bakery.body.answer);
        // Its cosines are on another scale than bge's, so the floor is the OpenAI embedder's, whatever bge's is.
        const floorsAfter = await answersUnderFloors(app, user, kb, DOCUMENTS.bakery.question);
        t.not(
          floorsAfter.bgeFloorHigh,
          NOTHING_RELEVANT_ANSWER,
          'KBQA_RELEVANCE_FLOOR does not apply to OpenAI vectors',
        );
        t.is(floorsAfter.openaiFloorHigh, NOTHING_RELEVANT_ANSWER, 'KBQA_OPENAI_RELEVANCE_FLOOR does');

        // A document ingested now is embedded by the stand-in and written to the OpenAI index.
        const passagesBefore = fake.embeddingRequests.length;
        const glassworks = await ingest(app, user.key, kb, GLASSWORKS.filename, GLASSWORKS.content);
        t.true(
          fake.embeddingRequests
            .slice(passagesBefore)
            .some((request) => request.inputs.some((input) => input.includes('soda ash'))),
          'its passages went to the stand-in',
        );
        t.deepEqual(await indexCounts(app, openaiIndex, kb), {
          documents: 5,
          chunks: after.chunks + glassworks.chunks,
        });
        t.deepEqual(citedDocuments(await ask(app.baseUrl, user, kb, GLASSWORKS.question)), [glassworks.id]);

        // Another API process on this alias without the OpenAI embedder configured: a deployment mistake, so 503 naming
        // what to set (never a 500), and /readyz reports the embedder unavailable, its log line saying why.
        const { logger, lines } = capturingLogger();
        const unconfigured = await startTestApp({ KBQA_CHUNKS_ALIAS: alias, KBQA_MODEL_WORKERS: '1' }, { logger });
        try {
          const refused = await ask(unconfigured.baseUrl, user, kb, DOCUMENTS.bakery.question);
          t.is(refused.status, 503);
          t.is(refused.body.error.code, 'server_error');
          t.regex(
            refused.body.error.message,
            /embedder openai-text-embedding-3-small is not configured.*set KBQA_OPENAI_BASE_URL and KBQA_OPENAI_EMBEDDING_MODEL/,
          );
          t.deepEqual(await aliasTargets(app), [openaiIndex], 'its start-up left the alias alone');
          const ready = await unconfigured.call('GET', '/readyz');
          t.is(ready.status, 503);
          t.like(ready.body, {
            error: { code: 'server_error', message: 'not ready: embedder unavailable' },
            components: { embedder: 'unavailable', opensearch: 'ok' },
          });
          const logged = lines.map((line) => JSON.parse(line) as { msg: string; components?: { embedder?: string } });
          t.regex(
            logged.find((line) => line.msg === 'not ready')?.components?.embedder ?? lines.join('\n'),
            /^EmbedderNotConfiguredError: .*set KBQA_OPENAI_BASE_URL/,
          );
        } finally {
          await unconfigured.close();
        }

        // Rollback (`kbqa index rollback`): one _aliases call back to the bge index, caught up with the document ingested
        // since; questions are embedded by bge again.
        const rolledBack = await useIndex(cliDeps, null, { knowledgeBaseIds: [kb] });
        t.like(rolledBack, { from: openaiIndex, to: bgeIndex, rebuilt: 1 });
        t.deepEqual(await aliasTargets(app), [bgeIndex]);
        await until(
          'the API to serve the bge index',
          30_000,
          async () => (await app.deps.search.servingIndex()).embedder.modelName === BGE_SMALL_EN.modelName,
        );
        await loopSent(3);
        const requestsAtRollback = fake.embeddingRequests.length;
        t.deepEqual(
          citedDocuments(await ask(app.baseUrl, user, kb, GLASSWORKS.question)),
          [glassworks.id],
          'the rollback caught up with it',
        );
        t.deepEqual(citedDocuments(await ask(app.baseUrl, user, kb, DOCUMENTS.orchard.question)), [ids.orchard]);
        t.is(fake.embeddingRequests.length, requestsAtRollback, 'bge embeds the questions again');
        t.deepEqual(await indexCounts(app, bgeIndex, kb), await indexCounts(app, openaiIndex, kb));
      } finally {
        running = false;
        await queryLoop;
      }
      t.true(queries.sent >= 8, `${queries.sent} queries ran`);
      t.deepEqual(queries.failed, [], `no query failed of ${queries.sent}`);
      t.log(`${queries.sent} queries; ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } finally {
      // Every step runs; the first failure (an OpenAPI violation reported by app.close, say) is still the test's.
      const failures: unknown[] = [];
      for (const step of cleanup) await step().catch((error: unknown) => failures.push(error));
      await removeFamily();
      if (failures.length > 0) throw failures[0];
    }
  },
);
