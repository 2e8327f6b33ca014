// Knowledge bases: roles × endpoints, precedence, pagination, create validation, the default KB, soft delete →
// restore, permanent delete, and `kbqa kbs purge`.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setKnowledgeBaseLibrary, shareKnowledgeBase } from '../service/commands/accounts.ts';
import { purgeKnowledgeBase, restoreKnowledgeBase } from '../service/commands/knowledgeBases.ts';
import type { KnowledgeBaseRole } from '../service/policies/knowledgeBases.ts';
import { addOrganisationMember, makeOrganisation, makeUser, type TestUser } from './factories/accounts.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';

type Who = 'owner' | 'viewer' | 'member' | 'stranger';
type KbName = 'shared' | 'library' | 'private' | 'both';

interface Context {
  app: TestApp;
  users: Record<Who, TestUser>;
  kbs: Record<KbName, string>;
  /** Library KBs this file made: they reach every user of the database, so they are purged afterwards. */
  libraryKbs: string[];
}

const test = testWithApp<Omit<Context, 'app'>>({
  // Their chunks leave the shared index with them.
  beforeClose: async (t) => {
    const { app, libraryKbs } = t.context;
    for (const id of libraryKbs ?? [])
      await purgeKnowledgeBase(app.deps.store, app.deps.search, id).catch(() => undefined);
  },
});
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const LIST_KEYS = ['created_at', 'description', 'document_count', 'id', 'is_default', 'name', 'role'];
const GET_KEYS = ['created_at', 'description', 'id', 'is_default', 'name', 'role'];
const CREATE_KEYS = ['created_at', 'description', 'id', 'is_default', 'name'];
const DOCUMENT_KEYS = ['created_at', 'filename', 'id', 'source', 'title'];

/** The role each user must see on each KB; null = invisible. Precedence: owner, viewer, org-member, library. */
const EXPECTED: Record<KbName, Record<Who, KnowledgeBaseRole | null>> = {
  // Shared with the viewer directly and with the organisation (owner and member are both in it).
  shared: { owner: 'owner', viewer: 'viewer', member: 'org-member', stranger: null },
  library: { owner: 'owner', viewer: 'library', member: 'library', stranger: 'library' },
  private: { owner: 'owner', viewer: null, member: null, stranger: null },
  // Shared directly, with the organisation AND in the library: each user gets the first role that applies.
  both: { owner: 'owner', viewer: 'viewer', member: 'org-member', stranger: 'library' },
};
const DOCUMENTS_IN: Record<KbName, number> = { shared: 2, library: 1, private: 0, both: 3 };
const WHO: Who[] = ['owner', 'viewer', 'member', 'stranger'];
const KB_NAMES: KbName[] = ['shared', 'library', 'private', 'both'];

/**
 * A document record plus (unless `recordOnly`) one indexed chunk, as an ingest leaves them, without going through
 * POST /documents. The role-matrix KBs get records only: the matrix checks who reaches which KB and its document
 * counts, for which the records suffice.
 */
async function addDocument(app: TestApp, knowledgeBaseId: string, filename = 'note.txt', recordOnly = false) {
  const { store, search, rag } = app.deps;
  const id = randomUUID();
  const text = `A note about ${filename} kept in knowledge base ${knowledgeBaseId}.`;
  const created = new Date();
  await store.insertDocument(
    {
      _id: id,
      knowledge_base_id: knowledgeBaseId,
      filename,
      title: filename.replace(/\.[^.]+$/, ''),
      source: 'api',
      chunks: 1,
      total_chunks: 1,
      created_at: created,
      updated_at: created,
      status: 'ready',
      version: 1,
      live_version: 1,
      progress: null,
      error: null,
    },
    text,
  );
  if (recordOnly) return id;
  const [embedding] = await rag.models.embedPassages([text]);
  await search.indexChunks([
    {
      chunk_id: `${id}:1:0`,
      knowledge_base_id: knowledgeBaseId,
      document_id: id,
      document_version: 1,
      filename,
      title: filename.replace(/\.[^.]+$/, ''),
      heading_path: [],
      chunk_index: 0,
      page_start: null,
      page_end: null,
      text,
      embedding,
      embedder: rag.embedder.modelName,
      created_at: created.toISOString(),
    },
  ]);
  await search.refreshChunks();
  return id;
}

