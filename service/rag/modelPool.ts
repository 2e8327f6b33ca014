// The model pool: `workers` threads, each with its own ONNX session and tokenizer (modelWorker.ts). The event loop
// only posts texts and awaits vectors, so /healthz and every other request stay fast while models run.
//
// Two lanes: interactive work (a question's embedding, a token count) always goes before
// background work (document splitting and passage embedding). Piscina's own queue is first-in first-out, so the
// pool hands piscina at most one task per worker and keeps the rest in its own two queues: a question never waits
// for a whole document. And for INTERACTIVE_RESERVE_MS after a question, background work leaves one worker free,
// so the next question does not even wait for a passage. Questions are taken round-robin by who asked them (their
// user), each user's in order: one user's burst of questions delays another's by at most one task per worker; and
// heavy questions (over HEAVY_QUESTION_CHARS) go after the usual ones and never hold every worker.
import os from 'node:os';
import { Piscina } from 'piscina';
import { FairQueue } from '../fairQueue.ts';
import type { SplitResult } from './splitter.ts';
import type { ModelSettings, ModelTask, VectorsResult } from './modelWorker.ts';

export type Lane = 'interactive' | 'background';

/** Sentence units per padded inference call at ingestion (KBQA_SENTENCE_VECTORS=batched). */
export const UNIT_BATCH = 16;

/**
 * A question longer than this (~250 tokens) is heavy: one inference of it takes a worker 10–25 times as long as a
 * usual question's. Heavy questions hold at most all workers but one, so a usual question never waits behind one.
 */
export const HEAVY_QUESTION_CHARS = 1_000;

/** How long after a question background work leaves one worker to questions. */
export const INTERACTIVE_RESERVE_MS = 2_000;

export interface ModelPoolOptions extends Omit<ModelSettings, 'threads' | 'unitBatch'> {
  /** Worker threads (default: the number of cores). */
  workers?: number;
  /** ONNX Runtime intra-op threads per worker (default 1: the workers are the parallelism). */
  threadsPerWorker?: number;
  /** How long after a question one worker stays kept for questions (default INTERACTIVE_RESERVE_MS). */
  interactiveReserveMs?: number;
}

export interface ModelPool {
  readonly workers: number;
  split(content: string, markdown: boolean): Promise<SplitResult>;
  embedPassages(texts: string[]): Promise<number[][]>;
  /** A question's vector (interactive lane), in `asker`'s turn: the lane is served round-robin by asker. */
  embedQuery(text: string, asker?: string): Promise<number[]>;
  /** Passages (background lane) with their units' late-chunked vectors: one pass each (modelWorker.ts). */
  embedPassagesLate(passages: Array<{ text: string; units: string[] }>): Promise<PassageVectors[]>;
  /** Ingestion's sentence units (background lane) in padded calls, sorted by length (modelWorker.ts). */
  embedUnitsPadded(texts: string[]): Promise<number[][]>;
  countTokens(text: string, asker?: string): Promise<number>;
  /** Tasks waiting for a worker, per lane (for metrics and tests). */
  queued(): { interactive: number; background: number };
  /** Read-only, for metrics: the workers, and per lane the tasks running on them and the tasks waiting. */
  stats(): ModelPoolStats;
  close(): Promise<void>;
}

export interface ModelPoolStats {
  workers: number;
  running: Record<Lane, number>;
  queued: Record<Lane, number>;
}

/** A passage's vector and its units'. */
export interface PassageVectors {
  vector: number[];
  units: number[][];
}

interface Waiting {
  task: ModelTask;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

function rows(flat: VectorsResult, count: number): number[][] {
  const dimensions = flat.length / count;
  const vectors: number[][] = [];
  for (let offset = 0; offset < flat.length; offset += dimensions)
    vectors.push(Array.from(flat.subarray(offset, offset + dimensions)));
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
    unitBatch: UNIT_BATCH,
  };
  const pool = new Piscina<ModelTask, unknown>({
    filename: new URL('./modelWorker.ts', import.meta.url).href,
    // Every worker stays up: loading a session takes ~0.3 s, which a question must never wait for.
    minThreads: workers,
    maxThreads: workers,
    idleTimeout: Number.POSITIVE_INFINITY,
    concurrentTasksPerWorker: 1,
  });
  const lanes = new LaneScheduler(pool, workers, options.interactiveReserveMs ?? INTERACTIVE_RESERVE_MS);
  const submit = <T>(lane: Lane, task: ModelTask, asker?: string) => lanes.submit<T>(lane, task, asker);
  return {
    workers,
    split: (content, markdown) => submit<SplitResult>('background', { op: 'split', settings, content, markdown }),
    embedPassages: async (texts) =>
      texts.length === 0
        ? []
        : rows(await submit<VectorsResult>('background', { op: 'embedPassages', settings, texts }), texts.length),
    embedPassagesLate: async (passages) => {
      if (passages.length === 0) return [];
      const count = passages.reduce((sum, passage) => sum + 1 + passage.units.length, 0);
      const vectors = rows(
        await submit<VectorsResult>('background', { op: 'embedPassagesLate', settings, passages }),
        count,
      );
      let next = 0;
      return passages.map((passage) => ({
        vector: vectors[next++],
        units: passage.units.map(() => vectors[next++]),
      }));
    },
    embedUnitsPadded: async (texts) =>
      texts.length === 0
        ? []
        : rows(await submit<VectorsResult>('background', { op: 'embedUnitsPadded', settings, texts }), texts.length),
    embedQuery: async (text, asker) =>
      rows(await submit<VectorsResult>('interactive', { op: 'embedQuery', settings, text }, asker), 1)[0],
    countTokens: (text, asker) => submit<number>('interactive', { op: 'countTokens', settings, text }, asker),
    queued: () => lanes.queued(),
    stats: () => ({ workers, running: lanes.running(), queued: lanes.queued() }),
    async close() {
      await lanes.close();
      await pool.destroy();
    },
  };
}

