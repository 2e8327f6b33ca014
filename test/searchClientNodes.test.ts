// The OpenSearch client across several nodes (service/search/client.ts): each "node" but the real one is a proxy in
// front of the real OpenSearch that forwards, or breaks connections in a chosen way, and counts what reaches it.
// Reads go to another node after any failure; a write is sent again only when it provably never left (a refused
// connection) or when its call site declares it idempotent; a dead node is skipped, then pinged back. Scratch
// indices only (kbqa-test-<uuid>), deleted afterwards; the shared chunk index is not touched.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import test from 'ava';
import { loadConfig } from '../service/config.ts';
import { UpstreamUnavailableError } from '../service/errors.ts';
import { createSearchClient, isRead, type SearchClient, type SearchClientOptions } from '../service/search/client.ts';

const OPENSEARCH = new URL(loadConfig().opensearch.urls[0]);

/** What a proxy does with each request. */
type Fault =
  /** Forward and relay the answer. */
  | 'pass'
  /** Read the request, then destroy the connection: nothing reaches OpenSearch. */
  | 'reset'
  /** Read the request and never answer: nothing reaches OpenSearch, the client times out. */
  | 'hang'
  /** Answer 503 as a node cut off from its cluster does (no cluster manager): nothing reaches OpenSearch. */
  | 'no-cluster-manager'
  /** Forward (OpenSearch runs the request), then destroy the connection instead of answering. */
  | 'reset-after-forward'
  /** Forward (OpenSearch runs the request), then never answer. */
  | 'hang-after-forward';

interface NodeProxy {
  url: string;
  fault: Fault;
  /** Every request, as "METHOD /path" (query string stripped). */
  readonly seen: string[];
  /** The Authorization header of every request ('' when none). */
  readonly authorizations: string[];
  close(): Promise<void>;
}

const NO_CLUSTER_MANAGER = JSON.stringify({
  error: {
    root_cause: [
      { type: 'cluster_block_exception', reason: 'blocked by: [SERVICE_UNAVAILABLE/2/no cluster-manager];' },
    ],
    type: 'cluster_block_exception',
    reason: 'blocked by: [SERVICE_UNAVAILABLE/2/no cluster-manager];',
  },
  status: 503,
});