async function createKb(app: TestApp, user: TestUser, body: Record<string, unknown>): Promise<any> {
  const response = await app.call('POST', '/api/v1/knowledge-bases', { key: user.key, body });
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.knowledge_base;
}

async function listAll(app: TestApp, user: TestUser): Promise<any[]> {
  const response = await app.call('GET', '/api/v1/knowledge-bases', { key: user.key });
  if (response.status !== 200) throw new Error(`list failed: ${response.status}`);
  return response.body.knowledge_bases;
}

test.before(async (t) => {
  const { app } = t.context;
  const { store } = app.deps;
  const organisation = await makeOrganisation(store);
  const users: Record<Who, TestUser> = {
    owner: await makeUser(store, { organisation, label: 'kb-owner' }),
    viewer: await makeUser(store, { label: 'kb-viewer' }),
    member: await makeUser(store, { organisation, label: 'kb-member' }),
    stranger: await makeUser(store, { label: 'kb-stranger' }),
  };
  const kbs = {} as Record<KbName, string>;
  for (const name of KB_NAMES) {
    kbs[name] = (await createKb(app, users.owner, { name: `roles ${name}`, description: `the ${name} KB` })).id;
    for (let index = 0; index < DOCUMENTS_IN[name]; index++)
      await addDocument(app, kbs[name], `${name}-${index}.md`, true);
  }
  await shareKnowledgeBase(store, kbs.shared, { email: users.viewer.email }, true);
  await shareKnowledgeBase(store, kbs.shared, { organisation }, true);
  await setKnowledgeBaseLibrary(store, kbs.library, true);
  await shareKnowledgeBase(store, kbs.both, { email: users.viewer.email }, true);
  await shareKnowledgeBase(store, kbs.both, { organisation }, true);
  await setKnowledgeBaseLibrary(store, kbs.both, true);
  Object.assign(t.context, { users, kbs, libraryKbs: [kbs.library, kbs.both] });
});

// ── roles × endpoints ────────────────────────────────────────────────────────────────────────────────────────────

for (const kbName of KB_NAMES) {
  for (const who of WHO) {
    const role = EXPECTED[kbName][who];
    const label = `${who} on the ${kbName} KB`;

    test(`list: ${label} → ${role ?? 'absent'}`, async (t) => {
      const { app, users, kbs } = t.context;
      const items = await listAll(app, users[who]);
      const item = items.find((candidate) => candidate.id === kbs[kbName]);
      if (role === null) {
        t.is(item, undefined);
        return;
      }
      t.truthy(item);
      t.deepEqual(Object.keys(item).sort(), LIST_KEYS);
      t.is(item.role, role);
      t.is(item.name, `roles ${kbName}`);
      t.is(item.description, `the ${kbName} KB`);
      t.is(item.document_count, DOCUMENTS_IN[kbName]);
      t.is(item.is_default, false);
      t.regex(item.created_at, ISO);
      t.regex(item.id, UUID);
    });

    test(`get: ${label} → ${role === null ? '404' : `200 ${role}`}`, async (t) => {
      const { app, users, kbs } = t.context;
      const response = await app.call('GET', `/api/v1/knowledge-bases/${kbs[kbName]}`, { key: users[who].key });
      if (role === null) {
        t.is(response.status, 404);
        t.deepEqual(response.body, {
          error: { code: 'not_found', message: `knowledge base ${kbs[kbName]} not found` },
        });
        return;
      }
      t.is(response.status, 200);
      t.deepEqual(Object.keys(response.body), ['knowledge_base']);
      const kb = response.body.knowledge_base;
      t.deepEqual(Object.keys(kb).sort(), GET_KEYS);
      t.is(kb.id, kbs[kbName]);
      t.is(kb.role, role);
      t.is(kb.name, `roles ${kbName}`);
      t.is(kb.description, `the ${kbName} KB`);
      t.is(kb.is_default, false);
      t.regex(kb.created_at, ISO);
    });

    test(`documents list: ${label} → ${role === null ? '404' : '200'}`, async (t) => {
      const { app, users, kbs } = t.context;
      const response = await app.call('GET', `/api/v1/knowledge-bases/${kbs[kbName]}/documents`, {
        key: users[who].key,
      });
      if (role === null) {
        t.is(response.status, 404);
        t.is(response.body?.error?.code, 'not_found');
        return;
      }
      t.is(response.status, 200);
      t.true(Array.isArray(response.body.documents));
      t.is(response.body.documents.length, DOCUMENTS_IN[kbName]);
      for (const document of response.body.documents) t.deepEqual(Object.keys(document).sort(), DOCUMENT_KEYS);
    });

    if (who !== 'owner') {
      for (const permanent of [false, true]) {
        const query = permanent ? '?permanent=true' : '';
        test(`delete${query}: ${label} → ${role === null ? '404' : '403'} and the KB survives`, async (t) => {
          const { app, users, kbs } = t.context;
          const id = kbs[kbName];
          const response = await app.call('DELETE', `/api/v1/knowledge-bases/${id}${query}`, { key: users[who].key });
          if (role === null) {
            t.is(response.status, 404);
            t.deepEqual(response.body, { error: { code: 'not_found', message: `knowledge base ${id} not found` } });
          } else {
            t.is(response.status, 403);
            t.deepEqual(response.body, {
              error: { code: 'forbidden', message: `API key lacks access to knowledge base ${id}` },
            });
          }
          const record = await app.deps.store.findKnowledgeBaseIncludingDeleted(id);
          t.is(record?.deleted_at, null);
          const counts = await app.deps.store.countDocumentsByKnowledgeBase([id]);
          t.is(counts.get(id) ?? 0, DOCUMENTS_IN[kbName]);
        });
      }
    }
  }
}

