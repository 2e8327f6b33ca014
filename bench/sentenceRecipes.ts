// `node bench/sentenceRecipes.ts DATASET [--split dev] [--recipes late,…] [--reference INDEX:KB] [--out FILE]`: retrieval quality of the sentence
// vectors' recipes (KBQA_SENTENCE_VECTORS) on a BEIR dataset, without ingesting it once per recipe through the API.
// Each document is split as the API splits it and embedded once with late chunking (its passage vectors are every
// recipe's: the same unpadded pass), its sentence units once alone (separate) and once in padded batches (batched);
// each recipe's chunks go into a KB of their own in this process's chunk alias (KBQA_CHUNKS_ALIAS: use your own);
// then every judged query runs through the search module's hybridSearch on each KB, and once with sentence weight 0
// (`off`: the same passages without the sentence term). Writes a JSON record with nDCG@10 per recipe.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../service/config.ts';
import { titleFromFilename } from '../service/commands/documents.ts';
import { forEachConcurrently } from '../service/eval/apiClient.ts';
import { corpusDocument, corpusIdFromFilename, loadBeirDataset, sliceDataset } from '../service/eval/beir.ts';
import { averageMetrics, collapseToDocuments } from '../service/eval/metrics.ts';
import { embedUnitsBatched, loadRag, segmentSentences, type SegmentEmbedding } from '../service/rag/index.ts';
import { openConfiguredSearchIndex, type ChunkDocument } from '../service/search/index.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    split: { type: 'string', default: 'dev' },
    out: { type: 'string' },
    limit: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    recipes: { type: 'string', default: 'separate,late,batched' },
    reference: { type: 'string' },
    'sentence-weights': { type: 'string' },
  },
});
if (positionals.length !== 1) {
  process.stderr.write('usage: node bench/sentenceRecipes.ts DATASET [--split dev] [--out FILE] [--limit N]\n');
  process.exit(2);
}
const ALL_RECIPES = ['separate', 'late', 'batched'] as const;
type Recipe = (typeof ALL_RECIPES)[number];
const RECIPES = ALL_RECIPES.filter((recipe) => values.recipes.split(',').includes(recipe));
const DEPTH = 50;

const config = loadConfig();
const full = await loadBeirDataset(positionals[0], values.split);
const dataset = values.limit ? sliceDataset(full, Number(values.limit)) : full;
const rag = await loadRag(config);
const search = openConfiguredSearchIndex(config, rag.embedder);
await search.applyAssets();
const knowledgeBase = (recipe: Recipe) => `sentence-recipe-${recipe}`;

// Resumable: a document whose chunks every asked recipe's KB holds is not embedded again.
const present = new Map<string, number>();
for (const group of await search.listChunkGroups(RECIPES.map(knowledgeBase)))
  if (group.has_first_chunk) {
    const id = group.document_id.slice(group.document_id.indexOf(':') + 1);
    present.set(id, (present.get(id) ?? 0) + 1);
  }
const pending = dataset.corpus.filter((entry) => (present.get(entry._id) ?? 0) < RECIPES.length);
process.stderr.write(`${dataset.corpus.length - pending.length} documents indexed already, ${pending.length} to go\n`);

