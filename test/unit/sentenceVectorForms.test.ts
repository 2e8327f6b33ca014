// How sentence vectors are stored (service/search/sentenceVectors.ts): the form an index takes by its template
// version, the encodings' round trip, the int8 form's cosine error on real vectors (the model's own, embedding this
// repository's corpus and questions), the `_reindex` script a migration picks, and the request shape that reads them
// back (a doc value, never _source). The script's scores on the real OpenSearch: test/sentenceVectors.test.ts.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_HYBRID_TUNING } from '../../service/hybridTuning.ts';
import { BgeOnnxEmbeddings } from '../../service/rag/bgeEmbeddings.ts';
import { cosine } from '../../service/rag/extractiveAnswerer.ts';
import { reindexScript } from '../../service/search/reindexScript.ts';
import { bulkLines, type ChunkDocument } from '../../service/search/chunks.ts';
import { hybridSearchBody, type RetrievalRequest } from '../../service/search/retrieval.ts';
import {
  decodeSentenceVectors,
  encodeSentenceVectors,
  quantizeInt8,
  sentenceVectorFormOf,
} from '../../service/search/sentenceVectors.ts';
import { splitSentences } from '../../service/text/sentences.ts';

const MODEL_DIR = fileURLToPath(new URL('../../.local/models/bge-small-en-v1.5-q', import.meta.url));
const CORPUS = new URL('../fixtures/corpus/', import.meta.url);

test('an index stores float32 up to template v2, int8 from v3 on; the alias itself is the current version', (t) => {
  t.is(sentenceVectorFormOf('kbqa-chunks-v1-bge-small-en-v1.5'), 'float32');
  t.is(sentenceVectorFormOf('kbqa-chunks-v2-s30-bge-small-en-v1.5'), 'float32');
  t.is(sentenceVectorFormOf('kbqa-chunks-v3-bge-small-en-v1.5'), 'int8');
  t.is(sentenceVectorFormOf('kbqa-chunks-v12-x-bge-small-en-v1.5'), 'int8');
  t.is(sentenceVectorFormOf('kbqa-chunks'), 'int8');
});

test('float32 round-trips exactly; int8 keeps each vector to 1/254 of its largest component, 1 byte a component', (t) => {
  const vectors = [
    [0.5, -0.25, 0.125, 0],
    [-0.0009765625, 0.001953125, 0, 0.00390625],
    [0, 0, 0, 0],
  ];
  const float32 = encodeSentenceVectors(vectors, 'float32');
  t.is(Buffer.from(float32, 'base64').length, 3 * 4 * 4);
  t.deepEqual(
    decodeSentenceVectors(float32, 4, 'float32').map((vector) => Array.from(vector)),
    vectors,
  );
  const int8 = encodeSentenceVectors(vectors, 'int8');
  t.is(Buffer.from(int8, 'base64').length, 3 * 4);
  const decoded = decodeSentenceVectors(int8, 4, 'int8');
  // Halves round up, as Java's Math.round does in the migration's script: -63.5 → -63, 63.5 → 64.
  t.deepEqual(Array.from(decoded[0]), [127, -63, 32, 0]);
  t.deepEqual(Array.from(decoded[1]), [-32, 64, 0, 127]);
  t.deepEqual(Array.from(decoded[2]), [0, 0, 0, 0]);
  t.deepEqual(Array.from(quantizeInt8([3, -3])), [127, -127]);
  // Re-encoding int8 vectors as int8 (a copy between two v3 indices) changes nothing.
  t.is(encodeSentenceVectors(decoded, 'int8'), int8);
  t.deepEqual(decodeSentenceVectors(undefined, 4, 'int8'), []);
});

test('int8 cosines stay within 0.005 of float32 ones on real vectors, and pick the same best sentence', async (t) => {
  const embedder = await BgeOnnxEmbeddings.load({ modelDir: MODEL_DIR });
  const questions = (
    JSON.parse(readFileSync(new URL('../fixtures/corpus-questions.json', import.meta.url), 'utf8')) as Array<{
      question: string;
      filename: string;
    }>
  ).slice(0, 12);
  let largestError = 0;
  let sameBest = 0;
  let pairs = 0;
  for (const { question, filename } of questions) {
    const text = readFileSync(new URL(filename, CORPUS), 'utf8');
    const sentences = splitSentences(text)
      .map((sentence) => sentence.text.trim())
      .filter((sentence) => sentence.length > 0)
      .slice(0, 24);
    const vectors = await embedder.embedDocuments(sentences);
    const stored = decodeSentenceVectors(encodeSentenceVectors(vectors, 'int8'), vectors[0].length, 'int8');
    const asked = await embedder.embedQuery(question);
    const exact = vectors.map((vector) => cosine(asked, vector));
    const quantized = stored.map((vector) => cosine(asked, vector));
    for (let index = 0; index < exact.length; index += 1)
      largestError = Math.max(largestError, Math.abs(exact[index] - quantized[index]));
    pairs += exact.length;
    if (exact.indexOf(Math.max(...exact)) === quantized.indexOf(Math.max(...quantized))) sameBest += 1;
  }
  t.log(`${pairs} question-sentence pairs: largest |cos int8 − cos float32| ${largestError.toFixed(5)}`);
  t.true(pairs > 100, `${pairs} pairs`);
  t.true(largestError < 0.005, `${largestError}`);
  t.true(largestError > 0, 'int8 is not float32');
  t.is(sameBest, questions.length);
});