test('role precedence: viewer beats org-member and library; org-member beats library; owner beats everything', async (t) => {
  const { app, users, kbs } = t.context;
  const roleFor = async (who: Who) =>
    (await app.call('GET', `/api/v1/knowledge-bases/${kbs.both}`, { key: users[who].key })).body.knowledge_base?.role;
  t.is(await roleFor('owner'), 'owner');
  t.is(await roleFor('viewer'), 'viewer');
  t.is(await roleFor('member'), 'org-member');
  t.is(await roleFor('stranger'), 'library');
});

test('unknown, malformed and odd ids → 404 not_found on get, delete and documents list', async (t) => {
  const { app, users } = t.context;
  for (const id of [randomUUID(), 'not-a-uuid', '0', encodeURIComponent('$gt'), 'a'.repeat(300)]) {
    for (const [method, path] of [
      ['GET', `/api/v1/knowledge-bases/${id}`],
      ['DELETE', `/api/v1/knowledge-bases/${id}`],
      ['GET', `/api/v1/knowledge-bases/${id}/documents`],
    ]) {
      const response = await app.call(method, path, { key: users.owner.key });
      t.is(response.status, 404, `${method} ${path}`);
      t.is(response.body?.error?.code, 'not_found');
      t.deepEqual(Object.keys(response.body.error).sort(), ['code', 'message']);
    }
  }
});

test('owner delete: {deleted:true, mode:"soft"}; the KB then 404s for owner and viewer', async (t) => {
  const { app, users } = t.context;
  const kb = await createKb(app, users.owner, { name: 'owner delete' });
  await shareKnowledgeBase(app.deps.store, kb.id, { email: users.viewer.email }, true);
  t.is((await app.call('GET', `/api/v1/knowledge-bases/${kb.id}`, { key: users.viewer.key })).status, 200);

  const response = await app.call('DELETE', `/api/v1/knowledge-bases/${kb.id}`, { key: users.owner.key });
  t.is(response.status, 200);
  t.deepEqual(response.body, { deleted: true, mode: 'soft' });

  for (const who of ['owner', 'viewer'] as const) {
    t.is((await app.call('GET', `/api/v1/knowledge-bases/${kb.id}`, { key: users[who].key })).status, 404);
  }
  const again = await app.call('DELETE', `/api/v1/knowledge-bases/${kb.id}`, { key: users.owner.key });
  t.is(again.status, 404);
  t.is(again.body.error.code, 'not_found');
});

// ── pagination ───────────────────────────────────────────────────────────────────────────────────────────────────

