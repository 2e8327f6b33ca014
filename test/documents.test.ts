// POST /api/v1/documents and GET /api/v1/knowledge-bases/{id}/documents against the running stack: the ingest →
// list → query round trip, chunking as the splitter does it, every validation and access rule of the contract.
import { randomUUID } from 'node:crypto';
import { setKnowledgeBaseLibrary, shareKnowledgeBase } from '../service/commands/accounts.ts';
import { addOrganisationMember, makeOrganisation, makeUser, type TestUser } from './factories/accounts.ts';
import { startTestApp, testWithApp, type TestApp } from './helpers/app.ts';
import {
  INGEST_FIELDS,
  ISO_UTC,
  LIST_ITEM_FIELDS,
  UUID,
  assertChunkShape,
  createKb,
  ingest,
  sortedKeys,
} from './helpers/documentsApi.ts';

const test = testWithApp();

const documentsOf = (app: TestApp, key: string, kbId: string, query = '') =>
  app.call('GET', `/api/v1/knowledge-bases/${kbId}/documents${query}`, { key });

/** Every chunk of a small KB, via the query endpoint (max_results 50 covers the whole KB). */
async function allChunks(app: TestApp, key: string, kbId: string, question: string) {
  const response = await app.call('POST', '/api/v1/query', {
    key,
    body: { query: question, knowledge_base_ids: [kbId], include_chunks: true, max_results: 50 },
  });
  if (response.status !== 200) throw new Error(`query failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.chunks as Array<Record<string, any>>;
}

const MULTI_SECTION_MARKDOWN = `# Garden Handbook

This handbook covers the community garden on Elm Street and how volunteers keep it alive through the seasons.

## Watering

Water the tomato beds every morning before nine. In July the raised beds need a second watering at dusk, and the
rain barrels behind the shed must be emptied into the cans first.

## Pruning

Pruning happens in late winter, before the sap rises. Use the bypass secateurs from the blue toolbox.

### Roses

Cut climbing roses back to five healthy canes and remove every cane thinner than a pencil. Seal the cuts with wax.

## Compost

The compost bins are turned every second Saturday. Never add meat, dairy or diseased plants to the bins.
`;

function longPlainText(): string {
  const topics = [
    'lighthouse keepers',
    'glacier surveys',
    'river ferries',
    'mountain huts',
    'desert wells',
    'salt marshes',
  ];
  const paragraphs: string[] = [];
  for (let index = 0; index < 48; index += 1) {
    const topic = topics[index % topics.length];
    paragraphs.push(
      `Entry ${index + 1} of the field log describes ${topic} in detail. The team recorded the weather, the state of ` +
        `the equipment, the number of visitors and the supplies that had to be carried in by hand during week ${index + 1}.`,
    );
  }
  return paragraphs.join('\n\n');
}

test('ingest → list → query round trip: shapes, title, source, chunk count, searchable on return', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  const before = Date.now();
  const content = 'The quokka colony on Rottnest Island is counted every March by volunteers from Perth.';
  const response = await app.call('POST', '/api/v1/documents', {
    key: user.key,
    body: { kb_id: kb, filename: 'quokka-census.md', content },
  });
  t.is(response.status, 201, JSON.stringify(response.body));
  t.deepEqual(Object.keys(response.body), ['document']);
  const document = response.body.document;
  t.deepEqual(sortedKeys(document), INGEST_FIELDS);
  t.regex(document.id, UUID);
  t.is(document.filename, 'quokka-census.md');
  t.is(document.title, 'quokka-census');
  t.is(document.chunks, 1);
  t.is(document.total_chunks, 1);

  // Recorded: in the store (source api) and its chunks in OpenSearch.
  const stored = await app.deps.store.findDocument(document.id);
  t.truthy(stored);
  t.is(stored?.source, 'api');
  t.is(stored?.knowledge_base_id, kb);
  t.is(await app.deps.search.countChunks({ document_id: document.id }), 1);
  // The original text is kept, so chunks can be rebuilt.
  t.is(await app.deps.store.findDocumentContent(document.id), content);

  // Listed.
  const listed = await documentsOf(app, user.key, kb);
  t.is(listed.status, 200);
  t.deepEqual(Object.keys(listed.body), ['documents']);
  t.is(listed.body.documents.length, 1);
  const item = listed.body.documents[0];
  t.deepEqual(sortedKeys(item), LIST_ITEM_FIELDS);
  t.deepEqual(item, {
    id: document.id,
    filename: 'quokka-census.md',
    title: 'quokka-census',
    source: 'api',
    created_at: item.created_at,
  });
  t.regex(item.created_at, ISO_UTC);
  const createdAt = Date.parse(item.created_at);
  t.true(createdAt >= before - 1000 && createdAt <= Date.now() + 1000, `created_at ${item.created_at} is now`);

  // Searchable as soon as 201 returned (no sleep, no refresh).
  const query = await app.call('POST', '/api/v1/query', {
    key: user.key,
    body: {
      query: 'When is the quokka colony on Rottnest Island counted?',
      knowledge_base_ids: [kb],
      include_chunks: true,
    },
  });
  t.is(query.status, 200, JSON.stringify(query.body));
  t.is(query.body.chunks.length, 1);
  assertChunkShape(t, query.body.chunks[0]);
  t.is(query.body.chunks[0].document_id, document.id);
  t.is(query.body.chunks[0].text, content);
  t.is(query.body.chunks[0].filename, 'quokka-census.md');
  t.is(query.body.chunks[0].title, 'quokka-census');
  t.is(query.body.citations.length, 1);
  t.is(query.body.citations[0].document_id, document.id);
  t.is(query.body.citations[0].title, 'quokka-census');
  t.regex(query.body.answer, /March/);
});

test('title is the filename without its extension', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = await createKb(app, user.key, 'titles');
  const cases: Array<[string, string]> = [
    ['notes.md', 'notes'],
    ['README', 'README'],
    ['a.b.txt', 'a.b'],
    ['Release Notes 2024.markdown', 'Release Notes 2024'],
    ['CHANGES.TEXT', 'CHANGES'],
    ['.profile', '.profile'],
  ];
  for (const [filename, title] of cases) {
    const document = await ingest(app, user.key, kb, filename, `Some text about ${filename} for the title test.`);
    t.is(document.title, title, filename);
    t.is(document.filename, filename);
  }
  const listed = await documentsOf(app, user.key, kb);
  t.deepEqual(
    listed.body.documents.map((item: { filename: string; title: string }) => [item.filename, item.title]).sort(),
    [...cases].sort(),
  );
});

test('multi-section markdown: one or more chunks per section, each keeping its heading path', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  const document = await ingest(app, user.key, kb, 'garden.md', MULTI_SECTION_MARKDOWN);
  t.true(document.chunks >= 2, `chunks ${document.chunks}`);
  t.is(document.chunks, document.total_chunks, 'no duplicate segments here');
  t.is(await app.deps.search.countChunks({ document_id: document.id }), document.chunks);

  const chunks = await allChunks(app, user.key, kb, 'How should climbing roses be pruned?');
  t.is(chunks.length, document.chunks);
  for (const chunk of chunks) assertChunkShape(t, chunk);
  const paths = chunks.map((chunk) => chunk.heading_path.join(' › ')).sort();
  t.deepEqual(paths, [
    'Garden Handbook',
    'Garden Handbook › Compost',
    'Garden Handbook › Pruning',
    'Garden Handbook › Pruning › Roses',
    'Garden Handbook › Watering',
  ]);
  t.deepEqual(
    chunks.map((chunk) => chunk.chunk_index).sort((a, b) => a - b),
    Array.from({ length: document.chunks }, (_value, index) => index),
  );
  const roses = chunks.find((chunk) => chunk.heading_path.at(-1) === 'Roses');
  t.truthy(roses);
  t.regex(roses!.text, /five healthy canes/);
  t.notRegex(roses!.text, /^#/m, 'heading lines are carried by heading_path, not repeated in the text');
});

test('long plain text: several chunks, no heading path', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  const content = longPlainText();
  const document = await ingest(app, user.key, kb, 'field-log.txt', content);
  t.true(document.chunks >= 2, `chunks ${document.chunks}`);
  t.is(document.chunks, document.total_chunks);
  t.is(await app.deps.search.countChunks({ document_id: document.id }), document.chunks);

  const chunks = await allChunks(app, user.key, kb, 'What did the team record about the glacier surveys?');
  t.is(chunks.length, document.chunks);
  for (const chunk of chunks) {
    t.deepEqual(chunk.heading_path, []);
    t.true(content.includes(chunk.text), 'every chunk is a verbatim piece of the text');
  }
  // Together the chunks cover every entry of the log.
  const joined = chunks.map((chunk) => chunk.text).join('\n');
  for (let entry = 1; entry <= 48; entry += 1)
    t.true(joined.includes(`Entry ${entry} of the field log`), `entry ${entry}`);
});

test('plain-text filenames are not cut at markdown headings', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const document = await ingest(
    app,
    user.key,
    user.defaultKnowledgeBaseId,
    'hashes.txt',
    '# Not a heading\n\nJust text that starts with a hash.',
  );
  t.is(document.chunks, 1);
  const chunks = await allChunks(app, user.key, user.defaultKnowledgeBaseId, 'hash text');
  t.deepEqual(chunks[0].heading_path, []);
  t.regex(chunks[0].text, /^# Not a heading/);
});

test('duplicate segments under the same heading path are dropped: chunks < total_chunks', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  // The splitter dedupes per (heading path, segment text): the same paragraph in a repeated section is one chunk.
  const paragraph = 'Bake the loaf at 250 degrees Celsius for forty minutes, with steam for the first fifteen.';
  const content = `# Sourdough\n\n## Starter\n\nFeed the starter twice a day with equal weights of flour and water.\n\n## Baking\n\n${paragraph}\n\n## Baking\n\n${paragraph}\n\n## Baking\n\n${paragraph}\n`;
  const document = await ingest(app, user.key, kb, 'sourdough.md', content);
  t.is(document.total_chunks, 4);
  t.is(document.chunks, 2);
  t.true(document.chunks < document.total_chunks);
  t.is(await app.deps.search.countChunks({ document_id: document.id }), 2);
  const chunks = await allChunks(app, user.key, kb, 'How long is the loaf baked?');
  t.is(chunks.filter((chunk) => chunk.text === paragraph).length, 1);

  // The same paragraph under different headings is not a duplicate.
  const distinct = await ingest(
    app,
    user.key,
    kb,
    'twice.md',
    `# Monday\n\n${paragraph}\n\n# Tuesday\n\n${paragraph}\n`,
  );
  t.is(distinct.chunks, 2);
  t.is(distinct.total_chunks, 2);
});

