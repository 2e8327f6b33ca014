// The k-NN side at two granularities (sentenceVectors.ts SENTENCE_SCORE): ingestion stores one vector per sentence of
// a chunk of several (int8 in a v3 index, as a doc value and in _source), and the k-NN side scores a chunk as its own k-NN score
// plus KBQA_SENTENCE_WEIGHT times its best sentence's, recomputed here from the stored vectors; a chunk of one
// sentence counts its own score in its place; a v2 index's float32 vectors score alike; the answerer gets them back
// as a doc value; an index built before sentence vectors is chunking drift; KBQA_SENTENCE_VECTORS=off builds chunks
// without them.
//
// Scope: indices of their own (KBQA_CHUNKS_ALIAS=kbqa-chunks-sentences and kbqa-chunks-nosentences, deleted afterwards).
import { cosine } from '../service/rag/extractiveAnswerer.ts';
import { migrateIndex } from '../service/operations/indexMigration/migrate.ts';
import { indexStatus } from '../service/operations/indexMigration/status.ts';
import { DEFAULT_SENTENCE_VECTOR_RECIPE, loadConfig } from '../service/config.ts';
import { ConfigError, IndexMigrationError } from '../service/errors.ts';
import type { SearchClient } from '../service/search/client.ts';
import { describeChunking, sameChunking, SENTENCE_VECTOR_FORMATS } from '../service/search/chunkIndices.ts';
import { decodeEmbedding, vectorSearch, type RetrievalRequest } from '../service/search/retrieval.ts';
import {
  decodeSentenceVectors,
  encodeSentenceVectors,
  sentenceVectorFormOf,
} from '../service/search/sentenceVectors.ts';
import { makeUser } from './factories/accounts.ts';
import { dropAliasFamily } from './helpers/aliasFamily.ts';
import { startTestApp, testWithApp, type TestApp } from './helpers/app.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';

const ALIAS = 'kbqa-chunks-sentences';
const test = testWithApp<{ request: RetrievalRequest }>({ env: { KBQA_CHUNKS_ALIAS: ALIAS } });
const QUESTION = 'When was the lighthouse on Corran Point automated?';

const DOCUMENTS: Record<string, string> = {
  // Several sentences, one of them the answer.
  'corran.txt':
    'Corran Point sits at the narrows of the loch. The ferry crosses there every half hour. ' +
    'The lighthouse on Corran Point was automated in 1987. Seals rest on the rocks below it at low tide.',
  // One sentence: no sentence vectors.
  'tide.txt': 'The spring tide at the narrows runs at six knots.',
};

interface StoredChunk {
  filename: string;
  embedding_b64: string;
  /** Decoded from the doc value in the index's form (sentenceVectors.ts), one vector per sentence. */
  sentence_embeddings?: number[][];
}

/** As the cosine space scores: (1 + cos) / 2, the cosine divided by both norms (an int8 vector is a multiple). */
const cosineScore = (a: number[], b: ArrayLike<number>) => (1 + cosine(a, b)) / 2;

test.before(async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store, { label: 'sentences' });
  const kb = await createKb(app, user.key, 'sentences');
  for (const [filename, content] of Object.entries(DOCUMENTS)) await ingest(app, user.key, kb, filename, content);
  const vector = await app.deps.rag.embedQuestion(QUESTION);
  t.context.request = { text: QUESTION, vector, knowledgeBaseIds: [kb], size: 10, depth: 10 };
});

test.after.always(async () => {
  await dropAliasFamily(ALIAS);
});

async function storedChunks(app: TestApp, alias = ALIAS): Promise<Map<string, StoredChunk>> {
  const response = await app.deps.search.request<{
    hits: {
      hits: Array<{
        _index: string;
        _source: Omit<StoredChunk, 'sentence_embeddings'> & { sentence_embeddings?: string };
        fields?: { sentence_embeddings?: string[] };
      }>;
    };
  }>('POST', `/${alias}/_search`, {
    body: {
      size: 10,
      _source: ['filename', 'embedding_b64', 'sentence_embeddings'],
      docvalue_fields: ['sentence_embeddings'],
    },
  });
  return new Map(
    response.hits.hits.map(({ _index: index, _source: source, fields }) => {
      // The doc value and _source hold the same bytes (what the script reads, what _reindex copies).
      const packed = fields?.sentence_embeddings?.[0];
      if (packed !== source.sentence_embeddings) throw new Error(`${index}: the doc value is not _source's`);
      const dimensions = decodeEmbedding(source.embedding_b64).length;
      const vectors = packed ? decodeSentenceVectors(packed, dimensions, sentenceVectorFormOf(index)) : undefined;
      return [source.filename, { ...source, sentence_embeddings: vectors?.map((vector) => Array.from(vector)) }];
    }),
  );
}