test('pagination: limit=2 pages newest-first through next_cursor, no duplicates, null on the last page', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store, { label: 'kb-pages' });
  const created: string[] = [];
  for (let index = 0; index < 5; index++) {
    created.push((await createKb(app, user, { name: `page ${index}` })).id);
    await sleep(3); // distinct created_at, so "newest first" has one right answer
  }

  const pages: any[][] = [];
  let cursor: string | null | undefined;
  let guard = 0;
  do {
    const query = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
    const response = await app.call('GET', `/api/v1/knowledge-bases${query}`, { key: user.key });
    t.is(response.status, 200);
    t.deepEqual(Object.keys(response.body).sort(), ['knowledge_bases', 'next_cursor']);
    t.true(response.body.knowledge_bases.length <= 2);
    cursor = response.body.next_cursor;
    if (cursor !== null) {
      t.is(typeof cursor, 'string');
      t.is(response.body.knowledge_bases.length, 2);
    }
    pages.push(response.body.knowledge_bases);
  } while (cursor !== null && ++guard < 100);
  t.is(cursor, null);

  const all = pages.flat();
  const ids = all.map((item) => item.id);
  t.is(new Set(ids).size, ids.length, 'no KB appears on two pages');
  for (const item of all) t.deepEqual(Object.keys(item).sort(), LIST_KEYS);
  // Newest first across the whole walk: (created_at desc, id desc).
  for (let index = 1; index < all.length; index++) {
    const [previous, current] = [all[index - 1], all[index]];
    t.true(
      previous.created_at > current.created_at ||
        (previous.created_at === current.created_at && previous.id > current.id),
      `${previous.id} (${previous.created_at}) before ${current.id} (${current.created_at})`,
    );
  }
  const owned = all.filter((item) => item.role === 'owner').map((item) => item.id);
  t.deepEqual(owned, [...created].reverse().concat(user.defaultKnowledgeBaseId));
  t.true(pages.length >= 3);

  // Without limit: the whole list, and no next_cursor key at all.
  const whole = await app.call('GET', '/api/v1/knowledge-bases', { key: user.key });
  t.deepEqual(Object.keys(whole.body), ['knowledge_bases']);
  t.deepEqual(
    whole.body.knowledge_bases.filter((item: any) => item.role === 'owner').map((item: any) => item.id),
    owned,
  );

  // limit=1000 fits everything on one page.
  const big = await app.call('GET', '/api/v1/knowledge-bases?limit=1000', { key: user.key });
  t.is(big.status, 200);
  t.is(big.body.next_cursor, null);
  t.deepEqual(
    big.body.knowledge_bases.filter((item: any) => item.role === 'owner').map((item: any) => item.id),
    owned,
  );
});

for (const limit of ['0', '1001', 'abc', '-1', '1.5', '', '1e2', '2x']) {
  test(`pagination: limit=${JSON.stringify(limit)} → 400 bad_request`, async (t) => {
    const { app, users } = t.context;
    const response = await app.call('GET', `/api/v1/knowledge-bases?limit=${encodeURIComponent(limit)}`, {
      key: users.owner.key,
    });
    t.is(response.status, 400);
    t.is(response.body.error.code, 'bad_request');
    t.regex(response.body.error.message, /^limit: /);
  });
}

const GARBAGE_CURSORS = [
  'garbage',
  '!!!',
  Buffer.from('{"a":1}').toString('base64url'),
  Buffer.from('["not a date","x"]').toString('base64url'),
  Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', { $gt: '' }])).toString('base64url'),
  Buffer.from('null').toString('base64url'),
  'x'.repeat(600),
];
for (const [index, cursor] of GARBAGE_CURSORS.entries()) {
  test(`pagination: garbage cursor #${index} → 400 bad_request`, async (t) => {
    const { app, users } = t.context;
    const response = await app.call('GET', `/api/v1/knowledge-bases?limit=2&cursor=${encodeURIComponent(cursor)}`, {
      key: users.owner.key,
    });
    t.is(response.status, 400, JSON.stringify(response.body));
    t.is(response.body.error.code, 'bad_request');
    t.regex(response.body.error.message, /^cursor: /);
  });
}

// ── create validation ────────────────────────────────────────────────────────────────────────────────────────────

