// /healthz and /readyz: ready against the real stack; 503 naming OpenSearch when it cannot be reached.
import anyTest, { type TestFn } from 'ava';
import { loadConfig } from '../service/config.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { startTcpRelay } from './helpers/tcpRelay.ts';

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

test('readyz turns 503 naming opensearch when OpenSearch goes away after start-up', async (t) => {
  const opensearch = new URL(loadConfig().opensearch.url);
  // Cutting a relay in front of the real OpenSearch stands in for "OpenSearch was killed".
  const forwarder = await startTcpRelay({ host: opensearch.hostname, port: Number(opensearch.port) });
  const app = await startTestApp({ KBQA_OPENSEARCH_URL: `http://127.0.0.1:${forwarder.port}`, KBQA_OPENSEARCH_TIMEOUT_MS: '1000' });
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

test('readyz is 503 naming the embedder when it cannot run an inference', async (t) => {
  const app = await startTestApp();
  const embedder = app.deps.rag.embedder;
  const original = embedder.embedQuery;
  embedder.embedQuery = async () => {
    throw new Error('injected: the ONNX session failed');
  };
  try {
    const response = await app.call('GET', '/readyz');
    t.is(response.status, 503);
    t.regex(response.body.error.message, /embedder/);
    t.deepEqual(response.body.components, { opensearch: 'ok', mongodb: 'ok', embedder: 'injected: the ONNX session failed' });
  } finally {
    embedder.embedQuery = original;
    await app.close();
  }
});