test('a migration converts the vectors inside _reindex (either way), after the metadata part; v3 → v3 needs no script', (t) => {
  t.is(reindexScript('kbqa-chunks-v3-a-bge', 'kbqa-chunks-v3-b-bge'), null);
  t.is(reindexScript('kbqa-chunks-v2-a-bge', 'kbqa-chunks-v2-b-bge'), null);
  const fromV2 = reindexScript('kbqa-chunks-v2-bge', 'kbqa-chunks-v3-bge');
  t.regex(fromV2?.source ?? '', /Base64\.getDecoder\(\)/);
  t.regex(fromV2?.source ?? '', /Math\.round/);
  t.notRegex(fromV2?.source ?? '', /sortableNumber/);
  // A rollback's catch-up into a kept v2 index: int8 back to float32.
  t.regex(reindexScript('kbqa-chunks-v3-bge', 'kbqa-chunks-v2-bge')?.source ?? '', /Float\.floatToIntBits/);
  // From v1: the metadata's functions first (Painless wants them before any statement), then the vectors.
  const fromV1 = reindexScript('kbqa-chunks-v1-bge', 'kbqa-chunks-v3-bge');
  const source = fromV1?.source ?? '';
  t.true(
    source.indexOf('String sortableNumber') >= 0 && source.indexOf('String sortableNumber') < source.indexOf('Base64'),
  );
});

const chunk: ChunkDocument = {
  chunk_id: 'doc:1:0',
  knowledge_base_id: 'kb',
  document_id: 'doc',
  document_version: 1,
  filename: 'a.txt',
  title: 'a',
  heading_path: [],
  chunk_index: 0,
  page_start: null,
  page_end: null,
  text: 'One. Two.',
  embedding: [0.6, 0.8],
  sentence_embeddings: [
    [1, 0],
    [0, -0.5],
  ],
  embedder: 'bge-small-en-v1.5',
  created_at: '2026-11-26T00:00:00.000Z',
};

test('a write takes the target index form: float32 into a v2 index, int8 into a v3 one', (t) => {
  const [, v2] = bulkLines('kbqa-chunks-v2-bge-small-en-v1.5', [chunk]) as Array<{ sentence_embeddings: string }>;
  const [, v3] = bulkLines('kbqa-chunks-v3-bge-small-en-v1.5', [chunk]) as Array<{ sentence_embeddings: string }>;
  t.is(Buffer.from(v2.sentence_embeddings, 'base64').length, 2 * 2 * 4);
  t.deepEqual([...Buffer.from(v3.sentence_embeddings, 'base64')], [127, 0, 0, 256 - 127]);
});

const request: RetrievalRequest = {
  text: 'one',
  vector: [0.6, 0.8],
  knowledgeBaseIds: ['kb'],
  size: 5,
  depth: 50,
  withSentenceVectors: true,
};

test('the answerer reads the vectors as a doc value; the script is told the searched index form', (t) => {
  for (const [index, int8] of [
    ['kbqa-chunks-v2-bge-small-en-v1.5', false],
    ['kbqa-chunks-v3-bge-small-en-v1.5', true],
  ] as const) {
    const body = hybridSearchBody(request, index, request.text, DEFAULT_HYBRID_TUNING) as unknown as {
      _source: string[];
      docvalue_fields?: string[];
      query: { hybrid: { queries: Array<{ script_score?: { script: { params: { int8: boolean } } } }> } };
    };
    t.deepEqual(body.docvalue_fields, ['sentence_embeddings']);
    t.false(body._source.includes('sentence_embeddings'));
    t.is(body.query.hybrid.queries[1].script_score?.script.params.int8, int8);
  }
  const without = hybridSearchBody(
    { ...request, withSentenceVectors: false },
    'kbqa-chunks',
    'one',
    DEFAULT_HYBRID_TUNING,
  );
  t.false('docvalue_fields' in without);
});