test('create: 201 with exactly {id,name,description,is_default,created_at}; name trimmed; description defaults to ""', async (t) => {
  const { app, users } = t.context;
  const response = await app.call('POST', '/api/v1/knowledge-bases', {
    key: users.owner.key,
    body: { name: '  Trimmed name \t' },
  });
  t.is(response.status, 201);
  t.deepEqual(Object.keys(response.body), ['knowledge_base']);
  const kb = response.body.knowledge_base;
  t.deepEqual(Object.keys(kb).sort(), CREATE_KEYS);
  t.regex(kb.id, UUID);
  t.is(kb.name, 'Trimmed name');
  t.is(kb.description, '');
  t.is(kb.is_default, false);
  t.regex(kb.created_at, ISO);
  t.true(Math.abs(Date.parse(kb.created_at) - Date.now()) < 60_000);

  const fetched = await app.call('GET', `/api/v1/knowledge-bases/${kb.id}`, { key: users.owner.key });
  t.deepEqual(fetched.body.knowledge_base, { ...kb, role: 'owner' });
});

test('create: name of 200 characters (also after trimming) is accepted; 201 is refused', async (t) => {
  const { app, users } = t.context;
  const exact = await app.call('POST', '/api/v1/knowledge-bases', {
    key: users.owner.key,
    body: { name: 'n'.repeat(200) },
  });
  t.is(exact.status, 201);
  t.is(exact.body.knowledge_base.name.length, 200);
  const padded = await app.call('POST', '/api/v1/knowledge-bases', {
    key: users.owner.key,
    body: { name: `  ${'p'.repeat(200)}  ` },
  });
  t.is(padded.status, 201);
  t.is(padded.body.knowledge_base.name, 'p'.repeat(200));
  const tooLong = await app.call('POST', '/api/v1/knowledge-bases', {
    key: users.owner.key,
    body: { name: 'n'.repeat(201) },
  });
  t.is(tooLong.status, 400);
  t.deepEqual(tooLong.body, { error: { code: 'bad_request', message: 'name: must be 1–200 characters' } });
});

test('create: description of 2000 characters is accepted; 2001 is refused', async (t) => {
  const { app, users } = t.context;
  const exact = await app.call('POST', '/api/v1/knowledge-bases', {
    key: users.owner.key,
    body: { name: 'd', description: 'd'.repeat(2000) },
  });
  t.is(exact.status, 201);
  t.is(exact.body.knowledge_base.description, 'd'.repeat(2000));
  const tooLong = await app.call('POST', '/api/v1/knowledge-bases', {
    key: users.owner.key,
    body: { name: 'd', description: 'd'.repeat(2001) },
  });
  t.is(tooLong.status, 400);
  t.is(tooLong.body.error.code, 'bad_request');
  t.regex(tooLong.body.error.message, /^description: /);
});

test('create: unknown fields are ignored, including ones that would escalate (mass assignment)', async (t) => {
  const { app, users } = t.context;
  const forgedId = randomUUID();
  const response = await app.call('POST', '/api/v1/knowledge-bases', {
    key: users.stranger.key,
    body: {
      name: 'extra fields',
      description: 'kept',
      id: forgedId,
      _id: forgedId,
      role: 'owner',
      is_default: true,
      is_library: true,
      owner_id: users.owner.id,
      shared_user_ids: [users.viewer.id],
      created_at: '1999-01-01T00:00:00.000Z',
      deleted_at: '1999-01-01T00:00:00.000Z',
      document_count: 99,
    },
  });
  t.is(response.status, 201);
  const kb = response.body.knowledge_base;
  t.deepEqual(Object.keys(kb).sort(), CREATE_KEYS);
  t.not(kb.id, forgedId);
  t.is(kb.name, 'extra fields');
  t.is(kb.description, 'kept');
  t.is(kb.is_default, false);
  t.not(kb.created_at, '1999-01-01T00:00:00.000Z');
  const record = await app.deps.store.findKnowledgeBaseIncludingDeleted(kb.id);
  t.is(record?.owner_id, users.stranger.id);
  t.is(record?.is_library, false);
  t.deepEqual(record?.shared_user_ids, []);
  t.is(record?.deleted_at, null);
  // The viewer it tried to share with cannot see it.
  t.is((await app.call('GET', `/api/v1/knowledge-bases/${kb.id}`, { key: users.viewer.key })).status, 404);
});

