// GET /metrics in the Prometheus text format, on a listener of its own (KBQA_METRICS_HOST:KBQA_METRICS_PORT), so
// the API's port never serves it and a firewall can keep it to the scraper. One listener per service: the API
// process's, or with KBQA_API_PROCESSES > 1 the node:cluster primary's, which serves every process's metrics as one.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricsSource } from '../metrics.ts';

export interface MetricsServer {
  /** http://host:port, with the port actually bound (for port 0). */
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function startMetricsServer(
  metrics: MetricsSource,
  where: { host: string; port: number },
  onError?: (error: unknown) => void,
): Promise<MetricsServer> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('not found: the metrics are at /metrics\n');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response
        .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' })
        .end('method not allowed\n');
      return;
    }
    metrics.scrape().then(
      (text) => {
        response.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        // The collectors catch their own failures (metrics.ts): this is a bug in one. The log line says which.
        onError?.(error);
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics collection failed\n');
      },
    );
  });
  // Scrapers keep connections alive; closing must not wait for them.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `metrics port ${where.port} on ${where.host} is busy; move it with KBQA_METRICS_PORT (or turn metrics off with KBQA_METRICS_PORT=off)`,
            )
          : error,
      );
    });
    server.listen(where.port, where.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = where.host.includes(':') ? `[${where.host}]` : where.host;
  return {
    url: `http://${host}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
