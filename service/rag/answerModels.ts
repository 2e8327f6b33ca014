// The configured answer models: the built-in extractive answerer, and OpenAI-compatible chat models when
// KBQA_OPENAI_BASE_URL is set. LLM calls are retried with backoff on timeouts, 429 and 5xx within a bounded budget;
// after that the caller gets 503. A streamed call is retried only until its first token: after that, text has
// reached the client and cannot be taken back, so a failure is final.
import { ChatOpenAI } from '@langchain/openai';
import { Runnable, type RunnableConfig } from '@langchain/core/runnables';
import type { Config } from '../config.ts';
import { EXTRACTIVE_MODEL } from '../config.ts';
import { UpstreamUnavailableError } from '../errors.ts';
import { extractiveAnswerModel, llmAnswerModel, type AnswerInput, type AnswerModel } from './answerChain.ts';
import { retryTransient } from './retries.ts';
import { condenseChain, type CondenseInput } from './conversationHistory.ts';

export const ANSWER_MODEL_UNAVAILABLE = 'the answer model is unavailable; retry later';

export interface AnswerModels {
  names: string[];
  defaultModel: string;
  /**
   * The named model as a runnable (AnswerInput → raw answer text), with the retry policy: `invoke` and `stream`
   * throw UpstreamUnavailableError when it cannot answer, and the run's abort signal as it is when it was aborted.
   */
  model(name: string): AnswerModel;
  /** The named OpenAI-compatible model's condensing chain (conversationHistory.ts), with the retry policy; null for the extractive one. */
  condenser(name: string): Runnable<CondenseInput, string> | null;
}

const unavailable = (cause: unknown) =>
  new UpstreamUnavailableError('answer-model', ANSWER_MODEL_UNAVAILABLE, { cause });

interface RetryPolicy {
  attempts: number;
  /** The longest wait for the next token of a streamed answer (the client's own timeout covers only the headers). */
  idleTimeoutMs: number;
}

/** Runs `attempt` under the retry policy: what still fails is a 503, unless the run was aborted. */
async function withRetries<T>(
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  attempt: () => Promise<T>,
): Promise<T> {
  try {
    return await retryTransient(policy.attempts, signal, attempt);
  } catch (error) {
    if (signal?.aborted) throw error;
    throw unavailable(error);
  }
}

/**
 * No token within the idle timeout. Control-flow signal: caught by the retry policy (retries.ts retries it as a
 * timeout, by its name) and, past the retries, wrapped in this file's UpstreamUnavailableError.
 */
class TokenTimeoutError extends Error {
  constructor(ms: number) {
    super(`no token from the answer model for ${ms} ms (timeout)`);
    this.name = 'TimeoutError';
  }
}

/** `work`'s result, or a TokenTimeoutError past `ms` (after aborting `controller`, so the request stops). */
async function within<T>(work: Promise<T>, ms: number, controller: AbortController): Promise<T> {
  // Once the timeout has won, the aborted call's rejection has nobody left to hear it.
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const error = new TokenTimeoutError(ms);
      controller.abort(error);
      reject(error);
    }, ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** An LLM answer model (or its condensing chain) behind the retry policy. */
class RetriedAnswerModel<Input = AnswerInput> extends Runnable<Input, string> {
  lc_namespace = ['kbqa', 'answer_models'];
  readonly #model: Runnable<Input, string>;
  readonly #policy: RetryPolicy;

  constructor(model: Runnable<Input, string>, policy: RetryPolicy) {
    super();
    this.#model = model;
    this.#policy = policy;
  }

  async invoke(input: Input, options?: Partial<RunnableConfig>): Promise<string> {
    return withRetries(this.#policy, options?.signal, () => this.#model.invoke(input, options));
  }

  async *_streamIterator(input: Input, options?: Partial<RunnableConfig>): AsyncGenerator<string> {
    const signal = options?.signal;
    const { idleTimeoutMs } = this.#policy;
    // Each attempt has its own controller, so a stalled one can be stopped without aborting the run. `stream()`
    // itself waits for the first chunk, so opening is timed like every later token.
    const open = async () => {
      const controller = new AbortController();
      const opening = (async () => {
        const stream = await this.#model.stream(input, {
          ...options,
          signal: signal ? AbortSignal.any([signal, controller.signal]) : controller.signal,
        });
        const iterator = stream[Symbol.asyncIterator]();
        // Chat streams open with an empty chunk (the role): the first token is the first text.
        let first = await iterator.next();
        while (!first.done && first.value.length === 0) first = await iterator.next();
        return { iterator, first };
      })();
      try {
        return { controller, ...(await within(opening, idleTimeoutMs, controller)) };
      } catch (error) {
        if (!controller.signal.aborted) controller.abort(error);
        throw error;
      }
    };
    const { iterator, controller, first } = await withRetries(this.#policy, signal, open);
    try {
      for (let next = first; !next.done; next = await within(iterator.next(), idleTimeoutMs, controller))
        yield next.value;
    } catch (error) {
      if (signal?.aborted) throw error;
      throw unavailable(error);
    } finally {
      // The consumer stopped early (or the call failed): the request must not go on.
      if (!controller.signal.aborted) controller.abort();
    }
  }
}

export function buildAnswerModels(config: Config): AnswerModels {
  const models = new Map<string, AnswerModel>();
  const condensers = new Map<string, Runnable<CondenseInput, string>>();
  models.set(EXTRACTIVE_MODEL, extractiveAnswerModel({ minSupport: config.retrieval.answerMinSupport }));
  const openai = config.answerModels.openai;
  if (openai) {
    const policy: RetryPolicy = { attempts: 1 + openai.maxRetries, idleTimeoutMs: openai.timeoutMs };
    for (const model of openai.models) {
      const chat = new ChatOpenAI({
        model,
        apiKey: openai.apiKey,
        configuration: { baseURL: openai.baseUrl },
        timeout: openai.timeoutMs,
        // Retries are ours (above), so the budget is explicit and the same for every error kind.
        maxRetries: 0,
        temperature: 0,
        useResponsesApi: false,
      });
      models.set(model, new RetriedAnswerModel(llmAnswerModel(chat), policy));
      condensers.set(model, new RetriedAnswerModel(condenseChain(chat), policy));
    }
  }

  return {
    names: config.answerModels.available,
    defaultModel: config.answerModels.defaultModel,
    model(name) {
      const model = models.get(name);
      if (!model) throw new Error(`unknown answer model ${name}`);
      return model;
    },
    condenser: (name) => condensers.get(name) ?? null,
  };
}