test.serial(
  'a chunk of several sentences stores a vector per sentence (int8, doc value and _source); a one-sentence chunk none',
  async (t) => {
    const { app, request } = t.context;
    t.is(sentenceVectorFormOf(app.deps.search.indexName), 'int8');
    const stored = await storedChunks(app);
    const corran = stored.get('corran.txt');
    t.is(corran?.sentence_embeddings?.length, 4);
    t.true(corran?.sentence_embeddings?.every((vector) => vector.length === 384));
    t.true(corran?.sentence_embeddings?.every((vector) => Math.max(...vector.map(Math.abs)) === 127));
    t.true(stored.has('tide.txt'));
    t.is(stored.get('tide.txt')?.sentence_embeddings, undefined);
    // What the answerer reads: the same vectors, through the hybrid query's docvalue_fields.
    const found = await app.deps.search.hybridSearch({ ...request, withSentenceVectors: true });
    const answered = found.find((chunk) => chunk.filename === 'corran.txt');
    t.deepEqual(
      answered?.vectors?.sentences.map((vector) => Array.from(vector)),
      corran?.sentence_embeddings,
    );
    t.deepEqual(found.find((chunk) => chunk.filename === 'tide.txt')?.vectors?.sentences, []);
  },
);

test.serial(
  'the k-NN side scores own score + weight × best sentence score; weight 0 is the plain k-NN score',
  async (t) => {
    const { app, request } = t.context;
    const stored = await storedChunks(app);
    const expected = (filename: string, weight: number) => {
      const chunk = stored.get(filename) as StoredChunk;
      const own = cosineScore(request.vector, decodeEmbedding(chunk.embedding_b64));
      const best = chunk.sentence_embeddings
        ? Math.max(...chunk.sentence_embeddings.map((sentence) => cosineScore(request.vector, sentence)))
        : own;
      return own + weight * best;
    };
    // The configured weight (0.5) through the search module's k-NN side.
    const found = await app.deps.search.vectorSearch(request);
    t.is(found.length, Object.keys(DOCUMENTS).length);
    for (const chunk of found) {
      // The script and Lucene score in float.
      t.true(
        Math.abs(chunk.score - expected(chunk.filename, 0.5)) < 1e-4,
        `${chunk.filename}: ${chunk.score} vs ${expected(chunk.filename, 0.5)}`,
      );
    }
    // The answering sentence is the best one, and it lifts its chunk above its own k-NN score.
    const corran = stored.get('corran.txt') as StoredChunk;
    const sentenceScores = (corran.sentence_embeddings ?? []).map((sentence) => cosineScore(request.vector, sentence));
    t.is(sentenceScores.indexOf(Math.max(...sentenceScores)), 2, `sentence scores ${sentenceScores}`);
    t.true(Math.max(...sentenceScores) > cosineScore(request.vector, decodeEmbedding(corran.embedding_b64)));
    // Weight 0: the plain k-NN score, chunk by chunk (retrieval.ts vectorSearch with its weight; the client is the app's).
    const client: SearchClient = { request: app.deps.search.request, close: async () => {} };
    const plain = await vectorSearch(client, ALIAS, request, 0);
    t.is(plain.length, found.length);
    for (const chunk of plain)
      t.true(Math.abs(chunk.score - expected(chunk.filename, 0)) < 1e-4, `${chunk.filename}: ${chunk.score}`);
  },
);

