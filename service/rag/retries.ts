// The retry policy of every call to a model server over HTTP (answer models, the OpenAI-compatible embedder): up to
// a bounded number of attempts while the failure is transient (a timeout, a dropped connection, 408, 429, 5xx),
// backing off between them. Retries are ours rather than the client library's, so the budget is explicit and the
// same for every error kind; the callers turn the last failure into a 503.
import { setTimeout as sleep } from 'node:timers/promises';

export function isTransient(error: unknown): boolean {
  const status =
    (error as { status?: number; response?: { status?: number } })?.status ??
    (error as { response?: { status?: number } })?.response?.status;
  if (typeof status === 'number') return status === 408 || status === 429 || status >= 500;
  const name = (error as Error)?.name ?? '';
  const message = (error as Error)?.message ?? '';
  return /timeout|abort|ECONNREFUSED|ECONNRESET|socket|network|fetch failed|connection/i.test(`${name} ${message}`);
}

/** The wait before retry `retry` (1, 2, …): 250 ms doubling up to 4 s, ±25 % so retrying clients spread out. */
export function backoffMs(retry: number): number {
  return Math.min(4_000, 250 * 2 ** (retry - 1)) * (0.75 + Math.random() * 0.5);
}

/**
 * Runs `attempt` up to `attempts` times while it fails transiently, backing off; never past an aborted signal (the
 * wait then throws the signal's reason). Throws the last failure as it was.
 */
export async function retryTransient<T>(
  attempts: number,
  signal: AbortSignal | undefined,
  attempt: () => Promise<T>,
): Promise<T> {
  let lastError: unknown;
  for (let index = 0; index < attempts; index += 1) {
    if (index > 0) await sleep(backoffMs(index), undefined, { signal });
    try {
      return await attempt();
    } catch (error) {
      if (signal?.aborted) throw error;
      lastError = error;
      if (!isTransient(error)) break;
    }
  }
  throw lastError;
}
