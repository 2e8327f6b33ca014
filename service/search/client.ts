// The OpenSearch client and the one place its failures are classified. Only service/search/ imports it.
import { Client, errors } from '@opensearch-project/opensearch';
import { UpstreamUnavailableError } from '../errors.ts';

export interface SearchClient {
  /**
   * One HTTP call to OpenSearch; connection trouble, timeouts, 429 and 5xx become UpstreamUnavailableError; a request
   * OpenSearch refuses (4xx, or a 5xx blaming the request) becomes OpenSearchRequestError.
   */
  request<T>(method: 'GET' | 'PUT' | 'POST' | 'DELETE' | 'HEAD', path: string, options?: RequestOptions): Promise<T>;
  close(): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  /** NDJSON lines for _bulk. */
  bulkBody?: unknown[];
  querystring?: Record<string, string | number | boolean>;
  /** Statuses that are answers, not failures (e.g. 404 for "does it exist?"). */
  acceptStatuses?: number[];
}

/**
 * What a failed OpenSearch call leaves behind for errors and logs. Never the raw opensearch-js error: its `meta`
 * carries the request and response bodies (the question and its vector; for a failed bulk, the document text).
 */
export interface OpenSearchFailure {
  name: string;
  status?: number;
  /** OpenSearch's error type and reason (the root cause's when there is one). */
  type?: string;
  reason?: string;
  /** For connection trouble: what the client said (e.g. "connect ECONNREFUSED 127.0.0.1:9200"). */
  message?: string;
}

/**
 * OpenSearch refused the request itself (a 4xx, or a 500 whose root cause is the request, such as too many
 * clauses): retrying cannot help, so it is not an outage (503) but a kbqa bug, answered as 500 with a request id.
 */
export class OpenSearchRequestError extends Error {
  readonly status: number;
  readonly type: string | undefined;
  readonly reason: string | undefined;
  constructor(status: number, type: string | undefined, reason: string | undefined, message: string) {
    super(message);
    this.name = 'OpenSearchRequestError';
    this.status = status;
    this.type = type;
    this.reason = reason;
  }
}

export function createSearchClient(url: string, timeoutMs: number): SearchClient {
  const client = new Client({ node: url, requestTimeout: timeoutMs, maxRetries: 1 });
  return {
    async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
      try {
        const response = await client.transport.request(
          {
            method,
            path,
            body: options.bulkBody ? undefined : (options.body as Record<string, unknown> | undefined),
            bulkBody: options.bulkBody as Record<string, unknown>[] | undefined,
            querystring: options.querystring,
          },
          { ignore: options.acceptStatuses, requestTimeout: timeoutMs },
        );
        return response.body as T;
      } catch (error) {
        throw classify(error, method, path);
      }
    },
    close: () => client.close(),
  };
}

/** Error types by which OpenSearch blames the request even when it answers 500 (search_phase_execution_exception). */
const REQUEST_FAULT_TYPES = new Set(['too_many_clauses', 'too_many_nested_clauses']);

interface OpenSearchErrorBody {
  type?: string;
  reason?: string;
  root_cause?: OpenSearchErrorBody[];
  caused_by?: OpenSearchErrorBody;
}

/** The error and every cause OpenSearch names (root causes, caused_by chains), outermost first. */
function errorChain(error: OpenSearchErrorBody | undefined): OpenSearchErrorBody[] {
  const chain: OpenSearchErrorBody[] = [];
  const pending = error ? [error] : [];
  // Bounded: a malformed body must not make classification loop or grow.
  while (pending.length > 0 && chain.length < 32) {
    const next = pending.shift() as OpenSearchErrorBody;
    if (typeof next !== 'object' || next === null) continue;
    chain.push(next);
    if (Array.isArray(next.root_cause)) pending.push(...next.root_cause);
    if (next.caused_by) pending.push(next.caused_by);
  }
  return chain;
}

/**
 * A reason fit for a log line: mapping failures quote the document ("Preview of field's value: '…'"), so that part
 * goes, and what is left is capped.
 */
export function safeReason(reason: unknown): string | undefined {
  if (typeof reason !== 'string') return undefined;
  const preview = reason.indexOf('Preview of field');
  return (preview >= 0 ? reason.slice(0, preview) : reason).trim().slice(0, 200);
}

function classify(error: unknown, method: string, path: string): Error {
  if (
    error instanceof errors.ConnectionError ||
    error instanceof errors.TimeoutError ||
    error instanceof errors.NoLivingConnectionsError
  ) {
    const cause: OpenSearchFailure = { name: error.name, message: error.message };
    return new UpstreamUnavailableError('opensearch', 'the search engine is unavailable; retry later', { cause });
  }
  if (error instanceof errors.ResponseError) {
    const status = error.statusCode ?? 500;
    const body = error.body as { error?: OpenSearchErrorBody | string } | string | undefined;
    const top = typeof body === 'object' && body !== null ? body.error : undefined;
    const chain = errorChain(typeof top === 'object' ? top : undefined);
    // The most specific cause says what went wrong; the outer search_phase_execution_exception does not.
    const root = chain.find((entry) => entry !== chain[0] && entry.type) ?? chain[0];
    const type = root?.type;
    const reason = safeReason(root?.reason ?? (typeof top === 'string' ? top : undefined));
    const requestFault = chain.some((entry) => entry.type !== undefined && REQUEST_FAULT_TYPES.has(entry.type));
    if ((status >= 500 || status === 429) && !requestFault) {
      const cause: OpenSearchFailure = { name: 'ResponseError', status, type, reason };
      return new UpstreamUnavailableError('opensearch', 'the search engine is unavailable; retry later', { cause });
    }
    return new OpenSearchRequestError(status, type, reason, `${method} ${path} → ${status}: ${type ?? ''} ${reason ?? ''}`.trim());
  }
  // Any other client error (serialisation, a response that is not JSON) may carry the data it choked on: keep its name.
  if (error instanceof errors.OpenSearchClientError) return new Error(`${method} ${path}: OpenSearch client ${error.name}`);
  return error instanceof Error ? error : new Error(String(error));
}