test.serial('an index whose chunks carry no sentence vectors is chunking drift, with the command to run', async (t) => {
  const { app } = t.context;
  const index = app.deps.search.indexName;
  const meta = await app.deps.search.indices.meta(index);
  t.is(meta?.chunking?.sentence_vectors, SENTENCE_VECTOR_FORMATS[DEFAULT_SENTENCE_VECTOR_RECIPE]);
  if (!meta?.chunking) return;
  const { sentence_vectors: _recipe, ...olderChunking } = meta.chunking;
  await app.deps.search.indices.setMeta(index, { ...meta, chunking: olderChunking });
  try {
    const status = await indexStatus({ search: app.deps.search, embedder: app.deps.rag.embedder });
    const chunking = status.drift.find((entry) => entry.kind === 'chunking');
    t.truthy(chunking, JSON.stringify(status.drift));
    t.regex(chunking?.detail ?? '', /without sentence vectors\); configured: 510 tokens .*with sentence vectors/);
    t.regex(status.command ?? '', /kbqa index migrate/);
    // A plain migrate cannot re-cut chunks into the live index's own name; it says why (no file was edited).
    const deps = { store: app.deps.store, search: app.deps.search, rag: app.deps.rag, config: app.deps.config };
    const refused = await t.throwsAsync(() => migrateIndex(deps), { instanceOf: IndexMigrationError });
    t.regex(
      refused?.message ?? '',
      /^the configured chunking differs from the one .* was cut with \(.*without sentence vectors.*\): .*copy the file to the next version \(kbqa-chunks\.v\d+\.json\)/,
    );
  } finally {
    await app.deps.search.indices.setMeta(index, meta);
  }
});

test('KBQA_SENTENCE_VECTORS=off turns the sentence term off; a weight set beside it is refused', (t) => {
  t.is(loadConfig({}).opensearch.sentenceWeight, 0.5);
  t.true(loadConfig({}).chunking.sentenceVectors);
  const off = loadConfig({ KBQA_SENTENCE_VECTORS: 'off' });
  t.false(off.chunking.sentenceVectors);
  t.is(off.opensearch.sentenceWeight, 0);
  t.is(loadConfig({ KBQA_SENTENCE_VECTORS: 'off', KBQA_SENTENCE_WEIGHT: '0' }).opensearch.sentenceWeight, 0);
  t.throws(() => loadConfig({ KBQA_SENTENCE_VECTORS: 'off', KBQA_SENTENCE_WEIGHT: '0.5' }), {
    instanceOf: ConfigError,
    message: /KBQA_SENTENCE_WEIGHT scores sentence vectors, which KBQA_SENTENCE_VECTORS=off leaves out/,
  });
  t.is(loadConfig({}).chunking.sentenceVectorRecipe, DEFAULT_SENTENCE_VECTOR_RECIPE);
  t.is(loadConfig({ KBQA_SENTENCE_VECTORS: 'on' }).chunking.sentenceVectorRecipe, DEFAULT_SENTENCE_VECTOR_RECIPE);
  t.is(off.chunking.sentenceVectorRecipe, null);
  for (const recipe of ['late', 'separate', 'batched'] as const) {
    const config = loadConfig({ KBQA_SENTENCE_VECTORS: recipe });
    t.is(config.chunking.sentenceVectorRecipe, recipe);
    t.true(config.chunking.sentenceVectors);
    t.is(config.opensearch.sentenceWeight, 0.5);
  }
  t.throws(() => loadConfig({ KBQA_SENTENCE_VECTORS: 'no' }), {
    instanceOf: ConfigError,
    message: /KBQA_SENTENCE_VECTORS/,
  });
});

test.serial(
  'with KBQA_SENTENCE_VECTORS=off chunks carry none, the k-NN side is the plain score, and the index records it',
  async (t) => {
    const alias = 'kbqa-chunks-nosentences';
    const app = await startTestApp({ KBQA_CHUNKS_ALIAS: alias, KBQA_SENTENCE_VECTORS: 'off' });
    try {
      const user = await makeUser(app.deps.store, { label: 'nosentences' });
      const kb = await createKb(app, user.key, 'nosentences');
      await ingest(app, user.key, kb, 'corran.txt', DOCUMENTS['corran.txt']);
      const chunks = [...(await storedChunks(app, alias)).values()];
      t.is(chunks.length, 1);
      t.is(chunks[0].sentence_embeddings, undefined);
      const vector = await app.deps.rag.embedQuestion(QUESTION);
      const [found] = await app.deps.search.vectorSearch({
        text: QUESTION,
        vector,
        knowledgeBaseIds: [kb],
        size: 10,
        depth: 10,
      });
      t.true(
        Math.abs(found.score - cosineScore(vector, decodeEmbedding(chunks[0].embedding_b64))) < 1e-4,
        `${found.score}`,
      );
      const meta = await app.deps.search.indices.meta(app.deps.search.indexName);
      t.is(meta?.chunking?.sentence_vectors, 0);
      const status = await indexStatus({ search: app.deps.search, embedder: app.deps.rag.embedder });
      t.deepEqual(status.drift, []);
    } finally {
      await app.close();
      await dropAliasFamily(alias);
    }
  },
);

