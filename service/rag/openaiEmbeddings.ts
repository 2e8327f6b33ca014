// The OpenAI-compatible embedder: LangChain's OpenAIEmbeddings against KBQA_OPENAI_BASE_URL. Its vectors' length is
// read from the model (a probe text embedded at start-up), not configured: an index is built to the size the model
// really answers with. An HTTP call, not an inference: nothing heavy runs on the event loop.
//
// - Passages go in batches of at most OPENAI_BATCH_INPUTS inputs per request, each input the same text the local
//   embedder gets (splitter.ts embeddingInput); questions go as they are (no instruction prefix: that is bge's).
// - Calls are retried with our policy (retries.ts: transient failures only, backing off) within
//   KBQA_LLM_MAX_RETRIES, each attempt bounded by KBQA_LLM_TIMEOUT_MS; what still fails is thrown as it was (rag
//   turns it into a 503).
// - Questions and passages have a client each: LangChain queues a client's calls, and a question must not wait
//   behind a document's batches (the model pool's two lanes, for the same reason).
import { OpenAIEmbeddings } from '@langchain/openai';
import type { OpenAIEmbedderConfig } from '../config.ts';
import { openaiEmbedderName, type EmbedderIdentity } from './embedderIdentity.ts';
import { retryTransient } from './retries.ts';

/** Inputs per embeddings request (OpenAI takes up to 2048; smaller requests fail and retry cheaper). */
export const OPENAI_BATCH_INPUTS = 64;
/** Requests in flight at once: a document's batches, and questions (on their own client). */
const PASSAGE_REQUESTS = 4;
const QUESTION_REQUESTS = 16;
/** Start-up asks this many times (backing off 0.25 s, 0.5 s, 1 s, 2 s) before reporting the embedder not ready. */
export const OPENAI_STARTUP_ATTEMPTS = 5;
/** A call that succeeded this recently answers for readiness: /readyz polled every second costs no request. */
const READY_FOR_MS = 30_000;
const PROBE_TEXT = 'ready';

export class OpenAIEmbedder {
  /** openai-<model>[-<dimensions>]: the name the chunk index carries. */
  readonly modelName: string;
  readonly #model: string;
  readonly #attempts: number;
  readonly #questions: OpenAIEmbeddings;
  readonly #passages: OpenAIEmbeddings;
  #dimensions: number | null = null;
  #lastSuccessAt = Number.NEGATIVE_INFINITY;
  /** The last call's failure, when no call has succeeded since. */
  #failure: unknown = null;

  constructor(config: OpenAIEmbedderConfig) {
    this.modelName = openaiEmbedderName(config.model, config.dimensions);
    this.#model = config.model;
    this.#attempts = 1 + config.maxRetries;
    const client = (maxConcurrency: number) =>
      new OpenAIEmbeddings({
        model: config.model,
        apiKey: config.apiKey,
        configuration: { baseURL: config.baseUrl },
        ...(config.dimensions === null ? {} : { dimensions: config.dimensions }),
        timeout: config.timeoutMs,
        // Retries are ours (retries.ts), per batch, so one failed batch does not resend the others.
        maxRetries: 0,
        maxConcurrency,
        batchSize: OPENAI_BATCH_INPUTS,
        // The input is exactly what the local embedder gets; current models take newlines as they are.
        stripNewLines: false,
      });
    this.#questions = client(QUESTION_REQUESTS);
    this.#passages = client(PASSAGE_REQUESTS);
  }

  /** Name and vector length; null until the model has answered once (the length is read from its answer). */
  identity(): EmbedderIdentity | null {
    return this.#dimensions === null ? null : { modelName: this.modelName, dimensions: this.#dimensions };
  }

  /**
   * Learns the vector length: embeds a probe text, up to `attempts` times while the failure is transient. Never
   * throws: a model that does not answer is the embedder's readiness problem, and every call needing it a 503.
   */
  async load(attempts: number = OPENAI_STARTUP_ATTEMPTS): Promise<void> {
    await retryTransient(attempts, undefined, () => this.#embed(this.#questions, [PROBE_TEXT])).catch(() => undefined);
  }

  /** For /readyz: null when the model answered lately (or answers a probe now); throws what failed. */
  async problem(): Promise<string | null> {
    if (this.#failure === null && performance.now() - this.#lastSuccessAt < READY_FOR_MS) return null;
    await this.#embed(this.#questions, [PROBE_TEXT]);
    return null;
  }

  async embedQuery(text: string): Promise<number[]> {
    const [vector] = await retryTransient(this.#attempts, undefined, () => this.#embed(this.#questions, [text]));
    return vector;
  }

  /** Vectors in the order of `texts`: batches of OPENAI_BATCH_INPUTS, sent together, each retried on its own. */
  async embedPassages(texts: string[]): Promise<number[][]> {
    const batches: Promise<number[][]>[] = [];
    for (let start = 0; start < texts.length; start += OPENAI_BATCH_INPUTS) {
      const batch = texts.slice(start, start + OPENAI_BATCH_INPUTS);
      batches.push(retryTransient(this.#attempts, undefined, () => this.#embed(this.#passages, batch)));
    }
    return (await Promise.all(batches)).flat();
  }

  /** One request; checks the answer's shape, learns the vector length from the first, remembers how it went. */
  async #embed(client: OpenAIEmbeddings, texts: string[]): Promise<number[][]> {
    try {
      const vectors = await client.embedDocuments(texts);
      this.#check(texts.length, vectors);
      this.#dimensions ??= vectors[0].length;
      this.#lastSuccessAt = performance.now();
      this.#failure = null;
      return vectors;
    } catch (error) {
      this.#failure = error;
      throw error;
    }
  }

  #check(expected: number, vectors: number[][]): void {
    if (vectors.length !== expected) {
      throw new Error(
        `the embeddings endpoint answered ${vectors.length} vectors for ${expected} inputs (model ${this.#model})`,
      );
    }
    const length = this.#dimensions ?? vectors[0]?.length;
    for (const vector of vectors) {
      if (!Array.isArray(vector) || vector.length === 0 || vector.length !== length || !vector.every(Number.isFinite)) {
        throw new Error(
          `the embeddings endpoint answered a ${Array.isArray(vector) ? vector.length : 'malformed'}-dimensional vector where ${length} were expected ` +
            `(model ${this.#model}: has the model behind KBQA_OPENAI_BASE_URL changed?)`,
        );
      }
    }
  }
}
