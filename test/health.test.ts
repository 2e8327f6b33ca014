// /healthz and /readyz: ready against the real stack; 503 naming OpenSearch when it cannot be reached. /readyz is
// public: it shows each component's state only (the reason goes to the log), and one probe serves callers for
// READINESS_TTL_MS.
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../service/config.ts';
import { READINESS_TTL_MS } from '../service/http/routes/health.ts';
import { startTestApp, testWithApp } from './helpers/app.ts';
import { startTcpRelay } from './helpers/tcpRelay.ts';
import { capturingLogger } from './helpers/logCapture.ts';

const test = testWithApp();

test('healthz answers while the process lives', async (t) => {
  const response = await t.context.app.call('GET', '/healthz');
  t.is(response.status, 200);
  t.deepEqual(response.body, { status: 'ok' });
});

test('readyz is 200 with every component ok against the real stack', async (t) => {
  const response = await t.context.app.call('GET', '/readyz');
  t.is(response.status, 200);
  t.deepEqual(response.body.components, { opensearch: 'ok', mongodb: 'ok', embedder: 'ok', splitter: 'ok' });
});

test('readyz is 503 naming opensearch when OpenSearch is unreachable', async (t) => {
  const app = await startTestApp({
    KBQA_OPENSEARCH_URL: 'http://127.0.0.1:1',
    KBQA_OPENSEARCH_TIMEOUT_MS: '500',
  }).catch((error: unknown) => error);
  // Bootstrap applies assets, so an app cannot even start without OpenSearch: that is the first guarantee.
  t.true(app instanceof Error, 'start-up fails without OpenSearch');
});

test('readyz turns 503 naming opensearch when OpenSearch goes away after start-up', async (t) => {
  const opensearch = new URL(loadConfig().opensearch.url);
  // Cutting a relay in front of the real OpenSearch stands in for "OpenSearch went away" (connections accepted and
  // closed at once; a refused port is searchClientNodes.test.ts's).
  const forwarder = await startTcpRelay({ host: opensearch.hostname, port: Number(opensearch.port) });
  const app = await startTestApp({
    KBQA_OPENSEARCH_URL: `http://127.0.0.1:${forwarder.port}`,
    KBQA_OPENSEARCH_TIMEOUT_MS: '1000',
  });
  try {
    t.is((await app.call('GET', '/readyz')).status, 200);
    forwarder.cut();
    // The last probe answers for READINESS_TTL_MS; after it, the next call probes again.
    await sleep(READINESS_TTL_MS + 100);
    const response = await app.call('GET', '/readyz');
    t.is(response.status, 503);
    t.deepEqual(response.body, {
      error: { code: 'server_error', message: 'not ready: opensearch unavailable' },
      components: { opensearch: 'unavailable', mongodb: 'ok', embedder: 'ok', splitter: 'ok' },
    });
  } finally {
    await app.close();
    await forwarder.close();
  }
});

test('readyz is 503 naming the embedder when it cannot run an inference; the reason is logged, not sent', async (t) => {
  const { logger, lines } = capturingLogger();
  const app = await startTestApp({}, { logger });
  const embedder = app.deps.rag.models;
  const original = embedder.embedQuery;
  embedder.embedQuery = async () => {
    throw new Error('injected: the ONNX session failed');
  };
  try {
    const response = await app.call('GET', '/readyz');
    t.is(response.status, 503);
    t.regex(response.body.error.message, /embedder/);
    t.deepEqual(response.body.components, { opensearch: 'ok', mongodb: 'ok', embedder: 'unavailable', splitter: 'ok' });
    t.false(JSON.stringify(response.body).includes('injected'), "the dependency's message stays on the server");
    const warnings = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'not ready');
    t.is(warnings.length, 1);
    t.is(warnings[0].level, 40, 'logged at warn');
    t.deepEqual(warnings[0].components, { embedder: 'Error: injected: the ONNX session failed' });
  } finally {
    embedder.embedQuery = original;
    await app.close();
  }
});

test('readyz: concurrent callers share one probe, and its result answers for READINESS_TTL_MS', async (t) => {
  const app = await startTestApp();
  const original = app.deps.rag.embedderProblem;
  let probes = 0;
  app.deps.rag.embedderProblem = async () => {
    probes += 1;
    return original();
  };
  try {
    const responses = await Promise.all(Array.from({ length: 20 }, () => app.call('GET', '/readyz')));
    t.deepEqual(
      responses.map((response) => response.status),
      Array(20).fill(200),
    );
    t.is(probes, 1, 'twenty parallel calls, one embedder inference');
    t.is((await app.call('GET', '/readyz')).status, 200);
    t.is(probes, 1, 'a call within the window reuses the result');
    await sleep(READINESS_TTL_MS + 100);
    t.is((await app.call('GET', '/readyz')).status, 200);
    t.is(probes, 2, 'after the window, a new probe');
  } finally {
    app.deps.rag.embedderProblem = original;
    await app.close();
  }
});

test('health paths are case-sensitive: /READYZ and /Healthz are no route', async (t) => {
  for (const path of ['/READYZ', '/Readyz', '/HEALTHZ', '/Healthz']) {
    const response = await t.context.app.call('GET', path);
    t.is(response.status, 404, path);
    t.is(response.body.error.code, 'not_found', path);
  }
});
