// How many questions (POST /query, POST /search, both realms) one user has answered at once, and how fast (issue 31
// §3). Per user, not per key: a user's keys and web session share one bound, so more keys buy no more. Per API
// process (KBQA_API_PROCESSES multiplies it). Beyond the bound the caller's own questions are what it waits for, so
// every refusal is a 429 with Retry-After:
// - KBQA_QUERY_CONCURRENCY_PER_USER questions are answered at once; up to KBQA_QUERY_QUEUE_PER_USER more wait, in
//   the order they came, each at most KBQA_QUERY_WAIT_MS (then refused: never queued forever); beyond them, refused
//   at once;
// - KBQA_QUERY_RATE_PER_MINUTE (0: off) questions a minute, with a burst of 10 seconds' worth.
// - a heavy question (over HEAVY_QUESTION_CHARS) counts as HEAVY_QUESTION_PLACES questions: with the default 4
//   places, one user's long questions are answered one at a time. Each one costs OpenSearch and the embedder 10–25 times a usual question, so four at
//   once held both cores of a small machine and another user's p95 went from 45 ms to 308 ms (6.8×); one at a
//   time it stays within 3× (docs/quality-and-speed.md § burst).
// The stages every user shares then serve users in turn (the model pool's question lane: rag/modelPool.ts), so a
// user under the bound holds at most its share of them.
import type { Config } from '../config.ts';
import { QueryBusyError } from '../errors.ts';
import { HEAVY_QUESTION_CHARS } from '../rag/modelPool.ts';

export type QueryAdmissionSettings = Config['queries'];

/** What a refused question is told to wait when a question of its user's is likely to end sooner. */
const RETRY_AFTER_SECONDS = 1;
/** A heavy question takes the places of this many usual ones (at most all of a user's). */
export const HEAVY_QUESTION_PLACES = 4;
/** The rate bound lets this much of a minute's questions come at once. */
const RATE_BURST_MS = 10_000;

interface Waiter {
  /** The places it takes: 1, or HEAVY_QUESTION_PLACES for a heavy question. */
  places: number;
  admit: () => void;
  timer: NodeJS.Timeout;
}

interface UserQuestions {
  /** Places taken by the questions being answered. */
  running: number;
  waiting: Waiter[];
  /** The rate bound's clock (GCRA): when the user's next question would be on time; 0 before any. */
  dueAt: number;
}

/** Gives a question its turn, or refuses it (QueryBusyError, 429). `admit` resolves to the release of its place. */
export class QueryAdmission {
  readonly #settings: QueryAdmissionSettings;
  readonly #users = new Map<string, UserQuestions>();

  constructor(settings: QueryAdmissionSettings) {
    this.#settings = settings;
  }

  /** The user's places taken now, and questions waiting (for tests and metrics). */
  of(userId: string): { running: number; waiting: number } {
    const user = this.#users.get(userId);
    return { running: user?.running ?? 0, waiting: user?.waiting.length ?? 0 };
  }

  /**
   * Waits for the user's turn. Resolves to the function that gives the place back (call it exactly once, when the
   * answer is sent or failed); rejects with QueryBusyError when the user is over a bound or waited too long.
   */
  async admit(userId: string, question = '', now = performance.now()): Promise<() => void> {
    const settings = this.#settings;
    const user = this.#users.get(userId) ?? { running: 0, waiting: [], dueAt: 0 };
    this.#users.set(userId, user);
    this.#checkRate(user, now);
    const places =
      question.length > HEAVY_QUESTION_CHARS ? Math.min(HEAVY_QUESTION_PLACES, settings.concurrencyPerUser) : 1;
    if (user.waiting.length === 0 && user.running + places <= settings.concurrencyPerUser) {
      user.running += places;
      return this.#release(userId, user, places);
    }
    if (user.waiting.length >= settings.queuePerUser) {
      this.#forgetIfIdle(userId, user);
      throw QueryBusyError.tooMany(user.running, user.waiting.length, settings, RETRY_AFTER_SECONDS);
    }
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        places,
        admit: resolve,
        timer: setTimeout(() => {
          user.waiting.splice(user.waiting.indexOf(waiter), 1);
          reject(QueryBusyError.waitedTooLong(settings, RETRY_AFTER_SECONDS));
        }, settings.waitMs),
      };
      user.waiting.push(waiter);
    });
    return this.#release(userId, user, places);
  }

  /** The rate bound: each question moves the user's clock a 1/rate minute on; more than the burst ahead is refused. */
  #checkRate(user: UserQuestions, now: number): void {
    const perMinute = this.#settings.ratePerMinute;
    if (perMinute === 0) return;
    const interval = 60_000 / perMinute;
    const due = Math.max(user.dueAt, now);
    if (due - now > RATE_BURST_MS) {
      throw QueryBusyError.overRate(perMinute, Math.max(1, Math.ceil((due - now - RATE_BURST_MS) / 1000)));
    }
    user.dueAt = due + interval;
  }

  /** The user's places back, once: to the questions waiting, in order, as far as they fit. */
  #release(userId: string, user: UserQuestions, places: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      user.running -= places;
      const limit = this.#settings.concurrencyPerUser;
      for (let next = user.waiting[0]; next && user.running + next.places <= limit; next = user.waiting[0]) {
        user.waiting.shift();
        clearTimeout(next.timer);
        user.running += next.places;
        next.admit();
      }
      this.#forgetIfIdle(userId, user);
    };
  }

  #forgetIfIdle(userId: string, user: UserQuestions): void {
    if (user.running === 0 && user.waiting.length === 0 && user.dueAt <= performance.now()) this.#users.delete(userId);
  }
}
