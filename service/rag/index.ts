// The RAG module: the embedder, the splitters and the answer models. Only service/rag/ talks to models.
import type { Config } from '../config.ts';
import { UpstreamUnavailableError } from '../errors.ts';
import { KnowledgeBaseRetriever, mapCitations, type ChainAnswer, type PassageMetadata } from './answerChain.ts';
import { buildAnswerModels, type AnswerModels } from './answerModels.ts';
import { BgeOnnxEmbeddings } from './bgeEmbeddings.ts';
import { embeddingInput, isMarkdownFilename, type SplitResult, type TextSegment } from './splitter.ts';
import { startSplitterPool } from './splitterPool.ts';
import type { Document } from '@langchain/core/documents';

export interface Rag {
  embedder: BgeOnnxEmbeddings;
  answerModels: AnswerModels;
  /** For /readyz: null when the embedder answers a one-word inference (a few ms), else what failed. */
  embedderProblem(): Promise<string | null>;
  /** For /readyz: null when a splitter worker (its thread and tokenizer) splits a word; throws what failed. */
  splitterProblem(): Promise<string | null>;
  /** Splits in a worker thread: never on the event loop. */
  split(content: string, filename: string): Promise<SplitResult>;
  /** Passage vectors for a document's segments (title and heading path give each segment its context). */
  embedSegments(title: string, segments: TextSegment[]): Promise<number[][]>;
  embedQuestion(question: string): Promise<number[]>;
  /**
   * The chain: retrieve (the caller's hybrid search, as a LangChain retriever) → the named answer model → citations.
   */
  answer(request: {
    question: string;
    questionEmbedding: number[];
    model: string;
    retrieve: (question: string) => Promise<Document<PassageMetadata>[]>;
  }): Promise<ChainAnswer & { passages: Document<PassageMetadata>[]; answerMs: number }>;
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

export async function loadRag(config: Config): Promise<Rag> {
  const embedder = await BgeOnnxEmbeddings.load({
    modelDir: config.embedder.modelDir,
    batchSize: config.embedder.batchSize,
    ...(config.embedder.threads > 0 ? { threads: config.embedder.threads } : {}),
  });
  // The extractive answerer embeds a handful of candidate sentences on every query: one padded batch, each
  // sentence cut at 48 tokens (an answer sentence's gist fits; the cost of a batch grows with its longest row).
  const sentenceEmbedder = embedder.withBatchMode('padded', 8, 48);
  const answerModels = buildAnswerModels(config, sentenceEmbedder);
  const splitter = startSplitterPool({
    modelDir: config.embedder.modelDir,
    chunkTokens: config.chunking.chunkTokens,
    overlapTokens: config.chunking.overlapTokens,
    maxChars: config.chunking.maxChars,
  });

  return {
    embedder,
    answerModels,
    async embedderProblem() {
      try {
        await embedder.embedQuery('ready');
        return null;
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
    },
    // A failure throws: /readyz reports a thrown error as the problem.
    splitterProblem: () => splitter.split('ready', false).then(() => null),
    split: (content, filename) => splitter.split(content, isMarkdownFilename(filename)),
    embedSegments: (title, segments) =>
      embedderCall(() => embedder.embedDocuments(segments.map((segment) => embeddingInput(title, segment)))),
    embedQuestion: (question) => embedderCall(() => embedder.embedQuery(question)),
    async answer(request) {
      const retriever = new KnowledgeBaseRetriever(request.retrieve);
      const passages = (await retriever.invoke(request.question)) as Document<PassageMetadata>[];
      const started = performance.now();
      const raw = passages.length > 0
        ? await answerModels.run(request.model, { question: request.question, questionEmbedding: request.questionEmbedding, passages })
        : '';
      const mapped = mapCitations(raw, passages, request.question);
      return { ...mapped, passages, answerMs: performance.now() - started };
    },
    close: () => splitter.close(),
  };
}