const started = Date.now();
let done = 0;
let chunks = 0;
let units = 0;
const createdAt = new Date().toISOString();
await forEachConcurrently(pending, Number(values.concurrency), async (entry) => {
  const { filename, content } = corpusDocument(entry);
  if (content.trim().length === 0) return;
  let { segments } = await rag.split(content, filename);
  if (segments.length === 0) ({ segments } = await rag.split(content, ''));
  const title = titleFromFilename(filename);
  const late = await rag.embedSegments(title, segments, undefined, 'late');
  const sentences = segments.map((segment) => segmentSentences(segment));
  const flat = sentences.flat();
  const [alone, batched] = await Promise.all([
    RECIPES.includes('separate') ? rag.models.embedPassages(flat) : [],
    RECIPES.includes('batched') && flat.length ? embedUnitsBatched(flat, rag.models) : [],
  ]);
  const withUnits = (vectors: number[][]): SegmentEmbedding[] => {
    let next = 0;
    return late.map(({ vector }, index) => ({ vector, sentences: sentences[index].map(() => vectors[next++]) }));
  };
  const byRecipe: Record<Recipe, () => SegmentEmbedding[]> = {
    late: () => late,
    separate: () => withUnits(alone),
    batched: () => withUnits(batched),
  };
  const documents: ChunkDocument[] = RECIPES.flatMap((recipe) => {
    const embedded = byRecipe[recipe]();
    return segments.map((segment, index) => ({
      chunk_id: `${recipe}:${entry._id}:${index}`,
      knowledge_base_id: knowledgeBase(recipe),
      document_id: `${recipe}:${entry._id}`,
      document_version: 1,
      filename,
      title,
      heading_path: segment.heading_path,
      chunk_index: index,
      page_start: null,
      page_end: null,
      text: segment.text,
      embedding: embedded[index].vector,
      ...(sentences[index].length ? { sentence_embeddings: embedded[index].sentences } : {}),
      embedder: rag.embedder.modelName,
      created_at: createdAt,
    }));
  });
  await search.indexChunks(documents);
  chunks += segments.length;
  units += flat.length;
  done += 1;
  if (done % 250 === 0)
    process.stderr.write(
      `${done}/${dataset.corpus.length} documents, ${chunks} chunks, ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
    );
});
await search.refreshChunks();
const embedSeconds = (Date.now() - started) / 1000;

const judged = [...dataset.qrels.keys()].filter((id) => dataset.queries.has(id));
const vectors = new Map<string, number[]>();
for (const id of judged) vectors.set(id, await rag.embedQuestion(dataset.queries.get(id) ?? ''));
const rows: Record<string, ReturnType<typeof averageMetrics>> = {};
// --reference INDEX:KB: a KB ingested through the API (e.g. with today's recipe), scored by the same queries.
const [referenceIndex, referenceKnowledgeBase] = values.reference?.split(':') ?? [];
const variants: Array<{ name: string; knowledgeBaseId: string; index?: string; sentenceWeight?: number }> = [
  ...RECIPES.map((recipe) => ({ name: recipe, knowledgeBaseId: knowledgeBase(recipe) })),
  { name: 'off (sentence weight 0)', knowledgeBaseId: knowledgeBase(RECIPES[0]), sentenceWeight: 0 },
  // --sentence-weights 0.25,1: each recipe again at other weights (a recipe's cosines may want another).
  ...RECIPES.flatMap((recipe) =>
    (values['sentence-weights']?.split(',') ?? []).map((weight) => ({
      name: `${recipe}, sentence weight ${weight}`,
      knowledgeBaseId: knowledgeBase(recipe),
      sentenceWeight: Number(weight),
    })),
  ),
  ...(referenceIndex
    ? [{ name: `reference ${values.reference}`, knowledgeBaseId: referenceKnowledgeBase, index: referenceIndex }]
    : []),
];
for (const { name, knowledgeBaseId, index, sentenceWeight } of variants) {
  const rankings: Array<{ ranked: string[]; relevant: Map<string, number> }> = [];
  await forEachConcurrently(judged, 4, async (id) => {
    const hits = await search.hybridSearch(
      {
        text: dataset.queries.get(id) ?? '',
        vector: vectors.get(id) ?? [],
        knowledgeBaseIds: [knowledgeBaseId],
        ...(index ? { index } : {}),
        size: DEPTH,
        depth: DEPTH,
        rankingOnly: true,
      },
      sentenceWeight === undefined ? undefined : { sentenceWeight },
      { inlinePipeline: true },
    );
    rankings.push({
      ranked: collapseToDocuments(hits.map((hit) => corpusIdFromFilename(hit.filename))),
      relevant: dataset.qrels.get(id) ?? new Map(),
    });
  });
  rows[name] = averageMetrics(rankings);
  process.stderr.write(`${name}: nDCG@10 ${rows[name].ndcg_at_10.toFixed(4)}\n`);
}
const result = {
  kind: 'sentence-recipes',
  dataset: dataset.name,
  split: values.split,
  documents: dataset.corpus.length,
  documents_embedded_by_this_run: done,
  chunks_embedded_by_this_run: chunks,
  sentence_units_embedded_by_this_run: units,
  queries: judged.length,
  embed_seconds: embedSeconds,
  recipes_indexed: RECIPES,
  sentence_weight: config.opensearch.sentenceWeight,
  chunking: { chunk_tokens: config.chunking.chunkTokens, overlap_tokens: config.chunking.overlapTokens },
  recipes: rows,
  finished_at: new Date().toISOString(),
};
if (values.out) {
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
}
process.stdout.write(`${JSON.stringify(result.recipes, null, 2)}\n`);
await Promise.allSettled([search.close(), rag.close()]);