test('400: missing, wrong-typed and invalid fields', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  const valid = { kb_id: kb, filename: 'ok.md', content: 'Some content.' };
  const cases: Array<[string, unknown, RegExp]> = [
    ['missing kb_id', { filename: 'ok.md', content: 'x' }, /^kb_id: is required/],
    ['missing filename', { kb_id: kb, content: 'x' }, /^filename: is required/],
    ['missing content', { kb_id: kb, filename: 'ok.md' }, /^content: is required/],
    ['empty object', {}, /is required/],
    ['array body', [valid], /^body: must be a JSON object/],
    ['string body', 'hello', /^body: /],
    ['kb_id number', { ...valid, kb_id: 5 }, /^kb_id: must be a string/],
    ['kb_id null', { ...valid, kb_id: null }, /^kb_id: must be a string/],
    ['kb_id operator object', { ...valid, kb_id: { $gt: '' } }, /^kb_id: must be a string/],
    ['kb_id empty', { ...valid, kb_id: '' }, /^kb_id: /],
    ['filename number', { ...valid, filename: 7 }, /^filename: must be a string/],
    ['filename array', { ...valid, filename: ['a.md'] }, /^filename: must be a string/],
    ['content object', { ...valid, content: { text: 'x' } }, /^content: must be a string/],
    ['content number', { ...valid, content: 42 }, /^content: must be a string/],
    ['pdf', { ...valid, filename: 'report.pdf' }, /^filename: .*web app/],
    ['PDF upper case', { ...valid, filename: 'REPORT.PDF' }, /^filename: .*web app/],
    ['docx', { ...valid, filename: 'report.docx' }, /^filename: .*\.docx.*\.txt.*\.text.*\.md.*\.markdown/],
    ['html', { ...valid, filename: 'page.html' }, /^filename: .*\.txt/],
    ['path separator /', { ...valid, filename: 'a/b.txt' }, /^filename: .*path separator/],
    ['path separator \\', { ...valid, filename: 'a\\b.txt' }, /^filename: .*path separator/],
    ['parent path', { ...valid, filename: '../etc/passwd' }, /^filename: .*path separator/],
    ['control char', { ...valid, filename: 'bad\u0007name.txt' }, /^filename: .*control/],
    ['newline in filename', { ...valid, filename: 'two\nlines.md' }, /^filename: .*control/],
    ['DEL in filename', { ...valid, filename: 'del\u007f.md' }, /^filename: .*control/],
    ['empty filename', { ...valid, filename: '' }, /^filename: /],
    ['blank filename', { ...valid, filename: '   ' }, /^filename: /],
    ['256-char filename', { ...valid, filename: `${'x'.repeat(253)}.md` }, /^filename: .*255/],
    ['empty content', { ...valid, content: '' }, /^content: /],
    ['whitespace content', { ...valid, content: '  \n\t \r\n ' }, /^content: /],
    ['NUL in content', { ...valid, content: 'binary\u0000data' }, /^content: /],
  ];
  for (const [name, body, message] of cases) {
    const response = await app.call('POST', '/api/v1/documents', { key: user.key, body });
    t.is(response.status, 400, `${name}: ${JSON.stringify(response.body)}`);
    t.is(response.body?.error?.code, 'bad_request', name);
    t.regex(response.body?.error?.message ?? '', message, name);
  }
  // Malformed JSON.
  const malformed = await app.call('POST', '/api/v1/documents', {
    key: user.key,
    rawBody: '{"kb_id":',
    headers: { 'content-type': 'application/json' },
  });
  t.is(malformed.status, 400);
  t.is(malformed.body.error.code, 'bad_request');

  // A 255-character filename is fine; nothing was stored by any rejected request.
  const longest = `${'y'.repeat(252)}.md`;
  t.is(longest.length, 255);
  const accepted = await ingest(app, user.key, kb, longest, 'Long names are allowed up to 255 characters.');
  t.is(accepted.title, 'y'.repeat(252));
  const listed = await documentsOf(app, user.key, kb);
  t.deepEqual(
    listed.body.documents.map((item: { filename: string }) => item.filename),
    [longest],
  );
});

