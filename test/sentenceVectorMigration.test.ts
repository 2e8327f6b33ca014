// Sentence vectors across template versions (service/search/sentenceVectors.ts, reindexScript.ts): a v2 index
// (float32, in _source and a doc value) keeps serving them until `kbqa index migrate` copies it to v3, whose
// `_reindex` script re-encodes each chunk's vectors as int8, bit for bit as ingestion would; a migration from v3 to a
// later version copies them unchanged; a rollback's catch-up from v3 into the kept v2 index writes them back as
// float32. Scores and the answerer's vectors agree throughout.
//
// Scope: an alias of its own (KBQA_CHUNKS_ALIAS) and a copy of the asset files (KBQA_SEARCH_ASSETS_DIR) that starts
// with v2 as the highest version.
import { randomUUID } from 'node:crypto';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { migrateIndex } from '../service/operations/indexMigration/migrate.ts';
import type { IndexMigrationDeps } from '../service/operations/indexMigration/plan.ts';
import { useIndex } from '../service/operations/indexMigration/swap.ts';
import { CHUNKS_ALIAS } from '../service/search/assets.ts';
import type { RetrievalRequest } from '../service/search/retrieval.ts';
import {
  decodeSentenceVectors,
  encodeSentenceVectors,
  sentenceVectorFormOf,
} from '../service/search/sentenceVectors.ts';
import { makeUser } from './factories/accounts.ts';
import { dropAliasFamily } from './helpers/aliasFamily.ts';
import { copyAssets, repositoryRoot } from './helpers/assetFiles.ts';
import { startTestApp, testWithDatabase, type TestApp } from './helpers/app.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';

const test = testWithDatabase();
const QUESTION = 'When was the lighthouse on Corran Point automated?';
const CORRAN =
  'Corran Point sits at the narrows of the loch. The ferry crosses there every half hour. ' +
  'The lighthouse on Corran Point was automated in 1987. Seals rest on the rocks below it at low tide.';

interface Stored {
  /** The doc value as the index holds it (base64). */
  packed: string;
  /** Whether _source holds the same bytes. */
  inSource: boolean;
}

/** corran.txt's chunk in one index: its sentence vectors' doc value, and whether _source has them. */
async function storedCorran(app: TestApp, index: string): Promise<Stored> {
  const response = await app.deps.search.request<{
    hits: {
      hits: Array<{ _source: { sentence_embeddings?: string }; fields?: { sentence_embeddings?: string[] } }>;
    };
  }>('POST', `/${index}/_search`, {
    body: {
      query: { term: { filename: 'corran.txt' } },
      _source: ['sentence_embeddings'],
      docvalue_fields: ['sentence_embeddings'],
    },
  });
  const [hit] = response.hits.hits;
  return {
    packed: hit.fields?.sentence_embeddings?.[0] ?? '',
    inSource: hit._source.sentence_embeddings !== undefined,
  };
}