test('recipes: an index of another sentence-vector format is other chunks, and says so', (t) => {
  const chunking = { chunk_tokens: 510, overlap_tokens: 32, max_chars: 4096 };
  const { separate, late, batched } = SENTENCE_VECTOR_FORMATS;
  t.is(new Set([separate, late, batched]).size, 3);
  t.false(sameChunking({ ...chunking, sentence_vectors: 1 }, { ...chunking, sentence_vectors: separate }));
  t.false(sameChunking({ ...chunking, sentence_vectors: separate }, { ...chunking, sentence_vectors: late }));
  t.true(sameChunking({ ...chunking, sentence_vectors: 0 }, chunking));
  t.regex(describeChunking({ ...chunking, sentence_vectors: 1 }), /with sentence vectors of another format \(1\)/);
  t.regex(describeChunking({ ...chunking, sentence_vectors: late }), /, with sentence vectors \(late\)\)$/);
});

test.serial(
  'a copy without the sentence field is served without the term; a v2 (float32) copy scores as the v3 index does',
  async (t) => {
    const { app, request } = t.context;
    const client: SearchClient = { request: app.deps.search.request, close: async () => {} };
    const source = app.deps.search.indexName;
    const mappings = (
      await app.deps.search.request<Record<string, { mappings: { properties: Record<string, unknown> } }>>(
        'GET',
        `/${source}/_mapping`,
      )
    )[source].mappings;
    const { analysis } = (
      await app.deps.search.request<Record<string, { settings: { index: { analysis: unknown } } }>>(
        'GET',
        `/${source}/_settings`,
      )
    )[source].settings.index;
    const settings = { 'index.knn': true, analysis };
    const found = await app.deps.search.request<{
      hits: { hits: Array<{ _source: Record<string, unknown> & { filename: string } }> };
    }>('POST', `/${ALIAS}/_search`, {
      body: { size: 10, query: { term: { filename: 'corran.txt' } } },
    });
    const corran = found.hits.hits[0]._source;
    const stored = (await storedChunks(app)).get('corran.txt') as StoredChunk;
    const own = cosineScore(request.vector, decodeEmbedding(stored.embedding_b64));
    const best = Math.max(
      ...(stored.sentence_embeddings ?? []).map((sentence) => cosineScore(request.vector, sentence)),
    );
    const withoutField = `${ALIAS}-copy-without-field`;
    // Named as template v2 names its indices: the script reads its float32 doc value (an install not yet migrated).
    const scaled = 'kbqa-chunks-v2-sentences-copy-bge-small-en-v1.5';
    try {
      const { sentence_embeddings: _field, ...otherProperties } = mappings.properties;
      await app.deps.search.request('PUT', `/${withoutField}`, {
        body: { settings, mappings: { ...mappings, properties: otherProperties } },
      });
      const { sentence_embeddings: _vectors, ...withoutVectors } = corran;
      await app.deps.search.request('PUT', `/${withoutField}/_doc/1`, {
        querystring: { refresh: 'true' },
        body: withoutVectors,
      });
      const [plain] = await vectorSearch(client, withoutField, request, 0.5);
      t.true(Math.abs(plain.score - (own + 0.5 * own)) < 1e-4, `${plain.score} vs ${own * 1.5}`);

      // The int8 vectors as float32 and twice as long: the same cosines, so the same score (the script divides by
      // the norms in both forms).
      await app.deps.search.request('PUT', `/${scaled}`, { body: { settings, mappings } });
      const doubled = (stored.sentence_embeddings ?? []).map((sentence) => sentence.map((value) => 2 * value));
      t.is(sentenceVectorFormOf(scaled), 'float32');
      await app.deps.search.request('PUT', `/${scaled}/_doc/1`, {
        querystring: { refresh: 'true' },
        body: { ...corran, sentence_embeddings: encodeSentenceVectors(doubled, 'float32') },
      });
      const [rescored] = await vectorSearch(client, scaled, request, 0.5);
      t.true(Math.abs(rescored.score - (own + 0.5 * best)) < 1e-4, `${rescored.score} vs ${own + 0.5 * best}`);
    } finally {
      await app.deps.search.request('DELETE', `/${withoutField},${scaled}`, {
        querystring: { ignore_unavailable: 'true' },
      });
    }
  },
);