test('create: missing, blank, wrong-typed or injected fields and non-object bodies → 400, nothing created', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store, { label: 'kb-invalid' });
  const bodies: Array<{ body?: unknown; rawBody?: string; headers?: Record<string, string>; field?: string }> = [
    { body: {}, field: 'name' },
    { body: { description: 'no name' }, field: 'name' },
    { body: { name: '' }, field: 'name' },
    { body: { name: '   ' }, field: 'name' },
    { body: { name: 1 }, field: 'name' },
    { body: { name: null }, field: 'name' },
    { body: { name: true }, field: 'name' },
    { body: { name: ['a'] }, field: 'name' },
    { body: { name: { $gt: '' } }, field: 'name' },
    { body: { name: { $where: '1' } }, field: 'name' },
    { body: { name: 'ok', description: 5 }, field: 'description' },
    { body: { name: 'ok', description: null }, field: 'description' },
    { body: { name: 'ok', description: { $ne: null } }, field: 'description' },
    { body: { name: 'ok', description: ['x'] }, field: 'description' },
    { body: [] },
    { body: [{ name: 'in an array' }] },
    { rawBody: '"just a string"', headers: { 'content-type': 'application/json' } },
    { rawBody: 'null', headers: { 'content-type': 'application/json' } },
    { rawBody: '42', headers: { 'content-type': 'application/json' } },
    { rawBody: '{"name": "unterminated', headers: { 'content-type': 'application/json' } },
    { rawBody: '{"name":"x"}', headers: { 'content-type': 'text/plain' } },
    { rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    { rawBody: '{"name":"x"}' },
  ];
  for (const [index, request] of bodies.entries()) {
    const response = await app.call('POST', '/api/v1/knowledge-bases', { key: user.key, ...request });
    const label = `#${index} ${request.rawBody ?? JSON.stringify(request.body)}`;
    t.is(response.status, 400, label);
    t.deepEqual(Object.keys(response.body ?? {}), ['error'], label);
    t.is(response.body?.error?.code, 'bad_request', label);
    if (request.field)
      t.true(response.body.error.message.startsWith(`${request.field}: `), `${label}: ${response.body.error.message}`);
  }
  const owned = await app.deps.store.listKnowledgeBasesOwnedBy(user.id);
  t.deepEqual(
    owned.map((record) => record._id),
    [user.defaultKnowledgeBaseId],
  );
});

// ── the default KB ───────────────────────────────────────────────────────────────────────────────────────────────

test('default KB: exactly one, named "Default", is_default true; DELETE (soft or permanent) → 400 and it stays', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store, { label: 'kb-default' });
  const owned = (await listAll(app, user)).filter((item) => item.role === 'owner');
  t.is(owned.length, 1);
  const [kb] = owned;
  t.is(kb.id, user.defaultKnowledgeBaseId);
  t.is(kb.name, 'Default');
  t.is(kb.description, '');
  t.is(kb.is_default, true);
  t.is(kb.document_count, 0);

  const fetched = await app.call('GET', `/api/v1/knowledge-bases/${kb.id}`, { key: user.key });
  t.is(fetched.body.knowledge_base.is_default, true);

  for (const query of ['', '?permanent=true', '?permanent=false']) {
    const response = await app.call('DELETE', `/api/v1/knowledge-bases/${kb.id}${query}`, { key: user.key });
    t.is(response.status, 400, query);
    t.is(response.body.error.code, 'bad_request');
    t.deepEqual(Object.keys(response.body.error).sort(), ['code', 'message']);
  }
  t.is((await app.deps.store.findKnowledgeBaseIncludingDeleted(kb.id))?.deleted_at, null);
  t.is((await app.call('GET', `/api/v1/knowledge-bases/${kb.id}`, { key: user.key })).status, 200);

  // A KB named "Default" by its owner is not the default KB.
  const impostor = await createKb(app, user, { name: 'Default' });
  t.is(impostor.is_default, false);
  t.is((await app.call('DELETE', `/api/v1/knowledge-bases/${impostor.id}`, { key: user.key })).status, 200);
});

// ── soft delete → restore, permanent delete, purge ───────────────────────────────────────────────────────────────
// Serial: `kbs purge --older-than 0s` removes every soft-deleted KB, so it must not run while the restore test
// holds one.