test('sentence vectors: v2 float32 → v3 int8 → v4 by _reindex, and rollbacks write each form back', async (t) => {
  t.timeout(300_000);
  const alias = `${CHUNKS_ALIAS}-svm${randomUUID().replaceAll('-', '').slice(0, 10)}`;
  const assetsDir = copyAssets(['kbqa-chunks.v3.json']);
  let app: TestApp | undefined;
  try {
    app = await startTestApp({ KBQA_CHUNKS_ALIAS: alias, KBQA_SEARCH_ASSETS_DIR: assetsDir });
    const deps: IndexMigrationDeps = app.deps;
    const v2 = app.deps.search.indexName;
    t.true(v2.startsWith('kbqa-chunks-v2-'), v2);
    const user = await makeUser(app.deps.store, { label: 'svm' });
    const kb = await createKb(app, user.key, 'sentence vector migration');
    await ingest(app, user.key, kb, 'corran.txt', CORRAN);
    const request: RetrievalRequest = {
      text: QUESTION,
      vector: await app.deps.rag.embedQuestion(QUESTION),
      knowledgeBaseIds: [kb],
      size: 5,
      depth: 10,
      withSentenceVectors: true,
    };
    const served = async () => {
      app?.deps.search.forgetServingIndex();
      const [knn] = await (app as TestApp).deps.search.vectorSearch(request);
      const [hybrid] = await (app as TestApp).deps.search.hybridSearch(request);
      return { score: knn.score, sentences: hybrid.vectors?.sentences.map((vector) => Array.from(vector)) ?? [] };
    };

    // v2: float32 in _source and the doc value.
    const onV2 = await storedCorran(app, v2);
    t.true(onV2.inSource);
    const float32 = decodeSentenceVectors(onV2.packed, 384, 'float32');
    t.is(float32.length, 4);
    const before = await served();
    t.deepEqual(
      before.sentences,
      float32.map((vector) => Array.from(vector)),
    );

    // v3: the _reindex script re-encodes them as int8, exactly as a write would.
    copyFileSync(
      join(repositoryRoot, 'index-templates', 'kbqa-chunks.v3.json'),
      join(assetsDir, 'index-templates', 'kbqa-chunks.v3.json'),
    );
    await app.deps.search.applyAssets();
    const toV3 = await migrateIndex(deps, { knowledgeBaseIds: [kb], catchUpDelayMs: 2_500 });
    const v3 = v2.replace('kbqa-chunks-v2-', 'kbqa-chunks-v3-');
    t.like(toV3, { outcome: 'migrated', from: v2, to: v3, fill: 'reindex' });
    t.is(sentenceVectorFormOf(v3), 'int8');
    const onV3 = await storedCorran(app, v3);
    t.true(onV3.inSource);
    t.is(onV3.packed, encodeSentenceVectors(float32, 'int8'));
    const afterV3 = await served();
    // Same chunk, the int8 vectors' cosines: the sentence term moves by at most weight × error / 2.
    t.true(Math.abs(afterV3.score - before.score) < 0.003, `${afterV3.score} vs ${before.score}`);
    t.deepEqual(
      afterV3.sentences,
      decodeSentenceVectors(onV3.packed, 384, 'int8').map((vector) => Array.from(vector)),
    );

    // v4 (v3's mappings): the same form, copied unchanged.
    const template = JSON.parse(readFileSync(join(assetsDir, 'index-templates', 'kbqa-chunks.v3.json'), 'utf8'));
    template.version = 4;
    template.index_patterns = ['kbqa-chunks-v4-*'];
    writeFileSync(join(assetsDir, 'index-templates', 'kbqa-chunks.v4.json'), JSON.stringify(template, null, 2));
    await app.deps.search.applyAssets();
    const toV4 = await migrateIndex(deps, { knowledgeBaseIds: [kb], catchUpDelayMs: 2_500 });
    const v4 = v2.replace('kbqa-chunks-v2-', 'kbqa-chunks-v4-');
    t.like(toV4, { outcome: 'migrated', from: v3, to: v4, fill: 'reindex' });
    t.deepEqual(await storedCorran(app, v4), onV3);
    const afterV4 = await served();
    t.is(afterV4.score, afterV3.score);

    // Rollbacks: a document ingested on v4 reaches v3 (int8) and then the kept v2 (float32) through the catch-ups.
    await ingest(app, user.key, kb, 'late.txt', 'The late ferry leaves at ten. It waits for the last train.');
    await useIndex(deps, v3, { knowledgeBaseIds: [kb], catchUpDelayMs: 2_500 });
    await useIndex(deps, v2, { knowledgeBaseIds: [kb], catchUpDelayMs: 2_500 });
    const late = await app.deps.search.request<{
      hits: { hits: Array<{ _source: { sentence_embeddings?: string }; fields?: { sentence_embeddings?: string[] } }> };
    }>('POST', `/${v2}/_search`, {
      body: { query: { term: { filename: 'late.txt' } }, docvalue_fields: ['sentence_embeddings'] },
    });
    const [lateChunk] = late.hits.hits;
    t.truthy(lateChunk, 'late.txt reached v2');
    const packed = lateChunk.fields?.sentence_embeddings?.[0] ?? '';
    t.is(lateChunk._source.sentence_embeddings, packed, 'float32 in _source and the doc value, as v2 keeps them');
    t.is(Buffer.from(packed, 'base64').length, 2 * 384 * 4);
    t.deepEqual((await served()).sentences.length, 4);
  } finally {
    await app?.close();
    await dropAliasFamily(alias);
    rmSync(assetsDir, { recursive: true, force: true });
  }
});
