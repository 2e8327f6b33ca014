// The OpenSearch client and the one place its failures are classified. Only service/search/ imports it.
//
// Several nodes: opensearch-js's connection pool sends each request to the next living node (round robin), marks a
// node dead when it cannot be reached or answers 502/503/504, skips it while it is dead, and pings it (HEAD /) once
// its time is up to bring it back; a node that stays dead is tried less and less often (resurrectAfterMs doubled
// per failed ping, up to 16 × it). The transport's own retry is off (maxRetries: 0): it retries ANY request, a
// write too, after a timeout or a reset, when OpenSearch may already have applied it. The loop in request() decides
// instead, from what the request is (RequestOptions.idempotent) and how far it got (SentOrNotConnection below).
import { readFileSync } from 'node:fs';
import type { ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import { Client, Connection, ConnectionPool, errors } from '@opensearch-project/opensearch';
import { OpenSearchRequestError, SearchIndexReadOnlyError, UpstreamUnavailableError } from '../errors.ts';

export interface SearchClient {
  /**
   * One HTTP call to OpenSearch, retried on another node when that is safe (see RequestOptions.idempotent);
   * connection trouble, timeouts, 429 and 5xx become UpstreamUnavailableError (SearchIndexReadOnlyError for a
   * write block); a request OpenSearch refuses (4xx, or a 5xx blaming the request) becomes OpenSearchRequestError.
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
  /**
   * The request may run twice with the same effect as once, so it is sent again, to another node, after a timeout,
   * a dropped connection or a node's 502/503/504, when OpenSearch may already have run it. By default true for reads
   * (GET, HEAD, and POST to a read endpoint: isRead) and false for every write; a write that is safe to repeat says
   * so where it is made (a bulk of chunks under their own ids, a PUT of a named asset, a refresh). A write that is
   * not is sent again only when it provably never reached a node: its connection was never established.
   */
  idempotent?: boolean;
}

export interface SearchClientOptions {
  /** Every node's URL (one is enough for one node); requests are spread over the living ones. */
  nodes: string[];
  /** Per attempt: a retried read may take up to attempts × timeoutMs. */
  timeoutMs: number;
  /** HTTP basic credentials (a cluster with the security plugin), or none. */
  auth?: { username: string; password: string } | null;
  /** A PEM file of the CA that signed the nodes' certificates (https:// nodes); read once, here. */
  caFile?: string | null;
  /** How long a dead node is skipped before it is pinged again (doubled per failed ping). Default 5 s. */
  resurrectAfterMs?: number;
}

/**
 * Endpoints whose POST only reads (a body too big for a query string): the first path segment starting with `_`
 * names the endpoint (`/kbqa-chunks/_search`, `/_validate/query`; `/index/_doc/_search` is a write of id _search).
 */
const READ_ENDPOINTS = new Set([
  '_search',
  '_count',
  '_mget',
  '_msearch',
  '_analyze',
  '_explain',
  '_field_caps',
  '_validate',
  '_termvectors',
  '_mtermvectors',
  '_render',
]);

export function isRead(method: string, path: string): boolean {
  if (method === 'GET' || method === 'HEAD') return true;
  if (method !== 'POST') return false;
  const endpoint = path
    .split('?')[0]
    .split('/')
    .find((segment) => segment.startsWith('_'));
  return endpoint !== undefined && READ_ENDPOINTS.has(endpoint);
}

/** Failed attempts whose connection never opened: nothing of the request reached OpenSearch. */
const neverSent = new WeakSet<object>();

/**
 * A connection that tells apart "refused before anything was sent" from "lost after the request may have
 * arrived", which opensearch-js folds into one ConnectionError carrying only a message. A request counts as sent
 * once its socket is connected (a reused keep-alive socket is): conservative for TLS, whose handshake comes after.
 */
class SentOrNotConnection extends Connection {
  override request(
    params: Parameters<Connection['request']>[0],
    callback: Parameters<Connection['request']>[1],
  ): ClientRequest {
    let connected = false;
    const request = super.request(params, (error, response) => {
      if (error && !connected) neverSent.add(error);
      callback(error, response);
    });
    // An invalid path is refused without a request (opensearch-js returns a stub without events).
    if (typeof request.once === 'function') {
      request.once('socket', (socket: Socket) => {
        if (!socket.connecting) connected = true;
        else socket.once('connect', () => (connected = true));
      });
    }
    return request;
  }
}

const DEFAULT_RESURRECT_AFTER_MS = 5_000;

export function createSearchClient(options: SearchClientOptions): SearchClient {
  const resurrectAfterMs = options.resurrectAfterMs ?? DEFAULT_RESURRECT_AFTER_MS;
  // opensearch-js waits 60 s (up to 32 min) before pinging a dead node; a rolling restart takes less than that.
  class NodePool extends ConnectionPool {
    constructor(poolOptions: ConstructorParameters<typeof ConnectionPool>[0]) {
      super(poolOptions);
      this.resurrectTimeout = resurrectAfterMs;
      this.resurrectTimeoutCutoff = 4;
    }
  }
  const client = new Client({
    nodes: options.nodes,
    requestTimeout: options.timeoutMs,
    maxRetries: 0,
    resurrectStrategy: 'ping',
    Connection: SentOrNotConnection,
    ConnectionPool: NodePool,
    ...(options.auth ? { auth: { username: options.auth.username, password: options.auth.password } } : {}),
    ...(options.caFile ? { ssl: { ca: readFileSync(options.caFile, 'utf8') } } : {}),
  });
  // One node: a read still gets a second try (an idle keep-alive connection the node closed just as it was reused).
  const maxAttempts = Math.max(2, options.nodes.length);
  return {
    async request<T>(method: string, path: string, requestOptions: RequestOptions = {}): Promise<T> {
      const idempotent = requestOptions.idempotent ?? isRead(method, path);
      for (let attempt = 1; ; attempt += 1) {
        try {
          const response = await client.transport.request(
            {
              method,
              path,
              body: requestOptions.bulkBody ? undefined : (requestOptions.body as Record<string, unknown> | undefined),
              bulkBody: requestOptions.bulkBody as Record<string, unknown>[] | undefined,
              querystring: requestOptions.querystring,
            },
            { ignore: requestOptions.acceptStatuses, requestTimeout: options.timeoutMs, maxRetries: 0 },
          );
          return response.body as T;
        } catch (error) {
          if (attempt >= maxAttempts || !worthAnotherNode(error, idempotent, isRead(method, path)))
            throw classify(error, method, path);
          // The pool marks a node dead on its own for connection trouble and 502/503/504, not for a 500 naming the
          // node's trouble: the next attempt must not land on it again.
          if (error instanceof errors.ResponseError && error.meta?.meta?.connection)
            client.connectionPool.markDead(error.meta.meta.connection);
        }
      }
    },
    close: () => client.close(),
  };
}

/** 5xx error types that blame the node that answered (it is closing, or lost its cluster), not the request. */
const NODE_FAULT_TYPES = new Set([
  'node_closed_exception',
  'node_not_connected_exception',
  'node_disconnected_exception',
  'connect_transport_exception',
]);

/**
 * Whether a failed attempt may go to another node. A request that never reached one always may. Otherwise only an
 * idempotent one, after a dropped connection (or a read after a timeout), a gateway's or a node's 502/503/504 (a node shutting down,
 * one without a cluster manager) or a 500 naming the node's own trouble. Never after 429 (the cluster pushes back:
 * another node would too) or another 4xx/5xx (the request's fault, or the data's).
 */
function worthAnotherNode(error: unknown, idempotent: boolean, read: boolean): boolean {
  if (typeof error === 'object' && error !== null && neverSent.has(error)) return true;
  if (!idempotent) return false;
  // A write that timed out still runs on the node (a _delete_by_query over a whole KB, a big bulk): sending it to
  // the next one would double the work of a cluster that is already slow. Only reads go again after a timeout.
  if (error instanceof errors.TimeoutError) return read;
  if (error instanceof errors.ConnectionError) return true;
  if (!(error instanceof errors.ResponseError)) return false;
  const status = error.statusCode ?? 0;
  if (status === 502 || status === 503 || status === 504) return true;
  const body = error.body as { error?: OpenSearchErrorBody | string } | undefined;
  const top = typeof body === 'object' && body !== null && typeof body.error === 'object' ? body.error : undefined;
  return status >= 500 && errorChain(top).some((entry) => entry.type !== undefined && NODE_FAULT_TYPES.has(entry.type));
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
 * A block that refuses writes: cluster_block_exception with 429 (only the flood-stage watermark's
 * read_only_allow_delete answers that) or with 403 naming a read-only or write block (index.blocks.read_only /
 * write, the cluster-wide read-only ones). Not the 503 ones (no cluster manager, state not recovered: an outage
 * like any other), nor a read or metadata block.
 */
export function isWriteBlock(
  type: string | undefined,
  status: number | undefined,
  reason: string | undefined,
): boolean {
  if (type !== 'cluster_block_exception') return false;
  if (status === 429) return true;
  const text = reason ?? '';
  return status === 403 && (text.includes('read-only') || text.includes('index write'));
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
    // A 403 too: an index.blocks.write block is no more a kbqa bug than a full disk is. _delete_by_query names it
    // in its per-document failures instead.
    if (isWriteBlock(type, status, root?.reason))
      return new SearchIndexReadOnlyError(reason ?? type ?? 'cluster_block_exception');
    const failures = typeof body === 'object' && body !== null ? (body as { failures?: unknown }).failures : undefined;
    const blocked = Array.isArray(failures)
      ? (failures as Array<{ status?: number; cause?: OpenSearchErrorBody } | null>).find((failure) =>
          isWriteBlock(failure?.cause?.type, failure?.status, failure?.cause?.reason),
        )
      : undefined;
    if (blocked) return new SearchIndexReadOnlyError(safeReason(blocked.cause?.reason) ?? 'cluster_block_exception');
    // The security plugin refusing kbqa's credentials (401) or privileges (403 security_exception) is the
    // deployment's fault, not the request's: unavailable until an operator fixes it; the log names the reason.
    const refusedCredentials =
      status === 401 || (status === 403 && chain.some((entry) => entry.type === 'security_exception'));
    if (((status >= 500 || status === 429) && !requestFault) || refusedCredentials) {
      const cause: OpenSearchFailure = { name: 'ResponseError', status, type, reason };
      return new UpstreamUnavailableError('opensearch', 'the search engine is unavailable; retry later', { cause });
    }
    return new OpenSearchRequestError(
      status,
      type,
      reason,
      `${method} ${path} → ${status}: ${type ?? ''} ${reason ?? ''}`.trim(),
    );
  }
  // Any other client error (serialisation, a response that is not JSON) may carry the data it choked on: keep its name.
  if (error instanceof errors.OpenSearchClientError)
    return new Error(`${method} ${path}: OpenSearch client ${error.name}`);
  return error instanceof Error ? error : new Error(String(error));
}