test('400: content over KBQA_MAX_CONTENT_BYTES (counted in UTF-8 bytes)', async (t) => {
  const small = await startTestApp({ KBQA_MAX_CONTENT_BYTES: '1000' });
  try {
    const user = await makeUser(small.deps.store);
    const kb = user.defaultKnowledgeBaseId;
    const post = (content: string, filename = 'limit.txt') =>
      small.call('POST', '/api/v1/documents', { key: user.key, body: { kb_id: kb, filename, content } });

    const over = await post('a'.repeat(1001));
    t.is(over.status, 400, JSON.stringify(over.body));
    t.is(over.body.error.code, 'bad_request');
    t.regex(over.body.error.message, /^content: .*1000 bytes/);

    // 501 characters but 1002 bytes.
    const multibyte = await post('é'.repeat(501));
    t.is(multibyte.status, 400, JSON.stringify(multibyte.body));
    t.regex(multibyte.body.error.message, /^content: /);

    const exact = await post(`${'word '.repeat(199)}word`, 'exact.txt');
    t.is(exact.status, 201, JSON.stringify(exact.body));
    t.is(Buffer.byteLength(`${'word '.repeat(199)}word`), 999);
    const exactly1000 = await post('b'.repeat(1000), 'thousand.txt');
    t.is(exactly1000.status, 201, JSON.stringify(exactly1000.body));

    const listed = await documentsOf(small, user.key, kb);
    t.deepEqual(listed.body.documents.map((item: { filename: string }) => item.filename).sort(), [
      'exact.txt',
      'thousand.txt',
    ]);
  } finally {
    await small.close();
  }
});

