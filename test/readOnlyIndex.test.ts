// The read-only block a full disk puts on the chunk index (index.blocks.read_only_allow_delete: OpenSearch sets it
// on every index with a shard on a node past the flood-stage watermark), set for real on the real OpenSearch.
// Ingestion (and deletion, which OpenSearch 3 refuses under that block too) answers 503 saying so, queries keep
// answering, jobs caught mid-way wait without failing, and everything resumes once the block is lifted.
//
// Scope: a block on the default chunk index would fail every ingestion into it while it is on, whoever makes them.
// This file's app gets a chunk index of its own instead, as a
// second deployment on a shared cluster would (KBQA_CHUNKS_ALIAS=kbqa-chunks-<name>: alias and index of its own,
// same template and pipelines); the block goes on that index only, and the index is deleted afterwards. Serial:
// the block is state every test here shares.
import { randomUUID } from 'node:crypto';
import type { ExecutionContext } from 'ava';
import { SearchIndexReadOnlyError } from '../service/errors.ts';
import { CHUNKS_ALIAS, loadSearchAssets } from '../service/search/assets.ts';
import { isClaimable } from '../service/store/ingestJobs.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { dropAliasFamily } from './helpers/aliasFamily.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';

interface Context {
  app: TestApp;
  user: TestUser;
  kb: string;
}

const ALIAS = `${CHUNKS_ALIAS}-t${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const test = testWithApp<Omit<Context, 'app'>>({
  // Chunks of 32 tokens: a logbook of 60 sections makes well over 32 chunks (SEGMENTS_PER_STEP), so several steps.
  env: { KBQA_CHUNKS_ALIAS: ALIAS, KBQA_CHUNK_TOKENS: '32', KBQA_CHUNK_OVERLAP_TOKENS: '0' },
  beforeClose: async (t) => {
    if (t.context.app)
      await setBlock(t.context.app, 'index.blocks.read_only_allow_delete', null).catch(() => undefined);
  },
});

const READ_ONLY =
  /^the search index is read-only \(a node's disk is full\?\); ingestion resumes when the block is lifted; retry later$/;
const ASYNC = { prefer: 'respond-async' };

const HARBOUR = `# Harbour rules

Boats moor at the north pontoon between six and nine. The harbour master signs every mooring slip in green ink.`;

/** Sections of their own (and small chunks: KBQA_CHUNK_TOKENS below), so a document takes several bulk steps. */
function logbook(topic: string, sections: number): string {
  return Array.from(
    { length: sections },
    (_, index) =>
      `## ${topic} entry ${index}\n\nThe ${topic} crew logged crate ${index * 7} for pier ${index % 13} on day ${index}, checked by inspector ${index % 5}.`,
  ).join('\n\n');
}

test.before(async (t) => {
  const { app } = t.context;
  t.true(
    app.deps.search.alias === ALIAS &&
      app.deps.search.indexName.startsWith(`kbqa-chunks-v${loadSearchAssets().version}-t`),
    app.deps.search.indexName,
  );
  const user = await makeUser(app.deps.store);
  const kb = await createKb(app, user.key, 'read-only index');
  Object.assign(t.context, { user, kb });
});

test.after.always(async () => {
  // The index and its alias-specific template (kbqa-chunks-v<N>-<name>).
  await dropAliasFamily(ALIAS);
});

/** Sets (true) or lifts (null) a block on the app's own chunk index: the same call an operator makes. */
async function setBlock(app: TestApp, block: string, value: true | null): Promise<void> {
  await app.deps.search.request('PUT', `/${app.deps.search.indexName}/_settings`, {
    body: { [block]: value },
    idempotent: true,
  });
}

/** Until the app's cached check (a second at most) reports `expected`. */
async function blockSeen(t: ExecutionContext, app: TestApp, expected: string | null): Promise<void> {
  const deadline = Date.now() + 5_000;
  let seen = await app.deps.search.writeBlock();
  while (seen !== expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    seen = await app.deps.search.writeBlock();
  }
  t.is(seen, expected);
}

