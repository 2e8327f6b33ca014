// All-or-nothing ingest and upstream outages, with real failures: an app whose OpenSearch URL is a proxy
// (test/helpers/faultyProxy.ts) that breaks `POST /_bulk` on demand, a store write that fails, and an OpenSearch that
// is not there at all. Each case checks, through a second app talking to the real services, that a failed ingest
// leaves neither a document record nor a chunk behind. Serial: the proxy's fault switch is shared.
import type { ExecutionContext } from 'ava';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { UpstreamUnavailableError } from '../service/errors.ts';
import { startTestApp, testWithApp, type TestApp } from './helpers/app.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';
import { startFaultyProxy, type BulkFault, type FaultyProxy } from './helpers/faultyProxy.ts';

interface Context {
  /** Talks to OpenSearch through the proxy. */
  proxied: TestApp;
  proxy: FaultyProxy;
  /** Talks to the real services directly: the witness of what was stored. */
  direct: TestApp;
  user: TestUser;
}

const test = testWithApp<Context>();

const CONTENT = `# Storm drill

## Before the storm

Close the flood gates on the east quay and move the rescue boat to the inner basin.

## After the storm

Inspect the sea wall for cracks and report the tide gauge reading to the harbour master.
`;

test.before(async (t) => {
  t.context.direct = t.context.app;
  t.context.proxy = await startFaultyProxy();
  t.context.proxied = await startTestApp({ KBQA_OPENSEARCH_URL: t.context.proxy.url });
  t.context.user = await makeUser(t.context.direct.deps.store);
});

test.after.always(async (t) => {
  t.context.proxy?.disarm();
  await t.context.proxied?.close();
  await t.context.proxy?.close();
});

/** Nothing of the KB in either store. */
async function assertNothingStored(t: ExecutionContext<Context>, kbId: string) {
  const { direct, user } = t.context;
  t.deepEqual((await direct.deps.store.listDocuments(kbId, {})).items, [], 'no document record');
  t.is(await direct.deps.search.countChunks({ knowledge_base_id: kbId }), 0, 'no chunk');
  t.deepEqual(await direct.deps.store.listDocumentContentIds(kbId), [], 'no stored content');
  const listed = await direct.call('GET', `/api/v1/knowledge-bases/${kbId}/documents`, { key: user.key });
  t.deepEqual(listed.body, { documents: [] });
  const counted = await direct.call('GET', '/api/v1/knowledge-bases', { key: user.key });
  t.is(counted.body.knowledge_bases.find((item: { id: string }) => item.id === kbId)?.document_count, 0);
}

const INDEXING_FAILED = /^the search engine is unavailable; retry later$/;
const STORE_UNAVAILABLE = { code: 'server_error', message: 'the metadata store is unavailable; retry later' };

for (const fault of ['bulk-503', 'bulk-destroy', 'bulk-destroy-after-forward'] as BulkFault[]) {
  test.serial(`bulk indexing fails (${fault}): 503 server_error, no document record, no chunk`, async (t) => {
    const { proxied, proxy, user } = t.context;
    const kb = await createKb(proxied, user.key, `bulk fault ${fault}`);
    const failedBefore = proxy.failedBulks;
    const seenBefore = proxy.seen.length;
    proxy.arm(fault);
    let response;
    try {
      response = await proxied.call('POST', '/api/v1/documents', {
        key: user.key,
        body: { kb_id: kb, filename: 'storm-drill.md', content: CONTENT },
      });
    } finally {
      proxy.disarm();
    }
    t.true(proxy.failedBulks > failedBefore, 'the bulk request reached the proxy and was failed');
    t.true(
      proxy.seen.slice(seenBefore).some((line) => /^POST \/kbqa-chunks[^/]*\/_delete_by_query$/.test(line)),
      `the partial ingest was cleaned up by document id: ${proxy.seen.slice(seenBefore).join(', ')}`,
    );
    t.is(response.status, 503, JSON.stringify(response.body));
    t.deepEqual(Object.keys(response.body), ['error']);
    t.is(response.body.error.code, 'server_error');
    t.regex(response.body.error.message, INDEXING_FAILED);
    await assertNothingStored(t, kb);

    // Disarmed, the same request succeeds, in full, through the same proxy.
    const document = await ingest(proxied, user.key, kb, 'storm-drill.md', CONTENT);
    t.is(await t.context.direct.deps.search.countChunks({ knowledge_base_id: kb }), document.chunks);
    t.is((await t.context.direct.deps.store.listDocuments(kb, {})).items.length, 1);
  });
}

/** Ingests the drill document while `object[method]` is replaced by `replacement`; the original is always restored. */
async function ingestWhileReplaced<T extends object, K extends keyof T>(
  app: TestApp,
  key: string,
  kb: string,
  object: T,
  method: K,
  replacement: T[K],
) {
  const original = object[method];
  object[method] = replacement;
  try {
    return await app.call('POST', '/api/v1/documents', {
      key,
      body: { kb_id: kb, filename: 'storm-drill.md', content: CONTENT },
    });
  } finally {
    object[method] = original;
  }
}