test.serial('soft delete hides the KB from owner and viewer everywhere; restore brings back the same KB', async (t) => {
  const { app, users } = t.context;
  const kb = await createKb(app, users.owner, { name: 'restorable', description: 'comes back' });
  await shareKnowledgeBase(app.deps.store, kb.id, { email: users.viewer.email }, true);
  const documentIds = [await addDocument(app, kb.id, 'a.txt'), await addDocument(app, kb.id, 'b.md')];

  const ownerItemBefore = (await listAll(app, users.owner)).find((item) => item.id === kb.id);
  const viewerItemBefore = (await listAll(app, users.viewer)).find((item) => item.id === kb.id);
  const viewerGetBefore = (await app.call('GET', `/api/v1/knowledge-bases/${kb.id}`, { key: users.viewer.key })).body;
  t.is(ownerItemBefore?.document_count, 2);
  t.is(viewerItemBefore?.role, 'viewer');

  const deleted = await app.call('DELETE', `/api/v1/knowledge-bases/${kb.id}`, { key: users.owner.key });
  t.deepEqual(deleted.body, { deleted: true, mode: 'soft' });

  for (const who of ['owner', 'viewer'] as const) {
    const key = users[who].key;
    t.is(
      (await listAll(app, users[who])).find((item) => item.id === kb.id),
      undefined,
      `${who} list`,
    );
    const paged = await app.call('GET', '/api/v1/knowledge-bases?limit=1000', { key });
    t.false(
      paged.body.knowledge_bases.some((item: any) => item.id === kb.id),
      `${who} paged list`,
    );
    const get = await app.call('GET', `/api/v1/knowledge-bases/${kb.id}`, { key });
    t.is(get.status, 404, `${who} get`);
    t.is(get.body.error.code, 'not_found');
    const documents = await app.call('GET', `/api/v1/knowledge-bases/${kb.id}/documents`, { key });
    t.is(documents.status, 404, `${who} documents`);
    t.is(documents.body.error.code, 'not_found');
  }
  // Soft: everything is still stored.
  const record = await app.deps.store.findKnowledgeBaseIncludingDeleted(kb.id);
  t.true(record?.deleted_at instanceof Date);
  for (const id of documentIds) t.truthy(await app.deps.store.findDocument(id));
  t.is(await app.deps.search.countChunks({ knowledge_base_id: kb.id }), 2);

  const restored = await restoreKnowledgeBase(app.deps.store, kb.id);
  t.is(restored._id, kb.id);
  t.is(restored.deleted_at, null);

  t.deepEqual(
    (await listAll(app, users.owner)).find((item) => item.id === kb.id),
    ownerItemBefore,
  );
  t.deepEqual(
    (await listAll(app, users.viewer)).find((item) => item.id === kb.id),
    viewerItemBefore,
  );
  const viewerGetAfter = await app.call('GET', `/api/v1/knowledge-bases/${kb.id}`, { key: users.viewer.key });
  t.is(viewerGetAfter.status, 200);
  t.deepEqual(viewerGetAfter.body, viewerGetBefore);
  t.is(viewerGetAfter.body.knowledge_base.created_at, kb.created_at);
  const documents = await app.call('GET', `/api/v1/knowledge-bases/${kb.id}/documents`, { key: users.owner.key });
  t.is(documents.status, 200);
  t.deepEqual(documents.body.documents.map((document: any) => document.id).sort(), [...documentIds].sort());

  // Restoring a live KB is refused.
  await t.throwsAsync(() => restoreKnowledgeBase(app.deps.store, kb.id), { message: /is not deleted/ });
});

test.serial('permanent delete: mode "hard"; KB record, documents and OpenSearch chunks are gone', async (t) => {
  const { app, users } = t.context;
  const kb = await createKb(app, users.owner, { name: 'to be destroyed' });
  const documentId = await addDocument(app, kb.id, 'gone.txt');
  t.is(await app.deps.search.countChunks({ knowledge_base_id: kb.id }), 1);

  const response = await app.call('DELETE', `/api/v1/knowledge-bases/${kb.id}?permanent=true`, {
    key: users.owner.key,
  });
  t.is(response.status, 200);
  t.deepEqual(response.body, { deleted: true, mode: 'hard' });

  t.is(await app.deps.store.findKnowledgeBaseIncludingDeleted(kb.id), null);
  t.is(await app.deps.store.findDocument(documentId), null);
  t.is(await app.deps.search.countChunks({ knowledge_base_id: kb.id }), 0);
  t.is((await app.call('GET', `/api/v1/knowledge-bases/${kb.id}`, { key: users.owner.key })).status, 404);
  await t.throwsAsync(() => restoreKnowledgeBase(app.deps.store, kb.id), { message: /not found/ });
});