interface Cast {
  caller: TestUser;
  other: TestUser;
  viewerKb: string;
  orgKb: string;
  libraryKb: string;
  privateKb: string;
  deletedKb: string;
}

/** `other` owns KBs reaching `caller` in every read-only role, one it cannot see at all, and a soft-deleted one. */
async function castOfKnowledgeBases(app: TestApp): Promise<Cast> {
  const store = app.deps.store;
  const organisation = await makeOrganisation(store);
  const caller = await makeUser(store, { label: 'caller' });
  await addOrganisationMember(store, organisation, caller.email);
  const other = await makeUser(store, { label: 'other', organisation });
  const viewerKb = await createKb(app, other.key, 'shared with caller');
  await shareKnowledgeBase(store, viewerKb, { email: caller.email }, true);
  const orgKb = await createKb(app, other.key, 'shared with the organisation');
  await shareKnowledgeBase(store, orgKb, { organisation }, true);
  const libraryKb = await createKb(app, other.key, 'library');
  const privateKb = await createKb(app, other.key, 'private');
  const deletedKb = await createKb(app, caller.key, 'deleted');
  const deleted = await app.call('DELETE', `/api/v1/knowledge-bases/${deletedKb}`, { key: caller.key });
  if (deleted.status !== 200) throw new Error(`delete failed: ${JSON.stringify(deleted.body)}`);
  return { caller, other, viewerKb, orgKb, libraryKb, privateKb, deletedKb };
}

