// Ingest throughput: documents through POST /api/v1/documents at a given concurrency, and the raw embedder on the
// very same chunks in this process, on a model pool of the API's size kept as busy as the API keeps its own (the
// ceiling the API's ingest can approach on this machine).
import { titleFromFilename } from '../service/commands/documents.ts';
import { forEachConcurrently, type KbqaClient } from '../service/eval/apiClient.ts';
import type { SentenceVectorRecipe } from '../service/configShape.ts';
import type { Rag } from '../service/rag/index.ts';
import type { OpenSearchWork } from './indexStats.ts';
import { round, summarize } from './stats.ts';

export interface BenchDocument {
  filename: string;
  content: string;
}

export interface IngestRun {
  concurrency: number;
  knowledge_base_id: string;
  documents: number;
  chunks: number;
  seconds: number;
  documents_per_s: number;
  chunks_per_s: number;
  request_p50_ms: number;
  request_p95_ms: number;
  /** What OpenSearch spent on this ingest (filled in by runPhases.ts ingestPhase, from the stack's pids). */
  opensearch?: OpenSearchWork;
}

export async function ingestThroughApi(
  client: KbqaClient,
  knowledgeBaseId: string,
  documents: BenchDocument[],
  concurrency: number,
  onProgress?: (done: number, total: number) => void,
): Promise<IngestRun> {
  let chunks = 0;
  let done = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await forEachConcurrently(documents, concurrency, async (document) => {
    const requestStarted = performance.now();
    // Read the count first: `chunks += await …` would add to the value `chunks` had before the await (lost updates).
    const indexed = (await client.ingestDocument(knowledgeBaseId, document.filename, document.content)).chunks;
    chunks += indexed;
    latencies.push(performance.now() - requestStarted);
    done += 1;
    onProgress?.(done, documents.length);
  });
  const seconds = (performance.now() - started) / 1000;
  const summary = summarize(latencies);
  return {
    concurrency,
    knowledge_base_id: knowledgeBaseId,
    documents: documents.length,
    chunks,
    seconds: round(seconds, 2),
    documents_per_s: round(documents.length / seconds, 2),
    chunks_per_s: round(chunks / seconds, 2),
    request_p50_ms: summary.p50_ms,
    request_p95_ms: summary.p95_ms,
  };
}

export interface RawEmbedRun {
  /** Documents whose embedSegments were in flight at once (the API's ingest concurrency it is compared with). */
  concurrency: number;
  /** How the chunks' sentence vectors were computed (KBQA_SENTENCE_VECTORS's recipe), `off` for none. */
  sentence_vectors?: SentenceVectorRecipe | 'off';
  /** The model pool: worker threads, and ONNX intra-op threads per worker (the API process's own settings). */
  workers: number;
  threads_per_worker: number;
  documents: number;
  chunks: number;
  seconds: number;
  chunks_per_s: number;
  split_seconds: number;
}

/**
 * The ceiling of the API's ingest: the same documents split as the API splits them, then rag.embedSegments (the
 * API's call, in tasks of KBQA_EMBED_BATCH_SIZE passages submitted at once) for `concurrency` documents at a time,
 * on a model pool of the API's size, with the sentence vectors `recipe` says (null: none). Only the embedding is
 * timed; splitting is reported beside it.
 */
export async function rawEmbedderThroughput(
  rag: Rag,
  documents: BenchDocument[],
  pool: { concurrency: number; threadsPerWorker: number },
  recipe: SentenceVectorRecipe | null,
): Promise<RawEmbedRun> {
  const splitStarted = performance.now();
  const prepared: Array<{ title: string; segments: Awaited<ReturnType<Rag['split']>>['segments'] }> = new Array(
    documents.length,
  );
  await forEachConcurrently(documents, pool.concurrency, async (document, index) => {
    let { segments } = await rag.split(document.content, document.filename);
    if (segments.length === 0) ({ segments } = await rag.split(document.content, ''));
    prepared[index] = { title: titleFromFilename(document.filename), segments };
  });
  const splitSeconds = (performance.now() - splitStarted) / 1000;
  let chunks = 0;
  const started = performance.now();
  await forEachConcurrently(prepared, pool.concurrency, async ({ title, segments }) => {
    // Read the count first: `chunks += await …` would add to the value `chunks` had before the await.
    const embedded = (await rag.embedSegments(title, segments, undefined, recipe)).length;
    chunks += embedded;
  });
  const seconds = (performance.now() - started) / 1000;
  return {
    concurrency: pool.concurrency,
    sentence_vectors: recipe ?? 'off',
    workers: rag.models.workers,
    threads_per_worker: pool.threadsPerWorker,
    documents: documents.length,
    chunks,
    seconds: round(seconds, 2),
    chunks_per_s: round(chunks / seconds, 2),
    split_seconds: round(splitSeconds, 2),
  };
}
