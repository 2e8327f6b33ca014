// Runs in a worker thread of the model pool (modelPool.ts): every inference and every split happens here, never on
// the API's event loop. Each worker loads its own ONNX session and tokenizer once, on its first task.
import { Piscina } from 'piscina';
import { BgeOnnxEmbeddings } from './bgeEmbeddings.ts';
import { splitDocument, type SplitResult } from './splitter.ts';

export interface ModelSettings {
  modelDir: string;
  /** ONNX Runtime intra-op threads of this worker's session. */
  threads: number;
  chunkTokens: number;
  overlapTokens: number;
  maxChars: number;
  /** Sentence units per padded inference call at ingestion (KBQA_SENTENCE_VECTORS=batched; modelPool.ts UNIT_BATCH). */
  unitBatch: number;
}

export type ModelTask =
  | { op: 'split'; settings: ModelSettings; content: string; markdown: boolean }
  /** Passages: exact mode (each unpadded), so a chunk's vector never depends on its batch neighbours. */
  | { op: 'embedPassages'; settings: ModelSettings; texts: string[] }
  | { op: 'embedQuery'; settings: ModelSettings; text: string }
  /**
   * Passages with their sentence units' late-chunked vectors (one unpadded pass each; lateChunking.ts): rows of each
   * passage's vector then its units', in order. A unit not found in its passage's window is embedded alone.
   */
  | { op: 'embedPassagesLate'; settings: ModelSettings; passages: Array<{ text: string; units: string[] }> }
  /** Ingestion's sentence units, batched: padded calls of `settings.unitBatch`, the texts sorted by length (less padding). */
  | { op: 'embedUnitsPadded'; settings: ModelSettings; texts: string[] }
  | { op: 'countTokens'; settings: ModelSettings; text: string };

/**
 * Vectors travel back as one flat Float32Array, one row per text, moved rather than copied. (Piscina moves only a
 * task's top-level result, so the array is the result itself.)
 */
export type VectorsResult = Float32Array;

interface LoadedModels {
  passages: BgeOnnxEmbeddings;
  units: BgeOnnxEmbeddings;
}

let loaded: Promise<LoadedModels> | undefined;

function models(settings: ModelSettings): Promise<LoadedModels> {
  loaded ??= (async () => {
    // One session and one tokenizer per worker (~120 MB together): the splitter counts tokens with the embedder's own.
    const passages = await BgeOnnxEmbeddings.load({ modelDir: settings.modelDir, threads: settings.threads });
    return { passages, units: passages.withBatchMode('padded', settings.unitBatch) };
  })();
  // A failed load is not cached: the next task tries again (the model file may have been provisioned since).
  loaded.catch(() => {
    loaded = undefined;
  });
  return loaded;
}

function flatten(vectors: number[][]): VectorsResult {
  const dimensions = vectors[0]?.length ?? 0;
  const flat = new Float32Array(vectors.length * dimensions);
  vectors.forEach((vector, row) => flat.set(vector, row * dimensions));
  return Piscina.move(flat) as Float32Array;
}

async function embedPassagesLate(
  embedder: BgeOnnxEmbeddings,
  passages: Array<{ text: string; units: string[] }>,
): Promise<number[][]> {
  const rows: number[][] = [];
  for (const passage of passages) {
    const { vector, units } = await embedder.embedPassageWithUnits(passage.text, passage.units);
    const missing = passage.units.filter((_, index) => units[index] === null);
    const alone = await embedder.embedDocuments(missing);
    let next = 0;
    rows.push(vector, ...units.map((unit) => unit ?? alone[next++]));
  }
  return rows;
}

export default async function run(task: ModelTask): Promise<SplitResult | VectorsResult | number> {
  const { passages, units } = await models(task.settings);
  switch (task.op) {
    case 'split':
      return splitDocument(task.content, task.markdown, {
        chunkTokens: task.settings.chunkTokens,
        overlapTokens: task.settings.overlapTokens,
        maxChars: task.settings.maxChars,
        countTokens: (text) => passages.countTokens(text),
      });
    case 'embedPassages':
      return flatten(await passages.embedDocuments(task.texts));
    case 'embedQuery':
      return flatten([await passages.embedQuery(task.text)]);
    case 'embedPassagesLate':
      return flatten(await embedPassagesLate(passages, task.passages));
    case 'embedUnitsPadded':
      return flatten(await units.embedDocuments(task.texts));
    case 'countTokens':
      return passages.countTokens(task.text);
  }
}