test.serial(
  'MongoDB fails after the chunks were indexed: 503 naming the metadata store, the chunks are removed',
  async (t) => {
    const { proxied, direct, user } = t.context;
    const kb = await createKb(proxied, user.key, 'store fault');
    let attempts = 0;
    let chunksWhenInsertFailed = -1;
    const response = await ingestWhileReplaced(
      proxied,
      user.key,
      kb,
      proxied.deps.store,
      'setDocumentReady',
      async (id) => {
        attempts += 1;
        chunksWhenInsertFailed = await direct.deps.search.countChunks({ document_id: id });
        throw new UpstreamUnavailableError('mongodb', 'the metadata store is unavailable; retry later');
      },
    );
    t.is(attempts, 1);
    t.true(chunksWhenInsertFailed > 0, 'the chunks really were in OpenSearch when the store write failed');
    t.is(response.status, 503, JSON.stringify(response.body));
    t.deepEqual(response.body, { error: STORE_UNAVAILABLE }, 'the failing component is named, not OpenSearch');
    await assertNothingStored(t, kb);
  },
);

test.serial(
  'the store write succeeds but its acknowledgement is lost: 503, the record and the chunks are removed',
  async (t) => {
    const { proxied, user } = t.context;
    const kb = await createKb(proxied, user.key, 'lost ack');
    const store = proxied.deps.store;
    const original = store.setDocumentReady;
    const response = await ingestWhileReplaced(proxied, user.key, kb, store, 'setDocumentReady', async (...args) => {
      await original(...args);
      throw new UpstreamUnavailableError('mongodb', 'the metadata store is unavailable; retry later');
    });
    t.is(response.status, 503, JSON.stringify(response.body));
    t.deepEqual(response.body, { error: STORE_UNAVAILABLE });
    await assertNothingStored(t, kb);
  },
);

test.serial(
  'a deterministic failure is not 503: a defect answers 500 with the request id, and nothing is stored',
  async (t) => {
    const { proxied, user } = t.context;
    const kb = await createKb(proxied, user.key, 'defect');
    const response = await ingestWhileReplaced(
      proxied,
      user.key,
      kb,
      proxied.deps.store,
      'setDocumentReady',
      async () => {
        throw new TypeError('injected: a bug, which a retry would only repeat');
      },
    );
    t.is(response.status, 500, JSON.stringify(response.body));
    t.is(response.body.error.code, 'server_error');
    t.regex(response.body.error.message, /^internal error \(request id [\w-]+\)$/);
    await assertNothingStored(t, kb);
  },
);

test.serial('embedding fails: 503 server_error and nothing is written', async (t) => {
  const { proxied, proxy, user } = t.context;
  const kb = await createKb(proxied, user.key, 'embedder fault');
  // The ONNX embedder itself fails (rag.embedSegments classifies its failures).
  const seenBefore = proxy.seen.length;
  const response = await ingestWhileReplaced(
    proxied,
    user.key,
    kb,
    proxied.deps.rag.models,
    'embedPassages',
    async () => {
      throw new Error('injected: the embedder crashed');
    },
  );
  t.is(response.status, 503, JSON.stringify(response.body));
  t.deepEqual(response.body, { error: { code: 'server_error', message: 'the embedder is unavailable; retry later' } });
  t.false(proxy.seen.slice(seenBefore).includes('POST /_bulk'), 'nothing was sent to OpenSearch');
  await assertNothingStored(t, kb);
});

test.serial(
  'OpenSearch down: POST /query and POST /documents answer 503 server_error, nothing is stored',
  async (t) => {
    // An app whose OpenSearch goes away entirely: its proxy stops listening, so every connection is refused, exactly
    // like KBQA_OPENSEARCH_URL=http://127.0.0.1:1 (startTestApp needs a live OpenSearch to install its assets).
    const { direct, user } = t.context;
    const vanishing = await startFaultyProxy();
    const app = await startTestApp({ KBQA_OPENSEARCH_URL: vanishing.url });
    try {
      const kb = await createKb(app, user.key, 'search down');
      await ingest(
        app,
        user.key,
        kb,
        'before.md',
        'Written while OpenSearch was still up: the storm drill is on Fridays.',
      );
      await vanishing.close();

      const started = Date.now();
      const query = await app.call('POST', '/api/v1/query', {
        key: user.key,
        body: { query: 'When is the storm drill?', knowledge_base_ids: [kb] },
      });
      t.is(query.status, 503, JSON.stringify(query.body));
      t.deepEqual(query.body, {
        error: { code: 'server_error', message: 'the search engine is unavailable; retry later' },
      });
      t.true(Date.now() - started < 15_000, 'refused connections fail fast');

      const unrestricted = await app.call('POST', '/api/v1/query', {
        key: user.key,
        body: { query: 'When is the storm drill?' },
      });
      t.is(unrestricted.status, 503);
      t.is(unrestricted.body.error.code, 'server_error');

      const ingestResponse = await app.call('POST', '/api/v1/documents', {
        key: user.key,
        body: { kb_id: kb, filename: 'after.md', content: 'Written while OpenSearch was down.' },
      });
      t.is(ingestResponse.status, 503, JSON.stringify(ingestResponse.body));
      t.is(ingestResponse.body.error.code, 'server_error');
      const records = (await direct.deps.store.listDocuments(kb, {})).items;
      t.deepEqual(
        records.map((record) => record.filename),
        ['before.md'],
        'the failed ingest left no record',
      );
      t.is(await direct.deps.search.countChunks({ knowledge_base_id: kb }), 1);

      // Reads that need only the store keep working.
      const listed = await app.call('GET', `/api/v1/knowledge-bases/${kb}/documents`, { key: user.key });
      t.is(listed.status, 200);
    } finally {
      await app.close();
    }
  },
);
