// The OpenSearch client and the one place its failures are classified. Only service/search/ imports it.
import { Client, errors } from '@opensearch-project/opensearch';
import { UpstreamUnavailableError } from '../errors.ts';

export interface SearchClient {
  /** One HTTP call to OpenSearch; connection trouble, timeouts and 5xx become UpstreamUnavailableError. */
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

export class OpenSearchRequestError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown, message: string) {
    super(message);
    this.status = status;
    this.body = body;
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

function classify(error: unknown, method: string, path: string): Error {
  if (
    error instanceof errors.ConnectionError ||
    error instanceof errors.TimeoutError ||
    error instanceof errors.NoLivingConnectionsError
  ) {
    return new UpstreamUnavailableError('opensearch', 'the search engine is unavailable; retry later', { cause: error });
  }
  if (error instanceof errors.ResponseError) {
    const status = error.statusCode ?? 500;
    if (status >= 500 || status === 429) {
      return new UpstreamUnavailableError('opensearch', 'the search engine is unavailable; retry later', { cause: error });
    }
    const reason = (error.body as { error?: { reason?: string; type?: string } } | undefined)?.error;
    return new OpenSearchRequestError(status, error.body, `${method} ${path} → ${status}: ${reason?.type ?? ''} ${reason?.reason ?? ''}`.trim());
  }
  return error instanceof Error ? error : new Error(String(error));
}
