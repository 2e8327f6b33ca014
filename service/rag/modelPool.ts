// The model pool: `workers` threads, each with its own ONNX session and tokenizer (modelWorker.ts). The event loop
// only posts texts and awaits vectors, so /healthz and every other request stay fast while models run.
//
// Two lanes: interactive work (a question's embedding, the extractive answerer's sentences) always goes before
// background work (document splitting and passage embedding). Piscina's own queue is first-in first-out, so the
// pool hands piscina at most one task per worker and keeps the rest in its own two queues: a question waits for at
// most one running background task, never for a whole document.
import os from 'node:os';
import { Piscina } from 'piscina';
import type { SplitResult } from './splitter.ts';
import type { ModelSettings, ModelTask, VectorsResult } from './modelWorker.ts';

export type Lane = 'interactive' | 'background';

export interface ModelPoolOptions extends Omit<ModelSettings, 'threads'> {
  /** Worker threads (default: the number of cores). */
  workers?: number;
  /** ONNX Runtime intra-op threads per worker (default 1: the workers are the parallelism). */
  threadsPerWorker?: number;
}

export interface ModelPool {
  readonly workers: number;
  split(content: string, markdown: boolean): Promise<SplitResult>;
  embedPassages(texts: string[]): Promise<number[][]>;
  embedQuery(text: string): Promise<number[]>;
  embedSentences(texts: string[]): Promise<number[][]>;
  countTokens(text: string): Promise<number>;
  /** Tasks waiting for a worker, per lane (for metrics and tests). */
  queued(): { interactive: number; background: number };
  close(): Promise<void>;
}

interface Waiting {
  task: ModelTask;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

function rows(flat: VectorsResult, count: number): number[][] {
  const dimensions = flat.length / count;
  const vectors: number[][] = [];
  for (let offset = 0; offset < flat.length; offset += dimensions) vectors.push(Array.from(flat.subarray(offset, offset + dimensions)));
  return vectors;
}

export function startModelPool(options: ModelPoolOptions): ModelPool {
  const workers = options.workers ?? os.availableParallelism();
  const settings: ModelSettings = {
    modelDir: options.modelDir,
    threads: options.threadsPerWorker ?? 1,
    chunkTokens: options.chunkTokens,
    overlapTokens: options.overlapTokens,
    maxChars: options.maxChars,
  };
  const pool = new Piscina<ModelTask, unknown>({
    filename: new URL('./modelWorker.ts', import.meta.url).href,
    // Every worker stays up: loading a session takes ~0.3 s, which a question must never wait for.
    minThreads: workers,
    maxThreads: workers,
    idleTimeout: Number.POSITIVE_INFINITY,
    concurrentTasksPerWorker: 1,
  });
  const lanes: Record<Lane, Waiting[]> = { interactive: [], background: [] };
  let running = 0;

  function dispatch(): void {
    while (running < workers) {
      const next = lanes.interactive.shift() ?? lanes.background.shift();
      if (!next) return;
      running += 1;
      pool.run(next.task).then(next.resolve, next.reject).finally(() => {
        running -= 1;
        dispatch();
      });
    }
  }

  function submit<T>(lane: Lane, task: ModelTask): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      lanes[lane].push({ task, resolve: resolve as (value: unknown) => void, reject });
      dispatch();
    });
  }

  return {
    workers,
    split: (content, markdown) => submit<SplitResult>('background', { op: 'split', settings, content, markdown }),
    embedPassages: async (texts) =>
      texts.length === 0 ? [] : rows(await submit<VectorsResult>('background', { op: 'embedPassages', settings, texts }), texts.length),
    embedQuery: async (text) => rows(await submit<VectorsResult>('interactive', { op: 'embedQuery', settings, text }), 1)[0],
    // A question's few sentences are spread over the workers (each part one padded call): an idle pool answers in
    // the time of the largest part, not of the whole batch on one thread.
    embedSentences: async (texts) => {
      const parts = Math.min(workers, texts.length);
      const size = Math.ceil(texts.length / Math.max(1, parts));
      const tasks: Promise<number[][]>[] = [];
      for (let start = 0; start < texts.length; start += size) {
        const part = texts.slice(start, start + size);
        tasks.push(submit<VectorsResult>('interactive', { op: 'embedSentences', settings, texts: part }).then((flat) => rows(flat, part.length)));
      }
      return (await Promise.all(tasks)).flat();
    },
    countTokens: (text) => submit<number>('interactive', { op: 'countTokens', settings, text }),
    queued: () => ({ interactive: lanes.interactive.length, background: lanes.background.length }),
    async close() {
      const error = new Error('the model pool is closed');
      for (const lane of Object.values(lanes)) for (const waiting of lane.splice(0)) waiting.reject(error);
      await pool.destroy();
    },
  };
}