/**
 * A library KB is reachable by every user of the database, so it is a library only for the duration of `body` (the
 * file's other tests query "every reachable KB").
 */
async function whileLibrary<T>(app: TestApp, kbId: string, body: () => Promise<T>): Promise<T> {
  await setKnowledgeBaseLibrary(app.deps.store, kbId, true);
  try {
    return await body();
  } finally {
    await setKnowledgeBaseLibrary(app.deps.store, kbId, false);
  }
}

test('403: any kb_id the caller does not own, visible or not, existing or not', async (t) => {
  const { app } = t.context;
  const cast = await castOfKnowledgeBases(app);
  const post = (kbId: string) =>
    app.call('POST', '/api/v1/documents', {
      key: cast.caller.key,
      body: { kb_id: kbId, filename: 'attempt.md', content: 'This must not be stored anywhere.' },
    });
  const expectForbidden = async (name: string, kbId: string) => {
    const response = await post(kbId);
    t.is(response.status, 403, `${name}: ${JSON.stringify(response.body)}`);
    t.deepEqual(
      response.body,
      { error: { code: 'forbidden', message: `API key lacks access to knowledge base ${kbId}` } },
      name,
    );
  };

  await expectForbidden('viewer-shared KB', cast.viewerKb);
  await expectForbidden('organisation-shared KB', cast.orgKb);
  await whileLibrary(app, cast.libraryKb, () => expectForbidden('library KB', cast.libraryKb));
  await expectForbidden("another user's invisible KB", cast.privateKb);
  await expectForbidden('own soft-deleted KB', cast.deletedKb);
  await expectForbidden('nonexistent UUID', randomUUID());
  await expectForbidden('garbage id', 'not-a-knowledge-base');
  await expectForbidden('other default KB', cast.other.defaultKnowledgeBaseId);

  // Nothing was written anywhere.
  for (const kbId of [cast.viewerKb, cast.orgKb, cast.libraryKb, cast.privateKb, cast.deletedKb]) {
    t.deepEqual((await app.deps.store.listDocuments(kbId, {})).items, [], kbId);
    t.is(await app.deps.search.countChunks({ knowledge_base_id: kbId }), 0, kbId);
  }
  // The same caller can write to its own KB.
  const own = await post(cast.caller.defaultKnowledgeBaseId);
  t.is(own.status, 201);
});

