// `node bench/sentenceVectorError.ts --source INDEX DATASET [--chunks 600] [--queries 100] [--out FILE]`: how far
// int8 sentence vectors (template v3, service/search/sentenceVectors.ts) move the cosines the query's script and the
// extractive answerer compute, against the float32 vectors they were made from. Real data: the first --chunks chunks
// of an existing index with float32 sentence vectors (read only) and the dataset's first --queries dev questions,
// embedded as the service embeds a question. Every (question, sentence) pair: |cos int8 − cos float32|; every
// (question, chunk): whether the best sentence is the same one, and how far the script's sentence term
// ((1 + best cos) / 2) moves. Both compute cosine = dot / (‖stored‖ ‖question‖), the script in double from the
// stored bytes, the answerer in double from the decoded vector: one formula, computed here once.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../service/config.ts';
import { loadBeirDataset } from '../service/eval/beir.ts';
import { cosine } from '../service/rag/extractiveAnswerer.ts';
import { loadRag } from '../service/rag/index.ts';
import { openSearchIndex } from '../service/search/index.ts';
import { decodeEmbedding } from '../service/search/retrieval.ts';
import { decodeSentenceVectors, encodeSentenceVectors } from '../service/search/sentenceVectors.ts';
import { benchSearchOptions } from './searchOptions.ts';
import { percentile, round } from './stats.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    source: { type: 'string' },
    chunks: { type: 'string', default: '600' },
    queries: { type: 'string', default: '100' },
    out: { type: 'string' },
  },
});
if (!values.source || positionals.length !== 1) {
  process.stderr.write(
    'usage: node bench/sentenceVectorError.ts --source INDEX DATASET [--chunks 600] [--queries 100] [--out FILE]\n',
  );
  process.exit(2);
}

const config = loadConfig();
const search = openSearchIndex(benchSearchOptions(config, values.source));
const response = await search.request<{
  hits: { hits: Array<{ _source: { embedding_b64: string; sentence_embeddings?: string } }> };
}>('POST', `/${values.source}/_search`, {
  body: {
    size: Number(values.chunks),
    sort: [{ chunk_id: 'asc' }],
    query: { exists: { field: 'sentence_embeddings' } },
    _source: ['embedding_b64', 'sentence_embeddings'],
  },
});
await search.close();
const chunks = response.hits.hits.map(({ _source: source }) => {
  const dimensions = decodeEmbedding(source.embedding_b64).length;
  const float32 = decodeSentenceVectors(source.sentence_embeddings, dimensions, 'float32');
  const int8 = decodeSentenceVectors(encodeSentenceVectors(float32, 'int8'), dimensions, 'int8');
  return { float32, int8 };
});
const dataset = await loadBeirDataset(positionals[0], 'dev');
const questions = [...dataset.qrels.keys()]
  .map((id) => dataset.queries.get(id))
  .filter((text): text is string => text !== undefined)
  .slice(0, Number(values.queries));
const rag = await loadRag(config);
const vectors = await Promise.all(questions.map((question) => rag.embedQuestion(question)));
await rag.close();

const pairErrors: number[] = [];
const termErrors: number[] = [];
let sameBest = 0;
let chunkPairs = 0;
for (const question of vectors) {
  for (const chunk of chunks) {
    const exact = chunk.float32.map((vector) => cosine(question, vector));
    const quantized = chunk.int8.map((vector) => cosine(question, vector));
    for (let index = 0; index < exact.length; index += 1) pairErrors.push(Math.abs(exact[index] - quantized[index]));
    const bestExact = Math.max(...exact);
    const bestQuantized = Math.max(...quantized);
    termErrors.push(Math.abs((1 + bestExact) / 2 - (1 + bestQuantized) / 2));
    if (exact.indexOf(bestExact) === quantized.indexOf(bestQuantized)) sameBest += 1;
    chunkPairs += 1;
  }
}
const result = {
  kind: 'sentence-vector-int8-error',
  method:
    `${chunks.length} chunks with sentence vectors (${chunks.reduce((sum, chunk) => sum + chunk.float32.length, 0)} sentences) from ${values.source}, ` +
    `${questions.length} ${dataset.name} dev questions embedded as the service embeds a question; int8 as template v3 stores it (each vector over its largest |component|, × 127, rounded)`,
  question_sentence_pairs: pairErrors.length,
  cosine_abs_error: {
    max: round(
      pairErrors.reduce((largest, error) => Math.max(largest, error), 0),
      5,
    ),
    p99: round(percentile(pairErrors, 99), 5),
    p50: round(percentile(pairErrors, 50), 5),
  },
  question_chunk_pairs: chunkPairs,
  same_best_sentence: round(sameBest / chunkPairs, 4),
  sentence_term_abs_error: {
    max: round(
      termErrors.reduce((largest, error) => Math.max(largest, error), 0),
      5,
    ),
    p99: round(percentile(termErrors, 99), 5),
  },
  finished_at: new Date().toISOString(),
};
if (values.out) {
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
}
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
