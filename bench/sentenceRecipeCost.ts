// `node bench/sentenceRecipeCost.ts DATASET [--docs 60] [--rounds 3] [--out FILE]`: the raw embedder's chunks/s for
// each sentence-vector recipe (KBQA_SENTENCE_VECTORS) and none, on the first documents of a BEIR corpus, in one run
// of interleaved rounds (each round every recipe once, the order rotated): the machine's other load falls on all of
// them alike, so compare the ratios to `off`, not the absolute figures. The pool is the API's (KBQA_MODEL_WORKERS ×
// KBQA_EMBED_THREADS), 4 documents in flight, as bench/run.ts's raw-embedder phase.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../service/config.ts';
import { SENTENCE_VECTOR_RECIPES, type SentenceVectorRecipe } from '../service/configShape.ts';
import { corpusDocument, loadBeirDataset } from '../service/eval/beir.ts';
import { loadRag } from '../service/rag/index.ts';
import { rawEmbedderThroughput, type RawEmbedRun } from './ingest.ts';
import os from 'node:os';
import { percentile, round } from './stats.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    docs: { type: 'string', default: '60' },
    rounds: { type: 'string', default: '3' },
    out: { type: 'string' },
  },
});
if (positionals.length !== 1) {
  process.stderr.write('usage: node bench/sentenceRecipeCost.ts DATASET [--docs 60] [--rounds 3] [--out FILE]\n');
  process.exit(2);
}
const config = loadConfig();
const dataset = await loadBeirDataset(positionals[0], 'test');
const documents = dataset.corpus
  .map(corpusDocument)
  .filter((document) => document.content.trim().length > 0)
  .slice(0, Number(values.docs));
const rag = await loadRag(config);
const variants: Array<SentenceVectorRecipe | null> = [null, ...SENTENCE_VECTOR_RECIPES];
const runs: Record<string, RawEmbedRun[]> = {};
const pool = { concurrency: 4, threadsPerWorker: config.embedder.threads };
// A warm-up pass (not counted): the workers' first inferences of each length are slower.
await rawEmbedderThroughput(rag, documents.slice(0, 8), pool, 'late');
for (let round = 0; round < Number(values.rounds); round += 1) {
  for (let turn = 0; turn < variants.length; turn += 1) {
    const recipe = variants[(round + turn) % variants.length];
    const run = await rawEmbedderThroughput(rag, documents, pool, recipe);
    (runs[recipe ?? 'off'] ??= []).push(run);
    process.stderr.write(`round ${round + 1}, ${recipe ?? 'off'}: ${run.chunks_per_s} chunks/s\n`);
  }
}
await rag.close();
const medians = Object.fromEntries(
  Object.entries(runs).map(([name, list]) => [
    name,
    round(
      percentile(
        list.map((run) => run.chunks_per_s),
        50,
      ),
      2,
    ),
  ]),
);
const result = {
  kind: 'sentence-recipe-cost',
  dataset: dataset.name,
  documents: documents.length,
  chunks: runs.off[0].chunks,
  rounds: Number(values.rounds),
  workers: rag.models.workers,
  threads_per_worker: config.embedder.threads,
  concurrency: pool.concurrency,
  chunks_per_s: Object.fromEntries(
    Object.entries(runs).map(([name, list]) => [name, list.map((run) => run.chunks_per_s)]),
  ),
  median_chunks_per_s: medians,
  ratio_to_off: Object.fromEntries(
    Object.entries(medians).map(([name, value]) => [name, round(value / medians.off, 3)]),
  ),
  machine: { cores: os.availableParallelism(), load_average_at_end: os.loadavg().map((load) => round(load, 2)) },
  finished_at: new Date().toISOString(),
};
if (values.out) {
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
}
process.stdout.write(
  `${JSON.stringify({ median_chunks_per_s: medians, ratio_to_off: result.ratio_to_off }, null, 2)}\n`,
);
