// The configured answer models: the built-in extractive answerer, and OpenAI-compatible chat models when
// KBQA_OPENAI_BASE_URL is set. LLM calls are retried with backoff on timeouts, 429 and 5xx within a bounded budget;
// after that the caller gets 503.
import { ChatOpenAI } from '@langchain/openai';
import type { Config } from '../config.ts';
import { EXTRACTIVE_MODEL } from '../config.ts';
import { UpstreamUnavailableError } from '../errors.ts';
import { extractiveAnswerModel, llmAnswerModel, type AnswerInput, type AnswerModel } from './answerChain.ts';
import type { SentenceEmbedder } from './extractiveAnswerer.ts';

export const ANSWER_MODEL_UNAVAILABLE = 'the answer model is unavailable; retry later';

export interface AnswerModels {
  names: string[];
  defaultModel: string;
  /** Runs the named model with the retry policy; throws UpstreamUnavailableError when it cannot answer. */
  run(name: string, input: AnswerInput): Promise<string>;
}

function isTransient(error: unknown): boolean {
  const status = (error as { status?: number; response?: { status?: number } })?.status ?? (error as { response?: { status?: number } })?.response?.status;
  if (typeof status === 'number') return status === 408 || status === 429 || status >= 500;
  const name = (error as Error)?.name ?? '';
  const message = (error as Error)?.message ?? '';
  return /timeout|abort|ECONNREFUSED|ECONNRESET|socket|network|fetch failed|connection/i.test(`${name} ${message}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function buildAnswerModels(config: Config, embedder: SentenceEmbedder): AnswerModels {
  const models = new Map<string, AnswerModel>();
  models.set(EXTRACTIVE_MODEL, extractiveAnswerModel(embedder));
  const openai = config.answerModels.openai;
  if (openai) {
    for (const model of openai.models) {
      const chat = new ChatOpenAI({
        model,
        apiKey: openai.apiKey,
        configuration: { baseURL: openai.baseUrl },
        timeout: openai.timeoutMs,
        // Retries are ours (below), so the budget is explicit and the same for every error kind.
        maxRetries: 0,
        temperature: 0,
        useResponsesApi: false,
      });
      models.set(model, llmAnswerModel(chat));
    }
  }

  return {
    names: config.answerModels.available,
    defaultModel: config.answerModels.defaultModel,
    async run(name, input) {
      const model = models.get(name);
      if (!model) throw new Error(`unknown answer model ${name}`);
      if (name === EXTRACTIVE_MODEL) return model.invoke(input);
      const attempts = 1 + (openai?.maxRetries ?? 0);
      let lastError: unknown;
      for (let attempt = 0; attempt < attempts; attempt += 1) {
        if (attempt > 0) await sleep(Math.min(4_000, 250 * 2 ** (attempt - 1)) * (0.75 + Math.random() * 0.5));
        try {
          return await model.invoke(input);
        } catch (error) {
          lastError = error;
          if (!isTransient(error)) break;
        }
      }
      throw new UpstreamUnavailableError('answer-model', ANSWER_MODEL_UNAVAILABLE, { cause: lastError });
    },
  };
}
