// The RAG module: the model pool (the local embedder and the splitter in worker threads), the OpenAI-compatible
// embedder when configured, and the answer models. Only service/rag/ talks to models, and no inference runs on the
// event loop.
//
// Embedders: the local bge-small-en-v1.5 always (the pool is loaded anyway: the splitter needs it), and the
// OpenAI-compatible one when configured. KBQA_EMBEDDER selects the one new indices are built with (`embedder`); an
// index built by the other is still served while it is live (a migration between them), by naming its embedder in
// embedQuestion / embedSegments.
import { EXTRACTIVE_MODEL, type Config } from '../config.ts';
import type { SentenceVectorRecipe } from '../configShape.ts';
import { EmbedderNotConfiguredError, UpstreamUnavailableError } from '../errors.ts';
import {
  answerChain,
  type AnswerDelta,
  type AnswerInput,
  type ChainAnswer,
  type PassageMetadata,
} from './answerChain.ts';
import { buildAnswerModels, type AnswerModels } from './answerModels.ts';
import { BGE_SMALL_EN, type EmbedderIdentity } from './embedderIdentity.ts';
import { startModelPool, UNIT_BATCH, type ModelPool, type PassageVectors } from './modelPool.ts';
import { OpenAIEmbedder } from './openaiEmbeddings.ts';
import { embeddingInput, isMarkdownFilename, type SplitResult, type TextSegment } from './splitter.ts';
import { splitSentences } from '../text/sentences.ts';
import type { Document } from '@langchain/core/documents';
import type { HistoryTurn } from './conversationHistory.ts';

/**
 * A segment's vectors: the passage's (title and heading path as context), and one per sentence of a segment of
 * several (the sentence alone), for the dense side's sentence-level score (search/retrieval.ts).
 */
export interface SegmentEmbedding {
  vector: number[];
  sentences: number[][];
}

/** Sentences embedded per segment at most: the first ones (a segment of more is a run of very short lines). */
export const MAX_SENTENCES_PER_SEGMENT = 48;

/** A segment's sentences as embedded: none for a segment of one sentence (its passage vector says the same). */
export function segmentSentences(segment: TextSegment): string[] {
  const sentences = splitSentences(segment.text).map((sentence) => sentence.text);
  return sentences.length > 1 ? sentences.slice(0, MAX_SENTENCES_PER_SEGMENT) : [];
}

/** Segments' vectors, their sentences' in order after them (`units`: every segment's sentences, flattened). */
function withSentences(vectors: number[][], sentences: string[][], units: number[][]): SegmentEmbedding[] {
  let next = 0;
  return vectors.map((vector, index) => ({ vector, sentences: sentences[index].map(() => units[next++]) }));
}

/** KBQA_SENTENCE_VECTORS=late: each passage's sentences from its own pass, `perTask` passages a worker task. */
async function embedPassagesLate(
  inputs: string[],
  sentences: string[][],
  perTask: number,
  models: ModelPool,
): Promise<SegmentEmbedding[]> {
  const tasks: Promise<PassageVectors[]>[] = [];
  for (let start = 0; start < inputs.length; start += perTask) {
    const passages = inputs
      .slice(start, start + perTask)
      .map((text, offset) => ({ text, units: sentences[start + offset] }));
    tasks.push(models.embedPassagesLate(passages));
  }
  return (await Promise.all(tasks)).flat().map(({ vector, units }) => ({ vector, sentences: units }));
}

/**
 * KBQA_SENTENCE_VECTORS=batched with the local model: a document's sentences sorted by length, cut into tasks of
 * UNIT_BATCH × the workers' count at most (padded calls of similar lengths, spread over every worker).
 */
export async function embedUnitsBatched(units: string[], models: ModelPool): Promise<number[][]> {
  const order = units.map((_, index) => index).sort((a, b) => units[a].length - units[b].length || a - b);
  const perTask = Math.max(UNIT_BATCH, Math.ceil(units.length / models.workers / UNIT_BATCH) * UNIT_BATCH);
  const tasks: Promise<number[][]>[] = [];
  for (let start = 0; start < order.length; start += perTask) {
    tasks.push(models.embedUnitsPadded(order.slice(start, start + perTask).map((index) => units[index])));
  }
  const sorted = (await Promise.all(tasks)).flat();
  const out: number[][] = new Array(units.length);
  order.forEach((index, rank) => (out[index] = sorted[rank]));
  return out;
}

export interface AnswerRequest {
  question: string;
  questionEmbedding: number[];
  model: string;
  passages: Document<PassageMetadata>[];
  /** A conversation's previous turns, for an LLM's prompt (conversationHistory.ts bounds them). */
  history?: HistoryTurn[];
}