test('GET documents: 200 for every role, 404 for invisible, unknown and soft-deleted KBs', async (t) => {
  const { app } = t.context;
  const cast = await castOfKnowledgeBases(app);
  const seeded = await ingest(
    app,
    cast.other.key,
    cast.viewerKb,
    'shared.md',
    'A shared note about the harbour ferry timetable.',
  );
  await ingest(app, cast.other.key, cast.orgKb, 'org.md', 'An organisation note about parking permits.');
  await ingest(app, cast.other.key, cast.libraryKb, 'library.md', 'A library note about the reading room hours.');

  const viewer = await documentsOf(app, cast.caller.key, cast.viewerKb);
  t.is(viewer.status, 200, JSON.stringify(viewer.body));
  t.deepEqual(
    viewer.body.documents.map((item: { id: string; source: string }) => [item.id, item.source]),
    [[seeded.id, 'api']],
  );
  const org = await documentsOf(app, cast.caller.key, cast.orgKb);
  t.is(org.status, 200, JSON.stringify(org.body));
  t.is(org.body.documents.length, 1);
  t.is(org.body.documents[0].filename, 'org.md');

  await whileLibrary(app, cast.libraryKb, async () => {
    const library = await documentsOf(app, cast.caller.key, cast.libraryKb);
    t.is(library.status, 200, JSON.stringify(library.body));
    t.is(library.body.documents.length, 1);
    t.is(library.body.documents[0].filename, 'library.md');
  });
  const own = await documentsOf(app, cast.caller.key, cast.caller.defaultKnowledgeBaseId);
  t.is(own.status, 200);
  t.deepEqual(own.body, { documents: [] });

  const expectNotFound = async (name: string, kbId: string, key = cast.caller.key) => {
    const response = await documentsOf(app, key, kbId);
    t.is(response.status, 404, `${name}: ${JSON.stringify(response.body)}`);
    t.deepEqual(response.body, { error: { code: 'not_found', message: `knowledge base ${kbId} not found` } }, name);
  };
  await expectNotFound('library KB after it stopped being one', cast.libraryKb);
  await expectNotFound('invisible KB', cast.privateKb);
  await expectNotFound('unknown UUID', randomUUID());
  await expectNotFound('garbage id', 'garbage');
  await expectNotFound('own soft-deleted KB', cast.deletedKb);
  // Soft-deleting a KB with documents hides them from its owner too.
  const deleted = await app.call('DELETE', `/api/v1/knowledge-bases/${cast.viewerKb}`, { key: cast.other.key });
  t.is(deleted.status, 200);
  await expectNotFound('soft-deleted KB (owner)', cast.viewerKb, cast.other.key);
  await expectNotFound('soft-deleted KB (viewer)', cast.viewerKb);
});