/** The documents /search returns chunks of, for a question over one KB. */
async function searchedDocuments(app: TestApp, key: string, kb: string, query: string): Promise<string[]> {
  const response = await app.call('POST', '/api/v1/search', {
    key,
    body: { query, knowledge_base_ids: [kb], max_results: 100 },
  });
  if (response.status !== 200) throw new Error(`search failed: ${response.status} ${JSON.stringify(response.body)}`);
  return [...new Set((response.body.results as Array<{ document_id: string }>).map((result) => result.document_id))];
}

async function documentsOf(app: TestApp, kb: string): Promise<Array<{ _id: string; status: string }>> {
  return (await app.deps.store.listDocuments(kb, {}, 'all')).items;
}

async function waitForStatus(
  app: TestApp,
  key: string,
  id: string,
  done: (document: any) => boolean,
  timeoutMs = 60_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const document = (await app.call('GET', `/api/v1/documents/${id}`, { key })).body.document;
    if (done(document) || Date.now() > deadline) return document;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Runs `body` with the app's indexChunks wrapped: just before its call number `blockBefore`, the block is set on the
 * real index, so that bulk (and not the check before ingestion starts) is what meets it.
 */
async function withBlockMidway<T>(
  app: TestApp,
  blockBefore: number,
  body: (calls: () => { made: number; refused: number }) => Promise<T>,
): Promise<T> {
  const search = app.deps.search;
  const original = search.indexChunks;
  let made = 0;
  let refused = 0;
  search.indexChunks = async (chunks) => {
    made += 1;
    if (made === blockBefore) await setBlock(app, 'index.blocks.read_only_allow_delete', true);
    try {
      return await original(chunks);
    } catch (error) {
      if (error instanceof SearchIndexReadOnlyError) refused += 1;
      throw error;
    }
  };
  try {
    return await body(() => ({ made, refused }));
  } finally {
    search.indexChunks = original;
  }
}

test.serial(
  'while the index is read-only, ingestion answers 503 saying so and stores nothing, queries answer; lifted, the same ingest succeeds',
  async (t) => {
    const { app, user, kb } = t.context;
    const harbour = await ingest(app, user.key, kb, 'harbour.md', HARBOUR);
    const content = logbook('ferry', 3);

    await setBlock(app, 'index.blocks.read_only_allow_delete', true);
    try {
      await blockSeen(t, app, 'index.blocks.read_only_allow_delete');
      for (const headers of [{}, ASYNC]) {
        const refused = await app.call('POST', '/api/v1/documents', {
          key: user.key,
          headers,
          body: { kb_id: kb, filename: 'ferry.md', content },
        });
        t.is(refused.status, 503, JSON.stringify(refused.body));
        t.deepEqual(Object.keys(refused.body), ['error']);
        t.is(refused.body.error.code, 'server_error');
        t.regex(refused.body.error.message, READ_ONLY);
      }
      const replaced = await app.call('PUT', `/api/v1/documents/${harbour.id}`, {
        key: user.key,
        body: { content: `${HARBOUR}\n\nNew rule.` },
      });
      t.is(replaced.status, 503, JSON.stringify(replaced.body));
      t.regex(replaced.body.error.message, READ_ONLY);
      t.deepEqual(
        (await documentsOf(app, kb)).map((document) => [document._id, document.status]),
        [[harbour.id, 'ready']],
        'nothing stored, nothing changed',
      );

      const answered = await app.call('POST', '/api/v1/query', {
        key: user.key,
        body: { query: 'When do boats moor at the north pontoon?', knowledge_base_ids: [kb] },
      });
      t.is(answered.status, 200, JSON.stringify(answered.body));
      t.is(answered.body.citations[0]?.document_id, harbour.id);
      const searched = await app.call('POST', '/api/v1/search', {
        key: user.key,
        body: { query: 'mooring slip ink', knowledge_base_ids: [kb] },
      });
      t.is(searched.status, 200, JSON.stringify(searched.body));
    } finally {
      await setBlock(app, 'index.blocks.read_only_allow_delete', null);
    }
    await blockSeen(t, app, null);
    const ferry = await ingest(app, user.key, kb, 'ferry.md', content);
    t.is(await app.deps.search.countChunks({ document_id: ferry.id }), ferry.chunks);
    // All of it went to this file's own index, none to the default alias's.
    const shared = await app.deps.search.request<{ count: number }>('POST', `/${CHUNKS_ALIAS}/_count`, {
      body: { query: { term: { knowledge_base_id: kb } } },
    });
    t.is(shared.count, 0);
  },
);

test.serial(
  'a queued job that meets the block mid-way waits, queued, without failing or using an attempt; lifted, it ends ready',
  async (t) => {
    const { app, user, kb } = t.context;
    const content = logbook('barge', 60);
    let id = '';
    await withBlockMidway(app, 2, async (calls) => {
      try {
        const accepted = await app.call('POST', '/api/v1/documents', {
          key: user.key,
          headers: ASYNC,
          body: { kb_id: kb, filename: 'barge.md', content },
        });
        t.is(accepted.status, 202, JSON.stringify(accepted.body));
        id = accepted.body.document.id;
        // The first step was indexed; the second met the block; the job gave itself back.
        const deadline = Date.now() + 60_000;
        let job = await app.deps.store.findJob(id);
        while ((calls().refused === 0 || job?.lease_owner !== null) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          job = await app.deps.store.findJob(id);
        }
        t.deepEqual(calls(), { made: 2, refused: 1 });
        t.truthy(job, 'the job is kept');
        t.is(job?.attempts, 0, 'the block used up no attempt');
        const waiting = (await app.call('GET', `/api/v1/documents/${id}`, { key: user.key })).body.document;
        t.is(waiting.status, 'queued');
        t.is(waiting.error ?? null, null);
        // The first step's chunks are indexed (they cannot be deleted under the block) but hidden: not retrieved.
        await app.deps.search.refreshChunks();
        t.true((await app.deps.search.countChunks({ document_id: id })) > 0);
        t.false(
          (await searchedDocuments(app, user.key, kb, 'barge crew crate pier inspector')).includes(id),
          'nothing of a document in flight is retrieved',
        );

        // Past its back-off (2 s) the job is still not taken: the runner claims nothing while the block is on. Not
        // "after 3 s" (on a loaded machine no poll may have run by then): after a poll that found the job claimable
        // has demonstrably ended, i.e. once the poll after it starts (polls run one after the other). A claim in that
        // poll would show as a lease below, or as the job missing from the next poll's candidates (then this waits
        // out the deadline and the assertions below fail).
        const store = app.deps.store;
        const listJobsToSchedule = store.listJobsToSchedule;
        let pollsFindingIt = 0;
        store.listJobsToSchedule = async () => {
          const jobs = await listJobsToSchedule();
          const now = Date.now();
          if (jobs.some((job) => job._id === id && isClaimable(job, now, app.deps.config.ingestion.leaseMs)))
            pollsFindingIt += 1;
          return jobs;
        };
        try {
          const pollDeadline = Date.now() + 60_000;
          while (pollsFindingIt < 2 && Date.now() < pollDeadline)
            await new Promise((resolve) => setTimeout(resolve, 50));
        } finally {
          store.listJobsToSchedule = listJobsToSchedule;
        }
        t.true(pollsFindingIt >= 2, `${pollsFindingIt} polls found the job claimable`);
        t.is((await app.deps.store.findJob(id))?.lease_owner, null);
        t.is(calls().made, 2);
        t.is((await app.call('GET', `/api/v1/documents/${id}`, { key: user.key })).body.document.status, 'queued');
      } finally {
        await setBlock(app, 'index.blocks.read_only_allow_delete', null);
      }
      const ready = await waitForStatus(
        app,
        user.key,
        id,
        (document) => document.status === 'ready' || document.status === 'failed',
      );
      t.is(ready.status, 'ready', JSON.stringify(ready));
      t.true(ready.chunks > 32, `${ready.chunks} chunks: more than one step`);
      t.is(await app.deps.search.countChunks({ document_id: id }), ready.chunks);
    });
    t.true((await searchedDocuments(app, user.key, kb, 'barge crew crate pier inspector')).includes(id));
  },
);

test.serial(
  'a request waiting on its document when the block comes mid-way: 503 saying the document is stored and queued; lifted, it ends ready',
  async (t) => {
    const { app, user, kb } = t.context;
    const before = (await documentsOf(app, kb)).map((document) => document._id);
    const response = await withBlockMidway(app, 2, async (calls) => {
      try {
        const answered = await app.call('POST', '/api/v1/documents', {
          key: user.key,
          body: { kb_id: kb, filename: 'tug.md', content: logbook('tug', 60) },
        });
        t.deepEqual(calls(), { made: 2, refused: 1 });
        // The request was told "stored and queued": its job is queued (async) now, so a later outage retries it
        // rather than removing the document as all-or-nothing.
        const waiting = (await documentsOf(app, kb)).filter((document) => !before.includes(document._id));
        t.is((await app.deps.store.findJob(waiting[0]?._id ?? ''))?.mode, 'async');
        return answered;
      } finally {
        await setBlock(app, 'index.blocks.read_only_allow_delete', null);
      }
    });
    t.is(response.status, 503, JSON.stringify(response.body));
    const stored = (await documentsOf(app, kb)).filter((document) => !before.includes(document._id));
    t.is(stored.length, 1);
    const id = stored[0]?._id;
    t.is(
      response.body.error.message,
      `the search index is read-only (a node's disk is full?); ingestion resumes when the block is lifted: document ${id} is stored and queued, follow GET /api/v1/documents/${id}`,
    );
    const ready = await waitForStatus(
      app,
      user.key,
      id,
      (document) => document.status === 'ready' || document.status === 'failed',
    );
    t.is(ready.status, 'ready', JSON.stringify(ready));
    t.is(await app.deps.search.countChunks({ document_id: id }), ready.chunks);
  },
);

test.serial(
  'deleting a document while the index is read-only answers 503 at once and changes nothing; lifted, it deletes',
  async (t) => {
    const { app, user, kb } = t.context;
    const doomed = await ingest(app, user.key, kb, 'doomed.md', logbook('doomed', 2));
    await setBlock(app, 'index.blocks.read_only_allow_delete', true);
    try {
      await blockSeen(t, app, 'index.blocks.read_only_allow_delete');
      const started = Date.now();
      const refused = await app.call('DELETE', `/api/v1/documents/${doomed.id}`, { key: user.key });
      t.is(refused.status, 503, JSON.stringify(refused.body));
      t.regex(refused.body.error.message, READ_ONLY);
      // Not after OpenSearch's own minute of retries (what _delete_by_query does under the block): well under it, with
      // room for a loaded 2-core machine (a fixed 5 s was within reach of an ordinary stall).
      t.true(Date.now() - started < 30_000, `${Date.now() - started} ms`);
      t.is((await app.call('GET', `/api/v1/documents/${doomed.id}`, { key: user.key })).body.document.status, 'ready');
      t.is(await app.deps.search.countChunks({ document_id: doomed.id }), doomed.chunks);
    } finally {
      await setBlock(app, 'index.blocks.read_only_allow_delete', null);
    }
    await blockSeen(t, app, null);
    t.is((await app.call('DELETE', `/api/v1/documents/${doomed.id}`, { key: user.key })).status, 200);
    t.is(await app.deps.search.countChunks({ document_id: doomed.id }), 0);
  },
);

test.serial(
  'a write block set by an operator (index.blocks.write, answered 403) is the same 503, not a kbqa bug',
  async (t) => {
    const { app } = t.context;
    await setBlock(app, 'index.blocks.write', true);
    try {
      const error = await t.throwsAsync(
        app.deps.search.request('PUT', `/${app.deps.search.alias}/_doc/operator-block-probe`, {
          body: { text: 'refused' },
        }),
      );
      t.true(error instanceof SearchIndexReadOnlyError, String(error));
      t.is((error as SearchIndexReadOnlyError).status, 503);
      await blockSeen(t, app, 'index.blocks.write');
    } finally {
      await setBlock(app, 'index.blocks.write', null);
    }
    await blockSeen(t, app, null);
  },
);