test.serial('?permanent=false is a soft delete; ?permanent=maybe/1/TRUE → 400 and nothing is deleted', async (t) => {
  const { app, users } = t.context;
  const kb = await createKb(app, users.owner, { name: 'permanent flag' });
  for (const value of ['maybe', '1', 'TRUE', 'yes', '']) {
    const response = await app.call('DELETE', `/api/v1/knowledge-bases/${kb.id}?permanent=${value}`, {
      key: users.owner.key,
    });
    t.is(response.status, 400, value);
    t.is(response.body.error.code, 'bad_request');
    t.regex(response.body.error.message, /^permanent: /);
    t.is((await app.deps.store.findKnowledgeBaseIncludingDeleted(kb.id))?.deleted_at, null);
  }
  const soft = await app.call('DELETE', `/api/v1/knowledge-bases/${kb.id}?permanent=false`, { key: users.owner.key });
  t.deepEqual(soft.body, { deleted: true, mode: 'soft' });
  t.true((await app.deps.store.findKnowledgeBaseIncludingDeleted(kb.id))?.deleted_at instanceof Date);
});

async function cli(...args: string[]): Promise<any> {
  const { stdout } = await run(process.execPath, ['bin/kbqa.mjs', ...args], {
    cwd: ROOT,
    env: process.env,
    timeout: 120_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

test.serial(
  'CLI: kbs purge --older-than removes soft-deleted KBs past retention (record, documents, chunks) and nothing live',
  async (t) => {
    const { app, users } = t.context;
    const doomed = await createKb(app, users.owner, { name: 'purge me' });
    const documentId = await addDocument(app, doomed.id, 'purged.txt');
    const live = await createKb(app, users.owner, { name: 'keep me' });
    t.deepEqual((await app.call('DELETE', `/api/v1/knowledge-bases/${doomed.id}`, { key: users.owner.key })).body, {
      deleted: true,
      mode: 'soft',
    });

    // Retention not yet reached: nothing of ours is purged.
    const early = await cli('kbs', 'purge', '--older-than', '1d', '--json');
    t.deepEqual(Object.keys(early), ['purged']);
    t.false(early.purged.includes(doomed.id));
    t.truthy(await app.deps.store.findKnowledgeBaseIncludingDeleted(doomed.id));

    await sleep(5);
    const purged = await cli('kbs', 'purge', '--older-than', '0s', '--json');
    t.deepEqual(Object.keys(purged), ['purged']);
    t.true(purged.purged.includes(doomed.id));
    t.false(purged.purged.includes(live.id));
    t.is(await app.deps.store.findKnowledgeBaseIncludingDeleted(doomed.id), null);
    t.is(await app.deps.store.findDocument(documentId), null);
    t.is(await app.deps.search.countChunks({ knowledge_base_id: doomed.id }), 0);
    t.truthy(await app.deps.store.findLiveKnowledgeBase(live.id));
    t.is((await app.call('GET', `/api/v1/knowledge-bases/${live.id}`, { key: users.owner.key })).status, 200);
  },
);

test('joining an organisation reaches the keys the user already has: org-shared KBs appear as org-member at once', async (t) => {
  const { store } = t.context.app.deps;
  const organisation = await makeOrganisation(store);
  const owner = await makeUser(store, { label: 'org-owner' });
  const joiner = await makeUser(store, { label: 'org-joiner' });
  const kb = (
    await t.context.app.call('POST', '/api/v1/knowledge-bases', { key: owner.key, body: { name: 'org shared' } })
  ).body.knowledge_base;
  await shareKnowledgeBase(store, kb.id, { organisation }, true);
  t.is((await t.context.app.call('GET', `/api/v1/knowledge-bases/${kb.id}`, { key: joiner.key })).status, 404);

  await addOrganisationMember(store, organisation, joiner.email);
  const seen = await t.context.app.call('GET', `/api/v1/knowledge-bases/${kb.id}`, { key: joiner.key });
  t.is(seen.status, 200);
  t.is(seen.body.knowledge_base.role, 'org-member');
});