/**
 * The two lanes in front of piscina: it is handed at most one task per worker, the rest wait here, so the order
 * the file's opening describes (questions first, by asker; heavy ones never on every worker; a worker kept for
 * questions after one) is decided here and not by piscina's first-in first-out queue.
 */
class LaneScheduler {
  // Questions by asker, in turn; document work first come, first served (the ingestion jobs are scheduled fairly
  // before they reach the pool: jobs/scheduling.ts).
  readonly #questions = new FairQueue<Waiting>();
  readonly #heavyQuestions = new FairQueue<Waiting>();
  #runningHeavy = 0;
  readonly #background: Waiting[] = [];
  readonly #runningIn: Record<Lane, number> = { interactive: 0, background: 0 };
  // While questions are being asked, background work keeps one worker free for them: a question then never waits
  // for a passage of someone's upload. Without questions, background work has every worker.
  #lastInteractive = Number.NEGATIVE_INFINITY;
  #wakeUp: NodeJS.Timeout | undefined;
  readonly #inFlight = new Set<Promise<unknown>>();

  readonly #pool: Piscina<ModelTask, unknown>;
  readonly #workers: number;
  readonly #reserveMs: number;

  constructor(pool: Piscina<ModelTask, unknown>, workers: number, reserveMs: number) {
    this.#pool = pool;
    this.#workers = workers;
    this.#reserveMs = reserveMs;
  }

  /** `asker` names whose turn a question waits for (anyone's but a user's: the empty string). */
  submit<T>(lane: Lane, task: ModelTask, asker = ''): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const waiting = { task, resolve: resolve as (value: unknown) => void, reject };
      if (lane === 'interactive') {
        this.#lastInteractive = performance.now();
        const heavy = task.op === 'embedQuery' && task.text.length > HEAVY_QUESTION_CHARS;
        (heavy ? this.#heavyQuestions : this.#questions).push(asker, waiting);
      } else this.#background.push(waiting);
      this.#dispatch();
    });
  }

  queued(): Record<Lane, number> {
    return {
      interactive: this.#questions.length + this.#heavyQuestions.length,
      background: this.#background.length,
    };
  }

  running(): Record<Lane, number> {
    return { ...this.#runningIn };
  }

  /** Rejects every waiting task, then lets running inferences end. */
  async close(): Promise<void> {
    if (this.#wakeUp) clearTimeout(this.#wakeUp);
    const error = new Error('the model pool is closed');
    for (const waiting of [...this.#questions.drain(), ...this.#heavyQuestions.drain(), ...this.#background.splice(0)])
      waiting.reject(error);
    // Let running inferences end first: terminating a worker inside a native ONNX call can abort the process.
    await Promise.allSettled([...this.#inFlight]);
  }

  #start(lane: Lane, next: Waiting, heavy = false): void {
    this.#runningIn[lane] += 1;
    if (heavy) this.#runningHeavy += 1;
    const running = this.#pool
      .run(next.task)
      .then(next.resolve, next.reject)
      .finally(() => {
        this.#runningIn[lane] -= 1;
        if (heavy) this.#runningHeavy -= 1;
        this.#inFlight.delete(running);
        this.#dispatch();
      });
    this.#inFlight.add(running);
  }

  #dispatch(): void {
    const workers = this.#workers;
    while (this.#runningIn.interactive + this.#runningIn.background < workers) {
      const question = this.#questions.shift();
      if (question) {
        this.#start('interactive', question);
        continue;
      }
      // Heavy questions leave one worker to the others' usual ones (on one worker they take it in turn).
      if (this.#heavyQuestions.length > 0 && (workers === 1 || this.#runningHeavy < workers - 1)) {
        this.#start('interactive', this.#heavyQuestions.shift()!, true);
        continue;
      }
      if (this.#background.length === 0) return;
      const sinceQuestion = performance.now() - this.#lastInteractive;
      const reserved = workers > 1 && sinceQuestion < this.#reserveMs ? 1 : 0;
      if (this.#runningIn.background >= workers - reserved) {
        // Look again when the reservation lapses, in case no task ends before then.
        if (!this.#wakeUp) {
          this.#wakeUp = setTimeout(
            () => {
              this.#wakeUp = undefined;
              this.#dispatch();
            },
            this.#reserveMs - sinceQuestion + 1,
          );
          this.#wakeUp.unref();
        }
        return;
      }
      this.#start('background', this.#background.shift()!);
    }
  }
}