test('document_count in GET /knowledge-bases counts the documents', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = await createKb(app, user.key, 'counted');
  const countOf = async (kbId: string) => {
    const response = await app.call('GET', '/api/v1/knowledge-bases', { key: user.key });
    t.is(response.status, 200);
    return response.body.knowledge_bases.find((item: { id: string }) => item.id === kbId)?.document_count;
  };
  t.is(await countOf(kb), 0);
  await ingest(app, user.key, kb, 'one.md', 'First document about otters.');
  t.is(await countOf(kb), 1);
  await ingest(app, user.key, kb, 'two.txt', 'Second document about beavers.');
  await ingest(app, user.key, kb, 'three', 'Third document about badgers.');
  t.is(await countOf(kb), 3);
  t.is(await countOf(user.defaultKnowledgeBaseId), 0, 'other KBs are unaffected');
  // A rejected ingest does not count.
  const rejected = await app.call('POST', '/api/v1/documents', {
    key: user.key,
    body: { kb_id: kb, filename: 'x.pdf', content: 'x' },
  });
  t.is(rejected.status, 400);
  t.is(await countOf(kb), 3);
});

test('documents list: newest first, limit/cursor paging', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = await createKb(app, user.key, 'paged');
  const ids: string[] = [];
  for (const name of ['first', 'second', 'third', 'fourth', 'fifth']) {
    ids.push((await ingest(app, user.key, kb, `${name}.md`, `The ${name} document of the paging test.`)).id);
  }
  const newestFirst = [...ids].reverse();

  const all = await documentsOf(app, user.key, kb);
  t.is(all.status, 200);
  t.deepEqual(
    all.body.documents.map((item: { id: string }) => item.id),
    newestFirst,
  );
  t.false('next_cursor' in all.body, 'no next_cursor without limit');
  const times = all.body.documents.map((item: { created_at: string }) => Date.parse(item.created_at));
  t.deepEqual(
    times,
    [...times].sort((a, b) => b - a),
  );

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await documentsOf(app, user.key, kb, query);
    t.is(page.status, 200, JSON.stringify(page.body));
    t.deepEqual(Object.keys(page.body).sort(), ['documents', 'next_cursor']);
    t.true(page.body.documents.length <= 2);
    for (const item of page.body.documents) t.deepEqual(sortedKeys(item), LIST_ITEM_FIELDS);
    seen.push(...page.body.documents.map((item: { id: string }) => item.id));
    cursor = page.body.next_cursor;
    pages += 1;
  } while (cursor !== null && pages < 10);
  t.is(pages, 3);
  t.deepEqual(seen, newestFirst);

  const exact = await documentsOf(app, user.key, kb, '?limit=5');
  t.is(exact.body.documents.length, 5);
  t.is(exact.body.next_cursor, null);

  for (const bad of ['?limit=0', '?limit=abc', '?limit=1001', '?cursor=not-a-cursor', '?limit=2&cursor=%7B%7D']) {
    const response = await documentsOf(app, user.key, kb, bad);
    t.is(response.status, 400, `${bad}: ${JSON.stringify(response.body)}`);
    t.is(response.body.error.code, 'bad_request', bad);
  }
});

test('markdown made only of headings is still indexed and searchable', async (t) => {
  const { app } = t.context;
  const user = await makeUser(app.deps.store);
  const kb = user.defaultKnowledgeBaseId;
  const document = await ingest(
    app,
    user.key,
    kb,
    'holiday-headings.md',
    '# Holiday policy\n\n## Every employee gets 22 days of paid leave per year\n\n## Unused days expire in March\n',
  );
  t.true(document.chunks >= 1, `a 201 document must be searchable: ${JSON.stringify(document)}`);
  t.true(document.total_chunks >= document.chunks);
  t.is(await app.deps.search.countChunks({ document_id: document.id }), document.chunks);
  const chunks = await allChunks(app, user.key, kb, 'How many days of paid leave does an employee get per year?');
  t.true(chunks.some((chunk) => chunk.document_id === document.id && /22 days of paid leave/.test(chunk.text)));
});