export interface Rag {
  /**
   * The configured embedder (KBQA_EMBEDDER): which vectors new indices are built with. An OpenAI-compatible one's
   * dimensions are read from its model: until it has answered once (its endpoint down since start-up), reading this
   * throws UpstreamUnavailableError; `embedderName` is known regardless.
   */
  readonly embedder: EmbedderIdentity;
  /** The configured embedder's name, known without its model (the chunk index is named after it). */
  readonly embedderName: string;
  /** Every embedder this service can embed with now: bge-small-en-v1.5, and the OpenAI-compatible one once it answered. */
  embedders(): EmbedderIdentity[];
  /** The worker threads every inference and split runs in. */
  models: ModelPool;
  answerModels: AnswerModels;
  /**
   * For /readyz, the configured embedder: null when it answers a one-word inference (a few ms; an OpenAI-compatible
   * one that answered within 30 s is not asked again); throws what failed.
   */
  embedderProblem(): Promise<string | null>;
  /** For /readyz: null when a splitter worker (its thread and tokenizer) splits a word; throws what failed. */
  splitterProblem(): Promise<string | null>;
  split(content: string, filename: string): Promise<SplitResult>;
  /**
   * Passage and sentence vectors for a document's segments (title and heading path give each passage its context),
   * by the named embedder (default: the configured one). UpstreamUnavailableError when it cannot embed now;
   * EmbedderNotConfiguredError when this service has no embedder of that name.
   */
  embedSegments(
    title: string,
    segments: TextSegment[],
    modelName?: string,
    /** How the sentence vectors are computed, null for none (default: KBQA_SENTENCE_VECTORS's). */
    recipe?: SentenceVectorRecipe | null,
  ): Promise<SegmentEmbedding[]>;
  /**
   * The question's vector by the named embedder (default: the configured one); fails as embedSegments does. `asker`
   * (a user id) is whose turn the local model's question lane serves it in (round-robin by asker: modelPool.ts).
   */
  embedQuestion(question: string, modelName?: string, asker?: string): Promise<number[]>;
  /**
   * The answer chain over passages the caller retrieved (passage n is passages[n-1]): the named answer model, then
   * its markers mapped to citations. Throws UpstreamUnavailableError when the model cannot answer.
   */
  answer(request: AnswerRequest): Promise<ChainAnswer>;
  /**
   * A conversation's follow-up made standalone by the named OpenAI-compatible model from the previous turns (null
   * for the extractive model, which has its own rewrite; empty replies too). Unavailable: UpstreamUnavailableError.
   */
  condenseQuestion(model: string, history: HistoryTurn[], question: string): Promise<string | null>;
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

/** One embedder behind the rag's interface. */
interface Embedder {
  modelName: string;
  /** Null while its vectors' length is unknown (an OpenAI-compatible model that has not answered yet). */
  identity(): EmbedderIdentity | null;
  embedQuery(text: string, asker?: string): Promise<number[]>;
  embedPassages(texts: string[]): Promise<number[][]>;
}

export async function loadRag(config: Config): Promise<Rag> {
  const models = startModelPool({
    modelDir: config.embedder.modelDir,
    workers: config.embedder.workers,
    threadsPerWorker: config.embedder.threads,
    chunkTokens: config.chunking.chunkTokens,
    overlapTokens: config.chunking.overlapTokens,
    maxChars: config.chunking.maxChars,
  });
  const { bge, openai, configured, embedders, embedderNamed } = configuredEmbedders(config, models);
  const answerModels = buildAnswerModels(config);
  const rag: Rag = {
    get embedder(): EmbedderIdentity {
      const identity = configured.identity();
      if (identity === null) {
        throw new UpstreamUnavailableError(
          'embedder',
          `the embedder ${configured.modelName} has not answered since start-up, so its dimensions are unknown; retry later`,
        );
      }
      return identity;
    },
    embedderName: configured.modelName,
    embedders: () => embedders.map((embedder) => embedder.identity()).filter((identity) => identity !== null),
    models,
    answerModels,
    // The model's own error (not the 503 wrapper) is what the readiness log should name.
    embedderProblem: () => (configured === openai ? openai.problem() : models.embedQuery('ready').then(() => null)),
    splitterProblem: () => models.countTokens('ready').then(() => null),
    split: (content, filename) => models.split(content, isMarkdownFilename(filename)),
    // async: an unknown embedder name rejects, as every other failure here does, rather than throwing at the call.
    embedSegments: async (title, segments, modelName, recipe = config.chunking.sentenceVectorRecipe) =>
      embedSegments(
        { embedder: embedderNamed(modelName), local: bge, models, passagesPerTask: config.embedder.batchSize },
        title,
        segments,
        recipe,
      ),
    async embedQuestion(question, modelName, asker) {
      const embedder = embedderNamed(modelName);
      return embedderCall(() => embedder.embedQuery(question, asker));
    },
    ...answering(answerModels),
    close: () => models.close(),
  };
  // Loads every worker's session before the service reports ready (and fails start-up if the model is missing). The
  // configured OpenAI-compatible model is asked its vectors' length meanwhile (a few tries; if it does not answer,
  // the API starts anyway and reports the embedder not ready). One only configured to read an index it built is
  // asked in the background.
  if (openai && configured !== openai) void openai.load(1);
  await Promise.all([
    ...Array.from({ length: models.workers }, () => models.embedQuery('warm up')),
    configured === openai ? openai.load() : null,
  ]);
  return rag;
}

/** The local embedder always, the OpenAI-compatible one when configured, and which of them KBQA_EMBEDDER selects. */
function configuredEmbedders(config: Config, models: ModelPool) {
  const passagesPerTask = config.embedder.batchSize;
  const bge: Embedder = {
    modelName: BGE_SMALL_EN.modelName,
    identity: () => BGE_SMALL_EN,
    embedQuery: (text, asker) => models.embedQuery(text, asker),
    // Small tasks, all submitted at once: they spread over every worker, and a question waits behind at most one.
    async embedPassages(inputs) {
      const tasks: Promise<number[][]>[] = [];
      for (let start = 0; start < inputs.length; start += passagesPerTask) {
        tasks.push(models.embedPassages(inputs.slice(start, start + passagesPerTask)));
      }
      return (await Promise.all(tasks)).flat();
    },
  };
  const openai = config.embedder.openai ? new OpenAIEmbedder(config.embedder.openai) : null;
  const configured: Embedder = config.embedder.selected === 'openai' && openai ? openai : bge;
  const embedders = openai ? [bge, openai] : [bge];
  const embedderNamed = (modelName: string = configured.modelName): Embedder => {
    const embedder = embedders.find((candidate) => candidate.modelName === modelName);
    if (!embedder)
      throw new EmbedderNotConfiguredError(
        modelName,
        embedders.map((candidate) => candidate.modelName),
      );
    return embedder;
  };
  return { bge, openai, configured, embedders, embedderNamed };
}

/** Passage and sentence vectors of a document's segments by one embedder, as the sentence-vector recipe says. */
async function embedSegments(
  using: { embedder: Embedder; local: Embedder; models: ModelPool; passagesPerTask: number },
  title: string,
  segments: TextSegment[],
  recipe: SentenceVectorRecipe | null,
): Promise<SegmentEmbedding[]> {
  const { embedder, local, models, passagesPerTask } = using;
  if (segments.length === 0) return [];
  const inputs = segments.map((segment) => embeddingInput(title, segment));
  const sentences = segments.map((segment) => (recipe ? segmentSentences(segment) : []));
  // Late chunking needs the model's token embeddings: the local model's. Another embedder embeds them alone.
  if (recipe === 'late' && embedder === local) {
    return embedderCall(() => embedPassagesLate(inputs, sentences, passagesPerTask, models));
  }
  if (recipe === 'batched') {
    const [vectors, units] = await embedderCall(() =>
      Promise.all([
        embedder.embedPassages(inputs),
        // Another embedder than the local one gets them as passages.
        embedder === local ? embedUnitsBatched(sentences.flat(), models) : embedder.embedPassages(sentences.flat()),
      ]),
    );
    return withSentences(vectors, sentences, units);
  }
  // Passages and sentences in one call: they spread over every worker together.
  const vectors = await embedderCall(() => embedder.embedPassages([...inputs, ...sentences.flat()]));
  return withSentences(vectors.slice(0, segments.length), sentences, vectors.slice(segments.length));
}

/** The answer chain over retrieved passages, whole or streamed, and a follow-up's condensing. */
function answering(answerModels: AnswerModels): Pick<Rag, 'condenseQuestion' | 'answer' | 'streamAnswer'> {
  return {
    async condenseQuestion(model, history, question) {
      const condenser = answerModels.condenser(model);
      if (condenser === null || history.length === 0) return null;
      const condensed = await condenser.invoke({ history, question });
      return condensed.length > 0 ? Array.from(condensed).slice(0, 4000).join('') : null;
    },
    async answer(request) {
      const chain = answerChain(
        answerModels.model(request.model),
        request.passages,
        request.question,
        checkOf(request),
      );
      const { text, citations, sentences } = await chain.invoke(answerInput(request));
      return { answer: text, citations, ...(sentences ? { sentences } : {}) };
    },
    async *streamAnswer(request, signal) {
      const chain = answerChain(
        answerModels.model(request.model),
        request.passages,
        request.question,
        checkOf(request),
      );
      yield* await chain.stream(answerInput(request), { signal });
    },
  };
}

// The extractive answerer compares the question with the sentence vectors stored beside the passages: both are in
// the serving index's embedder's space, so the question's vector goes to it as retrieval used it.
function answerInput(request: AnswerRequest): AnswerInput {
  return {
    question: request.question,
    questionEmbedding: request.questionEmbedding,
    passages: request.passages,
    ...(request.history ? { history: request.history } : {}),
  };
}

// The extractive model quotes whole source sentences by construction; a model writing its own has them checked.
function checkOf(request: AnswerRequest) {
  return { checkSentences: request.model !== EXTRACTIVE_MODEL };
}
