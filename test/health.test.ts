// /healthz and /readyz: ready against the real stack; 503 naming OpenSearch when it cannot be reached.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import anyTest, { type TestFn } from 'ava';
import { loadConfig } from '../service/config.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

const test = anyTest as TestFn<{ app: TestApp }>;

test.before(async (t) => {
  t.context.app = await startTestApp();
});
test.after.always(async (t) => t.context.app?.close());

test('healthz answers while the process lives', async (t) => {
  const response = await t.context.app.call('GET', '/healthz');
  t.is(response.status, 200);
  t.deepEqual(response.body, { status: 'ok' });
});

test('readyz is 200 with every component ok against the real stack', async (t) => {
  const response = await t.context.app.call('GET', '/readyz');
  t.is(response.status, 200);
  t.deepEqual(response.body.components, { opensearch: 'ok', mongodb: 'ok', embedder: 'ok' });
});

test('readyz is 503 naming opensearch when OpenSearch is unreachable', async (t) => {
  const app = await startTestApp({ KBQA_OPENSEARCH_URL: 'http://127.0.0.1:1', KBQA_OPENSEARCH_TIMEOUT_MS: '500' }).catch(
    (error: unknown) => error,
  );
  // Bootstrap applies assets, so an app cannot even start without OpenSearch: that is the first guarantee.
  t.true(app instanceof Error, 'start-up fails without OpenSearch');
});

/** A TCP forwarder to the real OpenSearch that can be cut, standing in for "OpenSearch was killed". */
async function startForwarder(target: URL): Promise<{ url: string; cut(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

test('readyz turns 503 naming opensearch when OpenSearch goes away after start-up', async (t) => {
  const forwarder = await startForwarder(new URL(loadConfig().opensearch.url));
  const app = await startTestApp({ KBQA_OPENSEARCH_URL: forwarder.url, KBQA_OPENSEARCH_TIMEOUT_MS: '1000' });
  try {
    t.is((await app.call('GET', '/readyz')).status, 200);
    await forwarder.cut();
    const response = await app.call('GET', '/readyz');
    t.is(response.status, 503);
    t.is(response.body.error.code, 'server_error');
    t.regex(response.body.error.message, /opensearch/);
    t.is(response.body.components.mongodb, 'ok');
    t.not(response.body.components.opensearch, 'ok');
  } finally {
    await app.close();
  }
});
