// The RAG module: the model pool (embedder and splitter in worker threads), and the answer models. Only service/rag/
// talks to models, and no inference runs on the event loop.
import type { Config } from '../config.ts';
import { UpstreamUnavailableError } from '../errors.ts';
import { answerChain, type AnswerDelta, type ChainAnswer, type PassageMetadata } from './answerChain.ts';
import { buildAnswerModels, type AnswerModels } from './answerModels.ts';
import { BGE_SMALL_EN } from './embedderIdentity.ts';
import { startModelPool, type ModelPool } from './modelPool.ts';
import { embeddingInput, isMarkdownFilename, type SplitResult, type TextSegment } from './splitter.ts';
import type { Document } from '@langchain/core/documents';

export interface AnswerRequest {
  question: string;
  questionEmbedding: number[];
  model: string;
  passages: Document<PassageMetadata>[];
}

export interface Rag {
  /** Which vectors this service makes (the chunk index is named after it). */
  embedder: { modelName: string; dimensions: number };
  /** The worker threads every inference and split runs in. */
  models: ModelPool;
  answerModels: AnswerModels;
  /** For /readyz: null when the embedder answers a one-word inference (a few ms); throws what failed. */
  embedderProblem(): Promise<string | null>;
  /** For /readyz: null when a splitter worker (its thread and tokenizer) splits a word; throws what failed. */
  splitterProblem(): Promise<string | null>;
  split(content: string, filename: string): Promise<SplitResult>;
  /** Passage vectors for a document's segments (title and heading path give each segment its context). */
  embedSegments(title: string, segments: TextSegment[]): Promise<number[][]>;
  embedQuestion(question: string): Promise<number[]>;
  /**
   * The answer chain over passages the caller retrieved (passage n is passages[n-1]): the named answer model, then
   * its markers mapped to citations. Throws UpstreamUnavailableError when the model cannot answer.
   */
  answer(request: AnswerRequest): Promise<ChainAnswer>;
  /**
   * The same chain, streamed: the answer's pieces as the model writes them, concatenating to what `answer` returns.
   * Aborting `signal` cancels the model call (the stream then throws the signal's reason).
   */
  streamAnswer(request: AnswerRequest, signal: AbortSignal): AsyncIterable<AnswerDelta>;
  /** Stops the worker threads. */
  close(): Promise<void>;
}

async function embedderCall<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw new UpstreamUnavailableError('embedder', 'the embedder is unavailable; retry later', { cause: error });
  }
}

const answerInput = (request: AnswerRequest) => ({
  question: request.question,
  questionEmbedding: request.questionEmbedding,
  passages: request.passages,
});

export async function loadRag(config: Config): Promise<Rag> {
  const models = startModelPool({
    modelDir: config.embedder.modelDir,
    workers: config.embedder.workers,
    threadsPerWorker: config.embedder.threads,
    chunkTokens: config.chunking.chunkTokens,
    overlapTokens: config.chunking.overlapTokens,
    maxChars: config.chunking.maxChars,
  });
  const passagesPerTask = config.embedder.batchSize;
  const rag: Rag = {
    embedder: BGE_SMALL_EN,
    models,
    // The extractive answerer's sentences go through the pool's interactive lane, like the question.
    answerModels: buildAnswerModels(config, { embedDocuments: (texts) => rag.models.embedSentences(texts) }),
    // The model's own error (not the 503 wrapper) is what the readiness log should name.
    embedderProblem: () => rag.models.embedQuery('ready').then(() => null),
    splitterProblem: () => rag.models.countTokens('ready').then(() => null),
    split: (content, filename) => rag.models.split(content, isMarkdownFilename(filename)),
    // Small tasks, all submitted at once: they spread over every worker, and a question waits behind at most one.
    embedSegments: (title, segments) =>
      embedderCall(async () => {
        const inputs = segments.map((segment) => embeddingInput(title, segment));
        const tasks: Promise<number[][]>[] = [];
        for (let start = 0; start < inputs.length; start += passagesPerTask) {
          tasks.push(rag.models.embedPassages(inputs.slice(start, start + passagesPerTask)));
        }
        return (await Promise.all(tasks)).flat();
      }),
    embedQuestion: (question) => embedderCall(() => rag.models.embedQuery(question)),
    async answer(request) {
      const chain = answerChain(rag.answerModels.model(request.model), request.passages, request.question);
      const { text, citations } = await chain.invoke(answerInput(request));
      return { answer: text, citations };
    },
    async *streamAnswer(request, signal) {
      const chain = answerChain(rag.answerModels.model(request.model), request.passages, request.question);
      yield* await chain.stream(answerInput(request), { signal });
    },
    close: () => models.close(),
  };
  // Loads every worker's session before the service reports ready (and fails start-up if the model is missing).
  await Promise.all(Array.from({ length: models.workers }, () => models.embedQuery('warm up')));
  return rag;
}
