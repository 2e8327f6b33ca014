// A tiny HTTP proxy in front of the real OpenSearch that forwards every request unchanged, except that, when armed,
// it makes `POST /_bulk` fail in a chosen way. Tests point an app's KBQA_OPENSEARCH_URL at it to inject real
// network-level failures (no mocks inside the service).
import { request as httpRequest, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type BulkFault =
  /** Answer 503 without forwarding: nothing reaches OpenSearch. */
  | 'bulk-503'
  /** Destroy the client's socket without forwarding: a connection reset, nothing reaches OpenSearch. */
  | 'bulk-destroy'
  /** Forward the bulk (the chunks ARE written), then destroy the client's socket instead of answering. */
  | 'bulk-destroy-after-forward';

export interface FaultyProxy {
  url: string;
  /** Every `POST /_bulk` fails in this way until disarm(). */
  arm(fault: BulkFault): void;
  disarm(): void;
  /** Every request seen, as "METHOD /path" (query string stripped). */
  readonly seen: string[];
  /** How many `POST /_bulk` requests were failed on purpose. */
  readonly failedBulks: number;
  /** Every `POST /_bulk` forwarded: its body's size in bytes and its query string. */
  readonly bulks: Array<{ bytes: number; query: string }>;
  /** Stops listening and drops every open connection: afterwards the port refuses connections like a dead server. */
  close(): Promise<void>;
}

const isBulk = (request: IncomingMessage) => request.method === 'POST' && /^\/_bulk(?:\?|$)/.test(request.url ?? '');

export async function startFaultyProxy(
  target = process.env.KBQA_OPENSEARCH_URL ?? 'http://127.0.0.1:9200',
): Promise<FaultyProxy> {
  const upstream = new URL(target);
  let fault: BulkFault | null = null;
  let failedBulks = 0;
  const seen: string[] = [];
  const bulks: Array<{ bytes: number; query: string }> = [];
  const sockets = new Set<Socket>();

  const forward = (request: IncomingMessage, response: ServerResponse, onUpstreamDone?: () => void) => {
    const headers = { ...request.headers, host: upstream.host };
    const outgoing = httpRequest(
      {
        protocol: upstream.protocol,
        hostname: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers,
      },
      (incoming) => {
        if (onUpstreamDone) {
          // Drain the real answer, then kill the client connection instead of relaying it.
          incoming.resume();
          incoming.on('end', onUpstreamDone);
          return;
        }
        response.writeHead(incoming.statusCode ?? 502, incoming.headers);
        incoming.pipe(response);
      },
    );
    outgoing.on('error', () => {
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { type: 'proxy_error', reason: 'upstream unreachable' }, status: 502 }));
    });
    request.pipe(outgoing);
  };

  const server = createServer((request, response) => {
    seen.push(`${request.method} ${(request.url ?? '').split('?')[0]}`);
    if (fault !== null && isBulk(request)) {
      failedBulks += 1;
      if (fault === 'bulk-503') {
        request.resume();
        request.on('end', () => {
          response.writeHead(503, { 'content-type': 'application/json' });
          response.end(
            JSON.stringify({ error: { type: 'injected_fault', reason: 'bulk failed on purpose' }, status: 503 }),
          );
        });
        return;
      }
      if (fault === 'bulk-destroy') {
        request.resume();
        request.on('end', () => request.socket.destroy());
        return;
      }
      forward(request, response, () => request.socket.destroy());
      return;
    }
    if (isBulk(request)) {
      const bulk = { bytes: 0, query: (request.url ?? '').split('?')[1] ?? '' };
      bulks.push(bulk);
      request.on('data', (chunk: Buffer) => (bulk.bytes += chunk.length));
    }
    forward(request, response);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    arm(next) {
      fault = next;
    },
    disarm() {
      fault = null;
    },
    get seen() {
      return seen;
    },
    get failedBulks() {
      return failedBulks;
    },
    get bulks() {
      return bulks;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