async function startNodeProxy(fault: Fault, tls?: { key: string; cert: string }): Promise<NodeProxy> {
  const sockets = new Set<Socket>();
  const seen: string[] = [];
  const authorizations: string[] = [];
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    seen.push(`${request.method} ${(request.url ?? '').split('?')[0]}`);
    authorizations.push(request.headers.authorization ?? '');
    const mode = proxy.fault;
    if (mode === 'reset' || mode === 'hang' || mode === 'no-cluster-manager') {
      request.resume();
      request.on('end', () => {
        if (mode === 'reset') request.socket.destroy();
        if (mode === 'no-cluster-manager')
          response.writeHead(503, { 'content-type': 'application/json' }).end(NO_CLUSTER_MANAGER);
      });
      return;
    }
    const outgoing = httpRequest(
      {
        hostname: OPENSEARCH.hostname,
        port: OPENSEARCH.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: OPENSEARCH.host },
      },
      (incoming) => {
        if (mode === 'pass') {
          response.writeHead(incoming.statusCode ?? 502, incoming.headers);
          incoming.pipe(response);
          return;
        }
        // OpenSearch has answered: the request ran. The client hears nothing, or a dead connection.
        incoming.resume();
        if (mode === 'reset-after-forward') incoming.on('end', () => request.socket.destroy());
      },
    );
    outgoing.on('error', () => request.socket.destroy());
    request.pipe(outgoing);
  };
  const server = tls ? createHttpsServer(tls, handle) : createHttpServer(handle);
  server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const proxy: NodeProxy = {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`,
    fault,
    seen,
    authorizations,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
  return proxy;
}

/** A port nothing listens on: connections to it are refused. */
async function refusedUrl(): Promise<string> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** A client of the real node alone: it creates the scratch indices and witnesses what the writes left. */
const direct = createSearchClient({ nodes: [OPENSEARCH.origin], timeoutMs: 30_000 });
const scratchIndices: string[] = [];
const proxies: NodeProxy[] = [];
const clients: SearchClient[] = [];

async function scratchIndex(documents = 3): Promise<string> {
  const index = `kbqa-test-${randomUUID()}`;
  scratchIndices.push(index);
  await direct.request('PUT', `/${index}`, { body: { settings: { number_of_shards: 1, number_of_replicas: 0 } } });
  for (let n = 1; n <= documents; n += 1) {
    await direct.request('PUT', `/${index}/_doc/doc-${n}`, {
      body: { n, text: `scratch document ${n}` },
      querystring: { refresh: true },
    });
  }
  return index;
}

async function proxy(fault: Fault): Promise<NodeProxy> {
  const started = await startNodeProxy(fault);
  proxies.push(started);
  return started;
}

function client(nodes: string[], options: Partial<SearchClientOptions> = {}): SearchClient {
  // A dead node stays skipped for a minute unless a test says otherwise: its count of requests stays exact.
  const created = createSearchClient({ nodes, timeoutMs: 5_000, resurrectAfterMs: 60_000, ...options });
  clients.push(created);
  return created;
}

async function countDocuments(index: string): Promise<number> {
  await direct.request('POST', `/${index}/_refresh`);
  return (await direct.request<{ count: number }>('POST', `/${index}/_count`)).count;
}

const readsOf = (proxyNode: NodeProxy) => proxyNode.seen.filter((line) => !line.startsWith('HEAD '));

test.after.always(async () => {
  await Promise.allSettled(clients.map((created) => created.close()));
  await Promise.allSettled(proxies.map((started) => started.close()));
  for (const index of scratchIndices) await direct.request('DELETE', `/${index}`, { acceptStatuses: [404] });
  await direct.close();
});

test('what counts as a read: GET, HEAD and POST to a read endpoint; every other write is not', (t) => {
  for (const [method, path] of [
    ['GET', '/kbqa-chunks/_settings'],
    ['HEAD', '/'],
    ['POST', '/kbqa-chunks/_search'],
    ['POST', '/kbqa-chunks/_count'],
    ['POST', '/kbqa-chunks/_mget'],
    ['POST', '/kbqa-chunks/_analyze'],
    ['POST', '/_msearch'],
    ['POST', '/_validate/query?explain=true'],
    ['POST', '/kbqa-chunks/_explain/chunk-1'],
  ]) {
    t.true(isRead(method, path), `${method} ${path}`);
  }
  for (const [method, path] of [
    ['POST', '/_bulk'],
    ['POST', '/kbqa-chunks/_doc'],
    ['POST', '/kbqa-chunks/_doc/_search'],
    ['POST', '/kbqa-chunks/_delete_by_query'],
    ['POST', '/kbqa-chunks/_refresh'],
    ['PUT', '/kbqa-chunks/_doc/1'],
    ['DELETE', '/kbqa-chunks'],
  ]) {
    t.false(isRead(method, path), `${method} ${path}`);
  }
});

test('reads succeed while one node resets every connection; that node is then skipped', async (t) => {
  const index = await scratchIndex();
  const broken = await proxy('reset');
  const healthy = await proxy('pass');
  const nodes = client([broken.url, healthy.url]);
  for (let round = 0; round < 4; round += 1) {
    t.is((await nodes.request<{ count: number }>('POST', `/${index}/_count`)).count, 3);
    const hits = await nodes.request<{ hits: { hits: unknown[] } }>('POST', `/${index}/_search`, {
      body: { query: { match: { text: 'scratch' } } },
    });
    t.is(hits.hits.hits.length, 3);
    t.is((await nodes.request<{ _source: { n: number } }>('GET', `/${index}/_doc/doc-2`))._source.n, 2);
  }
  // The first request went to the broken node (round robin starts there) and was answered by the other; after that
  // the broken node is dead and no request reaches it.
  t.deepEqual(broken.seen, [`POST /${index}/_count`]);
  t.is(healthy.seen.length, 12);
});

test('a read that times out, or meets a node without a cluster manager, is answered by another node', async (t) => {
  const index = await scratchIndex();
  for (const fault of ['hang', 'no-cluster-manager'] as const) {
    const broken = await proxy(fault);
    const healthy = await proxy('pass');
    const nodes = client([broken.url, healthy.url], { timeoutMs: 1_000 });
    const started = Date.now();
    t.is((await nodes.request<{ count: number }>('POST', `/${index}/_count`)).count, 3, fault);
    t.deepEqual(broken.seen, [`POST /${index}/_count`], fault);
    t.deepEqual(healthy.seen, [`POST /${index}/_count`], fault);
    // The hung node is given up after its per-attempt timeout (1 s), not the default 10 s: generous for a loaded machine.
    if (fault === 'hang') t.true(Date.now() - started < 8_000, `${Date.now() - started} ms`);
    t.is((await nodes.request<{ count: number }>('POST', `/${index}/_count`)).count, 3);
    t.is(broken.seen.length, 1, `${fault}: skipped once dead`);
  }
});

for (const fault of ['reset-after-forward', 'hang-after-forward'] as const) {
  test(`a write that reached OpenSearch is not sent again (${fault}): 503, one request, one document`, async (t) => {
    const index = await scratchIndex(0);
    const broken = await proxy(fault);
    const healthy = await proxy('pass');
    const nodes = client([broken.url, healthy.url], { timeoutMs: 1_000 });
    // A document without an id: each delivery would add one.
    const error = await t.throwsAsync(nodes.request('POST', `/${index}/_doc`, { body: { text: 'written once' } }));
    t.true(error instanceof UpstreamUnavailableError, String(error));
    t.is((error as UpstreamUnavailableError).status, 503);
    t.deepEqual(broken.seen, [`POST /${index}/_doc`]);
    t.deepEqual(healthy.seen, [], 'not retried on the other node');
    // The client gave up after its 1 s timeout; on a loaded machine OpenSearch may index the document after that.
    const deadline = Date.now() + 15_000;
    while ((await countDocuments(index)) === 0 && Date.now() < deadline) await sleep(200);
    t.is(await countDocuments(index), 1, 'OpenSearch ran it once');
  });
}

test('a write declared idempotent (a bulk under explicit ids) is sent again to another node after a reset', async (t) => {
  const index = await scratchIndex(0);
  const broken = await proxy('reset-after-forward');
  const healthy = await proxy('pass');
  const nodes = client([broken.url, healthy.url]);
  const bulkBody = [
    { index: { _index: index, _id: 'a' } },
    { text: 'first' },
    { index: { _index: index, _id: 'b' } },
    { text: 'second' },
  ];
  const response = await nodes.request<{ errors: boolean }>('POST', '/_bulk', { bulkBody, idempotent: true });
  t.false(response.errors);
  t.deepEqual(broken.seen, ['POST /_bulk']);
  t.deepEqual(healthy.seen, ['POST /_bulk']);
  t.is(await countDocuments(index), 2, 'delivered twice, the same two documents');
});

test('a write to a node that refuses connections goes to the next node; the refusing node is then skipped', async (t) => {
  const index = await scratchIndex(0);
  const healthy = await proxy('pass');
  const nodes = client([await refusedUrl(), healthy.url]);
  const created = await nodes.request<{ result: string }>('POST', `/${index}/_doc`, { body: { text: 'written once' } });
  t.is(created.result, 'created');
  t.deepEqual(healthy.seen, [`POST /${index}/_doc`]);
  t.is(await countDocuments(index), 1);
  for (let round = 0; round < 5; round += 1)
    await nodes.request('POST', `/${index}/_doc`, { body: { text: `round ${round}` } });
  // Every later request went straight to the living node (a refused one would have been retried there too, but a
  // write that reached the refusing node first would show here as a second request for one document: none did).
  t.is(healthy.seen.length, 6);
  t.is(await countDocuments(index), 6);
});

test('when every node fails, the caller gets 503 after one attempt per node', async (t) => {
  const index = await scratchIndex(1);
  const first = await proxy('reset');
  const second = await proxy('reset');
  const nodes = client([first.url, second.url]);
  const read = await t.throwsAsync(nodes.request('POST', `/${index}/_count`));
  t.true(read instanceof UpstreamUnavailableError, String(read));
  t.is(first.seen.length + second.seen.length, 2, 'bounded by the number of nodes');
  const write = await t.throwsAsync(nodes.request('POST', `/${index}/_doc`, { body: { text: 'lost' } }));
  t.true(write instanceof UpstreamUnavailableError, String(write));
  const refusedEverywhere = client([await refusedUrl(), await refusedUrl()]);
  const refused = await t.throwsAsync(refusedEverywhere.request('GET', '/'));
  t.true(refused instanceof UpstreamUnavailableError, String(refused));
  t.regex((refused as Error).message, /search engine is unavailable/);
});

test('a dead node is pinged once its time is up, and serves again when it answers', async (t) => {
  const index = await scratchIndex();
  const flaky = await proxy('reset');
  const healthy = await proxy('pass');
  const nodes = client([flaky.url, healthy.url], { resurrectAfterMs: 200 });
  t.is((await nodes.request<{ count: number }>('POST', `/${index}/_count`)).count, 3);
  t.is(flaky.seen.length, 1);
  flaky.fault = 'pass';
  await new Promise((resolve) => setTimeout(resolve, 400));
  // The next request starts the ping (HEAD /) and goes elsewhere; once the ping is answered the node is back.
  await nodes.request('POST', `/${index}/_count`);
  const deadline = Date.now() + 5_000;
  while (!flaky.seen.includes('HEAD /') && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  t.true(flaky.seen.includes('HEAD /'), flaky.seen.join(', '));
  for (let round = 0; round < 6; round += 1)
    t.is((await nodes.request<{ count: number }>('POST', `/${index}/_count`)).count, 3);
  t.true(readsOf(flaky).length >= 3, `round robin again: ${flaky.seen.join(', ')}`);
});

test('TLS with the configured CA file, and basic credentials on every request', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kbqa-tls-'));
  try {
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    openssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=kbqa test CA',
    );
    openssl(
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'node.key',
      '-out',
      'node.csr',
      '-subj',
      '/CN=127.0.0.1',
    );
    writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
    openssl(
      'x509',
      '-req',
      '-in',
      'node.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'node.pem',
      '-days',
      '2',
      '-extfile',
      'san.ext',
    );
    const started = await startNodeProxy('pass', {
      key: readFileSync(join(dir, 'node.key'), 'utf8'),
      cert: readFileSync(join(dir, 'node.pem'), 'utf8'),
    });
    proxies.push(started);

    const secured = client([started.url], {
      caFile: join(dir, 'ca.pem'),
      auth: { username: 'kbqa', password: 's3cret:with colon' },
    });
    const info = await secured.request<{ version: { distribution: string } }>('GET', '/');
    t.is(info.version.distribution, 'opensearch');
    t.deepEqual(started.authorizations, [`Basic ${Buffer.from('kbqa:s3cret:with colon').toString('base64')}`]);

    // Without the CA the node's certificate is not trusted: no request gets through.
    const seenBefore = started.seen.length;
    const untrusting = client([started.url]);
    const error = await t.throwsAsync(untrusting.request('GET', '/'));
    t.true(error instanceof UpstreamUnavailableError, String(error));
    t.regex(JSON.stringify((error as UpstreamUnavailableError).cause), /certificate/i);
    t.is(started.seen.length, seenBefore);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
