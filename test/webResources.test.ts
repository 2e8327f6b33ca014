// What a signed-in person does through /api/web beside the Developer API: API keys (Settings → API Keys), sharing
// and unsharing, recently deleted KBs, library KBs, and the resource routes both APIs share (same rules).
import { makeOrganisation, makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { serveVariant, testWithApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/webClient.ts';

interface Context {
  app: TestApp;
  databaseUrl: string;
}

const test = testWithApp<Omit<Context, 'app'>>();

async function signedIn(app: TestApp, options: Parameters<typeof makeWebUser>[1] = {}) {
  const user = await makeWebUser(app.deps.store, options);
  const browser = new WebClient(app.baseUrl);
  await browser.signIn(user.email, TEST_PASSWORD);
  return { user, browser };
}

test('Settings → API Keys: a key is shown once, listed masked, works on /api/v1, and revoking it is immediate', async (t) => {
  const { app } = t.context;
  const { user, browser } = await signedIn(app);
  const created = await browser.call('POST', '/api/web/api-keys', { body: { name: 'laptop' } });
  t.is(created.status, 201);
  t.regex(created.body.key, /^kbqa_live_[0-9A-Za-z]{40}$/);
  const { key } = created.body;
  t.like(created.body.api_key, { name: 'laptop', last_used_at: null, revoked_at: null });
  t.is(created.body.api_key.masked, `${key.slice(0, 14)}…${key.slice(-4)}`);

  const me = await app.call('GET', '/api/v1/me', { key });
  t.deepEqual([me.status, me.body], [200, { id: user.id, email: user.email }]);
  // A key is an /api/v1 credential only: the web app's endpoints take the session cookie.
  t.is((await app.call('GET', '/api/web/me', { key })).status, 401);

  // last_used_at is written after the response (advisory, off the auth path), so it is awaited, up to 10 s.
  let listed = await browser.call('GET', '/api/web/api-keys');
  for (let tries = 0; tries < 100 && !listed.body.api_keys[0]?.last_used_at; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    listed = await browser.call('GET', '/api/web/api-keys');
  }
  t.is(listed.body.api_keys.length, 1);
  t.false(JSON.stringify(listed.body).includes(key), 'the list never shows the key');
  t.truthy(listed.body.api_keys[0].last_used_at, 'last used is recorded');

  // Someone else cannot revoke it (404, as if it did not exist), and it keeps working.
  const { browser: stranger } = await signedIn(app);
  t.is((await stranger.call('DELETE', `/api/web/api-keys/${created.body.api_key.id}`)).status, 404);
  t.is((await app.call('GET', '/api/v1/me', { key })).status, 200);

  t.deepEqual((await browser.call('DELETE', `/api/web/api-keys/${created.body.api_key.id}`)).body, { revoked: true });
  t.is((await app.call('GET', '/api/v1/me', { key })).status, 401);
  t.truthy((await browser.call('GET', '/api/web/api-keys')).body.api_keys[0].revoked_at);
  t.is((await browser.call('POST', '/api/web/api-keys', { body: { name: '' } })).status, 400);
});

test('sharing: owners share with a user by email and unshare; the viewer reads but the server refuses every write', async (t) => {
  const { app } = t.context;
  const { browser: owner } = await signedIn(app);
  const { user: viewerUser, browser: viewer } = await signedIn(app);
  const kb = (await owner.call('POST', '/api/web/knowledge-bases', { body: { name: 'Shared handbook' } })).body
    .knowledge_base;
  const ingested = await owner.call('POST', '/api/web/documents', {
    body: { kb_id: kb.id, filename: 'leave.md', content: '# Leave\n\nEveryone gets thirty days of paid leave a year.' },
  });
  t.is(ingested.status, 201);

  t.is((await viewer.call('GET', `/api/web/knowledge-bases/${kb.id}`)).status, 404, 'private until shared');
  const shared = await owner.call('POST', `/api/web/knowledge-bases/${kb.id}/sharing/users`, {
    body: { email: viewerUser.email.toUpperCase() },
  });
  t.deepEqual([shared.status, shared.body], [202, { invitation: { email: viewerUser.email } }]);
  const sharing = (await owner.call('GET', `/api/web/knowledge-bases/${kb.id}/sharing`)).body;
  t.like(sharing, { users: [], organisation: null, is_library: false });
  t.deepEqual(
    sharing.invitations.map((invitation: { email: string }) => invitation.email),
    [viewerUser.email],
    'pending: shown by address',
  );

  t.is((await viewer.call('GET', `/api/web/knowledge-bases/${kb.id}`)).body.knowledge_base.role, 'viewer');
  const documents = await viewer.call('GET', `/api/web/knowledge-bases/${kb.id}/documents?include=status`);
  t.is(documents.body.documents[0].status, 'ready');
  const asked = await viewer.call('POST', '/api/web/query', {
    body: { query: 'How many days of paid leave?', knowledge_base_ids: [kb.id] },
  });
  t.is(asked.body.citations[0].document_id, ingested.body.document.id);

  const documentId = ingested.body.document.id;
  for (const [label, method, path, body] of [
    ['upload', 'POST', '/api/web/documents', { kb_id: kb.id, filename: 'x.md', content: 'x' }],
    ['replace', 'PUT', `/api/web/documents/${documentId}`, { content: 'x' }],
    ['retry', 'POST', `/api/web/documents/${documentId}/retry`, undefined],
    ['delete document', 'DELETE', `/api/web/documents/${documentId}`, undefined],
    ['delete KB', 'DELETE', `/api/web/knowledge-bases/${kb.id}`, undefined],
    ['see sharing', 'GET', `/api/web/knowledge-bases/${kb.id}/sharing`, undefined],
    ['share further', 'POST', `/api/web/knowledge-bases/${kb.id}/sharing/users`, { email: viewerUser.email }],
  ] as const) {
    const refused = await viewer.call(method, path, { body });
    t.is(refused.status, 403, label);
  }
  t.is((await owner.call('GET', `/api/web/documents/${documentId}`)).body.document.status, 'ready', 'nothing changed');

  t.is(
    (
      await owner.call('POST', `/api/web/knowledge-bases/${kb.id}/sharing/users`, {
        body: { email: 'nobody-here@example.test' },
      })
    ).status,
    202,
    'an address without an account is answered the same',
  );
  t.deepEqual((await owner.call('DELETE', `/api/web/knowledge-bases/${kb.id}/sharing/users/${viewerUser.id}`)).body, {
    unshared: true,
  });
  t.is((await viewer.call('GET', `/api/web/knowledge-bases/${kb.id}`)).status, 404);
});

test("a second user sees none of the first user's private KBs, in lists, reads or questions", async (t) => {
  const { app } = t.context;
  const { browser: first } = await signedIn(app);
  const { browser: second } = await signedIn(app);
  const kb = (await first.call('POST', '/api/web/knowledge-bases', { body: { name: 'Private notes' } })).body
    .knowledge_base;
  const firstIds = (await first.call('GET', '/api/web/knowledge-bases')).body.knowledge_bases
    .filter((item: { role: string }) => item.role === 'owner')
    .map((item: { id: string }) => item.id);
  t.is(firstIds.length, 2, 'the default KB and the new one');
  const secondList = (await second.call('GET', '/api/web/knowledge-bases')).body.knowledge_bases;
  t.deepEqual(
    secondList.filter((item: { id: string }) => firstIds.includes(item.id)),
    [],
  );
  t.is((await second.call('GET', `/api/web/knowledge-bases/${kb.id}/documents`)).status, 404);
  t.is(
    (await second.call('POST', '/api/web/query', { body: { query: 'anything', knowledge_base_ids: [kb.id] } })).status,
    403,
  );
});

test('recently deleted: the owner restores a soft-deleted KB within the retention period, nobody else can', async (t) => {
  const { app } = t.context;
  const { browser: owner } = await signedIn(app);
  const { browser: stranger } = await signedIn(app);
  const kb = (await owner.call('POST', '/api/web/knowledge-bases', { body: { name: 'Oops' } })).body.knowledge_base;
  t.deepEqual((await owner.call('DELETE', `/api/web/knowledge-bases/${kb.id}`)).body, { deleted: true, mode: 'soft' });

  const deleted = (await owner.call('GET', '/api/web/deleted-knowledge-bases')).body.knowledge_bases;
  t.is(deleted.length, 1);
  t.is(deleted[0].id, kb.id);
  const days = (Date.parse(deleted[0].restorable_until) - Date.parse(deleted[0].deleted_at)) / 86_400_000;
  t.is(days, 30);
  t.deepEqual((await stranger.call('GET', '/api/web/deleted-knowledge-bases')).body.knowledge_bases, []);
  t.is((await stranger.call('POST', `/api/web/deleted-knowledge-bases/${kb.id}/restore`)).status, 404);

  // Past retention (here: 1 ms) it is gone for good from the owner's point of view.
  const strict = await serveVariant(app.deps, (config) => ({ ...config, deletedRetentionMs: 1 }));
  try {
    const late = new WebClient(strict.baseUrl);
    late.cookie = owner.cookie;
    late.csrfToken = owner.csrfToken;
    t.is((await late.call('POST', `/api/web/deleted-knowledge-bases/${kb.id}/restore`)).status, 404);
    t.deepEqual((await late.call('GET', '/api/web/deleted-knowledge-bases')).body.knowledge_bases, []);
  } finally {
    await strict.close();
  }

  const restored = await owner.call('POST', `/api/web/deleted-knowledge-bases/${kb.id}/restore`);
  t.like(restored.body.knowledge_base, { id: kb.id, role: 'owner' });
  t.true(
    (await owner.call('GET', '/api/web/knowledge-bases')).body.knowledge_bases.some(
      (item: { id: string }) => item.id === kb.id,
    ),
  );
  t.deepEqual((await owner.call('GET', '/api/web/deleted-knowledge-bases')).body.knowledge_bases, []);
  t.is(
    (await owner.call('POST', `/api/web/deleted-knowledge-bases/${kb.id}/restore`)).status,
    404,
    'a live KB is not restorable',
  );
});

test('library KBs are curated by admins only; everyone then reaches them read-only', async (t) => {
  const { app } = t.context;
  const { browser: admin } = await signedIn(app, { isAdmin: true });
  const { browser: member } = await signedIn(app);
  const kb = (await admin.call('POST', '/api/web/knowledge-bases', { body: { name: `Company library ${Date.now()}` } }))
    .body.knowledge_base;
  const ownKb = (await member.call('POST', '/api/web/knowledge-bases', { body: { name: 'mine' } })).body.knowledge_base;
  t.is(
    (await member.call('PUT', `/api/web/knowledge-bases/${ownKb.id}/library`, { body: { library: true } })).status,
    403,
    'owning is not curating',
  );

  const marked = await admin.call('PUT', `/api/web/knowledge-bases/${kb.id}/library`, { body: { library: true } });
  t.like(marked.body.knowledge_base, { id: kb.id, role: 'owner' });
  t.is((await member.call('GET', `/api/web/knowledge-bases/${kb.id}`)).body.knowledge_base.role, 'library');
  t.is((await member.call('DELETE', `/api/web/knowledge-bases/${kb.id}`)).status, 403);
  await admin.call('PUT', `/api/web/knowledge-bases/${kb.id}/library`, { body: { library: false } });
  t.is((await member.call('GET', `/api/web/knowledge-bases/${kb.id}`)).status, 404);
});

test('sharing with the organisation: members get org-member; an owner without an organisation is told why not', async (t) => {
  const { app } = t.context;
  const organisation = await makeOrganisation(app.deps.store);
  const { browser: lone } = await signedIn(app);
  const loneKb = (await lone.call('POST', '/api/web/knowledge-bases', { body: { name: 'alone' } })).body.knowledge_base;
  const refused = await lone.call('PUT', `/api/web/knowledge-bases/${loneKb.id}/sharing/organisation`, {
    body: { shared: true },
  });
  t.is(refused.status, 400);
  t.regex(refused.body.error.message, /no organisation/);

  const { browser: owner } = await signedIn(app, { organisation });
  const { browser: colleague } = await signedIn(app, { organisation });
  const kb = (await owner.call('POST', '/api/web/knowledge-bases', { body: { name: 'team' } })).body.knowledge_base;
  t.deepEqual(
    (await owner.call('PUT', `/api/web/knowledge-bases/${kb.id}/sharing/organisation`, { body: { shared: true } }))
      .body,
    { shared: true },
  );
  t.like((await owner.call('GET', `/api/web/knowledge-bases/${kb.id}/sharing`)).body.organisation, {
    name: organisation,
    shared: true,
  });
  t.is((await colleague.call('GET', `/api/web/knowledge-bases/${kb.id}`)).body.knowledge_base.role, 'org-member');
  await owner.call('PUT', `/api/web/knowledge-bases/${kb.id}/sharing/organisation`, { body: { shared: false } });
  t.is((await colleague.call('GET', `/api/web/knowledge-bases/${kb.id}`)).status, 404);
});

test('the shared resource routes answer alike on both APIs: ?include=status, /models', async (t) => {
  const { app } = t.context;
  const { user, browser } = await signedIn(app);
  const created = await browser.call('POST', '/api/web/api-keys', { body: { name: 'compare' } });
  const key = created.body.key;
  const doc = await app.call('POST', '/api/v1/documents', {
    key,
    body: { kb_id: user.defaultKnowledgeBaseId, filename: 'a.txt', content: 'Alpha beta gamma.' },
  });
  t.is(doc.status, 201);

  const plain = await app.call('GET', `/api/v1/knowledge-bases/${user.defaultKnowledgeBaseId}/documents`, { key });
  t.deepEqual(Object.keys(plain.body.documents[0]).sort(), ['created_at', 'filename', 'id', 'source', 'title']);
  const withStatus = await app.call(
    'GET',
    `/api/v1/knowledge-bases/${user.defaultKnowledgeBaseId}/documents?include=status`,
    { key },
  );
  t.like(withStatus.body.documents[0], { id: doc.body.document.id, status: 'ready', chunks: 1 });
  // The web app's answer is the API's plus its own fields (where the document came from), and only those.
  const web = (
    await browser.call('GET', `/api/web/knowledge-bases/${user.defaultKnowledgeBaseId}/documents?include=status`)
  ).body;
  t.deepEqual(web, {
    documents: withStatus.body.documents.map((document: object) => ({ ...document, origin: 'api' })),
  });
  t.false('origin' in withStatus.body.documents[0], "/api/v1 answers the contract's fields only");
  t.is(
    (await app.call('GET', `/api/v1/knowledge-bases/${user.defaultKnowledgeBaseId}/documents?include=chunks`, { key }))
      .status,
    400,
  );

  const models = await app.call('GET', '/api/v1/models', { key });
  t.deepEqual(models.body, {
    models: app.deps.rag.answerModels.names,
    default_model: app.deps.config.answerModels.defaultModel,
  });
  t.deepEqual((await browser.call('GET', '/api/web/models')).body, models.body);
});

test("a document's content (text and passages) reaches whoever can read its KB, and nobody else", async (t) => {
  const { app } = t.context;
  const { user, browser } = await signedIn(app);
  const stranger = await signedIn(app);
  const added = await browser.call('POST', '/api/web/documents', {
    body: {
      kb_id: user.defaultKnowledgeBaseId,
      filename: 'owned.md',
      content: '# Owned\n\nOnly its owner reads this.\n',
    },
    headers: { 'X-KBQA-Origin': 'paste' },
  });
  t.is(added.status, 201);
  const id = added.body.document.id;
  const content = await browser.call('GET', `/api/web/documents/${id}/content`);
  t.is(content.status, 200);
  t.like(content.body, {
    knowledge_base: { id: user.defaultKnowledgeBaseId, name: 'Default' },
    content: '# Owned\n\nOnly its owner reads this.\n',
    passages_total: 1,
  });
  t.deepEqual(Object.keys(content.body.passages[0]).sort(), [
    'chunk_index',
    'heading_path',
    'page_end',
    'page_start',
    'text',
  ]);
  t.like((await browser.call('GET', `/api/web/documents/${id}`)).body.document, { origin: 'paste' });
  t.is((await stranger.browser.call('GET', `/api/web/documents/${id}/content`)).status, 404);
  const key = (await browser.call('POST', '/api/web/api-keys', { body: { name: 'content' } })).body.key;
  t.is(
    (await app.call('GET', `/api/v1/documents/${id}/content`, { key })).status,
    404,
    'web only: no such route on /api/v1',
  );
});
