// PDFs end to end through /api/web: streamed upload into GridFS, extraction in a worker, chunks that know their
// pages, citations with pages in the web app (not in /api/v1), failures a person understands, limits, the stored
// original (download, delete, re-extraction), and the quality of page citations on 24 questions.
import { queueReindex } from '../service/commands/documents.ts';
import {
  corruptPdf,
  encryptedPdf,
  hundredPageTextPdf,
  manyPagesPdf,
  multiPagePdf,
  multiPageSentence,
  scannedPdf,
  textPdf,
} from './fixtures/pdfs.ts';
import { PDF_MANUALS, PDF_QUESTIONS } from './fixtures/pdfQuestions.ts';
import { makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { serveVariant, testWithApp, type TestApp } from './helpers/app.ts';
import { MongoClient } from 'mongodb';
import { connect } from 'node:net';
import { openStore } from '../service/store/index.ts';
import { dropDatabase, freshDatabaseUrl, WebClient } from './helpers/webClient.ts';
import { settled, upload } from './helpers/pdfUploads.ts';

interface Context {
  app: TestApp;
  databaseUrl: string;
}

const test = testWithApp<Omit<Context, 'app'>>({ env: { KBQA_PDF_MAX_PAGES: '150' } });

async function owner(app: TestApp) {
  const user = await makeWebUser(app.deps.store);
  const browser = new WebClient(app.baseUrl);
  await browser.signIn(user.email, TEST_PASSWORD);
  return { user, browser };
}

test('a multi-page PDF: uploaded, extracted page by page, every chunk knows its page, the web citation carries it', async (t) => {
  const { app } = t.context;
  const { user, browser } = await owner(app);
  const bytes = await multiPagePdf();
  const uploaded = await upload(browser, user.defaultKnowledgeBaseId, 'handbook.pdf', bytes);
  t.is(uploaded.status, 202);
  t.like(uploaded.body.document, { filename: 'handbook.pdf', kind: 'pdf', source: 'upload', status: 'queued' });
  const document = await settled(browser, uploaded.body.document.id);
  t.is(document.status, 'ready');

  const asked = await browser.call('POST', '/api/web/query', {
    body: {
      query: 'How are tidal turbines inspected?',
      knowledge_base_ids: [user.defaultKnowledgeBaseId],
      include_chunks: true,
    },
  });
  t.is(asked.status, 200);
  const top = asked.body.chunks[0];
  t.true(top.text.includes(multiPageSentence(2)));
  t.deepEqual([top.page_start, top.page_end], [2, 2]);
  t.false(top.text.includes('ACME Handbook'), 'the running header is gone');
  t.like(asked.body.citations[0], { document_id: document.id, page_start: 2, page_end: 2 });

  // The Developer API's citations keep exactly the contract's fields; its chunk records carry the pages.
  const key = (await browser.call('POST', '/api/web/api-keys', { body: { name: 'pdf' } })).body.key;
  const v1 = await app.call('POST', '/api/v1/query', {
    key,
    body: { query: 'How are tidal turbines inspected?', include_chunks: true },
  });
  t.deepEqual(Object.keys(v1.body.citations[0]).sort(), ['document_id', 'similarity', 'snippet', 'title']);
  t.is(v1.body.chunks[0].page_start, 2);

  // The stored original: the same bytes, inline, as a PDF.
  const file = await fetch(`${app.baseUrl}/api/web/documents/${document.id}/file`, {
    headers: { cookie: browser.cookie ?? '' },
  });
  t.is(file.status, 200);
  t.is(file.headers.get('content-type'), 'application/pdf');
  t.regex(file.headers.get('content-disposition') ?? '', /^inline; filename\*=UTF-8''handbook\.pdf$/);
  t.deepEqual(new Uint8Array(await file.arrayBuffer()), bytes);
  const stranger = await owner(app);
  const refused = await fetch(`${app.baseUrl}/api/web/documents/${document.id}/file`, {
    headers: { cookie: stranger.browser.cookie ?? '' },
  });
  t.is(refused.status, 404);
});

// Serial: it slows the shared store's progress writes while it runs (ava runs serial tests before the others).
test.serial(
  'a progress write still in flight when extraction fails cannot set the failed document back to processing',
  async (t) => {
    const { app } = t.context;
    const { user, browser } = await owner(app);
    const store = app.deps.store;
    const original = store.setDocumentProgress;
    let delayed = 0;
    // What a loaded store does now and then: the last page's progress write lands after the failure was recorded.
    store.setDocumentProgress = async (id, status, progress) => {
      if (progress?.phase === 'extracting') {
        delayed += 1;
        await new Promise((resolve) => setTimeout(resolve, 1_500));
      }
      return original.call(store, id, status, progress);
    };
    try {
      const uploaded = await upload(browser, user.defaultKnowledgeBaseId, 'slow-scan.pdf', await scannedPdf());
      t.is(uploaded.status, 202);
      const document = await settled(browser, uploaded.body.document.id);
      t.like(document, { status: 'failed', error: 'scanned PDF: no text to index' });
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const { body } = await browser.call('GET', `/api/web/documents/${document.id}`);
      t.is(body.document.status, 'failed', 'still failed once every write has landed');
      t.falsy(body.document.progress, 'and no progress shown');
      t.true(delayed > 0, 'the progress writes were slowed');
    } finally {
      store.setDocumentProgress = original;
    }
  },
);

test('encrypted, corrupt and scanned PDFs end as failed with a message a person understands, and nothing indexed', async (t) => {
  const { app } = t.context;
  const { user, browser } = await owner(app);
  for (const [filename, bytes, message] of [
    [
      'locked.pdf',
      await encryptedPdf(),
      'the PDF is password-protected (encrypted); remove the password and upload it again',
    ],
    ['broken.pdf', corruptPdf(), 'the file is not a readable PDF (damaged or not a PDF)'],
    ['scan.pdf', await scannedPdf(), 'scanned PDF: no text to index'],
  ] as const) {
    const uploaded = await upload(browser, user.defaultKnowledgeBaseId, filename, bytes);
    t.is(uploaded.status, 202, filename);
    const document = await settled(browser, uploaded.body.document.id);
    t.like(document, { status: 'failed', error: message }, filename);
    t.is(await app.deps.search.countChunks({ document_id: document.id }), 0, `${filename}: no chunk`);
  }
});

test('limits: a file over KBQA_MAX_UPLOAD_BYTES is 413 and nothing is stored; too many pages fail the document', async (t) => {
  const { app } = t.context;
  const { user, browser } = await owner(app);
  const small = await serveVariant(app.deps, (config) => ({ ...config, pdf: { ...config.pdf, maxBytes: 2_000 } }));
  try {
    const big = await multiPagePdf();
    t.true(big.length > 2_000);
    const refused = await upload(browser, user.defaultKnowledgeBaseId, 'big.pdf', big, small.baseUrl);
    t.is(refused.status, 413);
    t.is(refused.body.error.code, 'payload_too_large');
  } finally {
    await small.close();
  }
  const listed = await browser.call(
    'GET',
    `/api/web/knowledge-bases/${user.defaultKnowledgeBaseId}/documents?include=status`,
  );
  t.deepEqual(listed.body.documents, [], 'no document from the refused upload');

  const tooLong = await upload(browser, user.defaultKnowledgeBaseId, 'long.pdf', await manyPagesPdf(160));
  const failed = await settled(browser, tooLong.body.document.id);
  t.is(failed.status, 'failed');
  t.regex(failed.error, /160 pages; the limit is 150/);
});

test('uploads are refused unless they are a PDF, from the owner, with the CSRF token', async (t) => {
  const { app } = t.context;
  const { user, browser } = await owner(app);
  const notPdf = await upload(browser, user.defaultKnowledgeBaseId, 'notes.txt', new TextEncoder().encode('hello'));
  t.is(notPdf.status, 400);
  const { browser: other } = await owner(app);
  t.is(
    (await upload(other, user.defaultKnowledgeBaseId, 'a.pdf', await multiPagePdf())).status,
    403,
    'writes to a KB not owned are 403, as on /api/v1',
  );
  const tokenless = await fetch(`${app.baseUrl}/api/web/knowledge-bases/${user.defaultKnowledgeBaseId}/uploads`, {
    method: 'POST',
    headers: { cookie: browser.cookie ?? '' },
    body: new FormData(),
  });
  t.is(tokenless.status, 403);
  const key = (await browser.call('POST', '/api/web/api-keys', { body: { name: 'v1' } })).body.key;
  const viaV1 = await app.call('POST', '/api/v1/documents', {
    key,
    body: { kb_id: user.defaultKnowledgeBaseId, filename: 'a.pdf', content: 'x' },
  });
  t.is(viaV1.status, 400);
  t.regex(viaV1.body.error.message, /web app/);
});

test('deleting the document deletes its file; a re-index extracts the stored file again', async (t) => {
  const { app } = t.context;
  const { user, browser } = await owner(app);
  const uploaded = await upload(browser, user.defaultKnowledgeBaseId, 'handbook.pdf', await multiPagePdf());
  const document = await settled(browser, uploaded.body.document.id);
  const record = await app.deps.store.findDocument(document.id);
  t.truthy(record?.file_id && (await app.deps.store.findFile(record.file_id)));

  // Ready is recorded just before the job is deleted: a re-index waits until nothing is in flight.
  for (let attempt = 0; attempt < 100 && (await app.deps.store.findJob(document.id)) !== null; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const version = await queueReindex(app.deps, document.id);
  t.is(version, 2);
  const rebuilt = await settled(browser, document.id);
  t.is(rebuilt.status, 'ready');
  const asked = await browser.call('POST', '/api/web/query', {
    body: {
      query: 'How are ferry timetables inspected?',
      knowledge_base_ids: [user.defaultKnowledgeBaseId],
      include_chunks: true,
    },
  });
  t.is(asked.body.chunks[0].page_start, 5);

  t.deepEqual((await browser.call('DELETE', `/api/web/documents/${document.id}`)).body, { deleted: true });
  t.is(await app.deps.store.findFile(record!.file_id!), null);
});

test(`the default answerer cites the right PDF first and the right page on ${PDF_QUESTIONS.length} questions`, async (t) => {
  const { app } = t.context;
  const { browser } = await owner(app);
  const kb = (await browser.call('POST', '/api/web/knowledge-bases', { body: { name: 'manuals' } })).body
    .knowledge_base;
  const ids = new Map<string, string>();
  for (const manual of PDF_MANUALS) {
    const uploaded = await upload(browser, kb.id, manual.filename, await textPdf(manual.pages));
    t.is((await settled(browser, uploaded.body.document.id)).status, 'ready');
    ids.set(manual.filename, uploaded.body.document.id);
  }
  let rightDocument = 0;
  let rightPage = 0;
  for (const question of PDF_QUESTIONS) {
    const { body } = await browser.call('POST', '/api/web/query', {
      body: { query: question.question, knowledge_base_ids: [kb.id] },
    });
    const first = body.citations[0];
    if (first?.document_id === ids.get(question.filename)) {
      rightDocument += 1;
      if (first.page_start <= question.page && question.page <= first.page_end) rightPage += 1;
      else t.log(`page ${first.page_start}–${first.page_end} for "${question.question}" (page ${question.page})`);
    } else {
      t.log(`wrong document first for "${question.question}"`);
    }
  }
  const documentRate = rightDocument / PDF_QUESTIONS.length;
  const pageRate = rightPage / PDF_QUESTIONS.length;
  t.log(
    `right document first ${rightDocument}/${PDF_QUESTIONS.length} (${(documentRate * 100).toFixed(1)} %), right page ${rightPage}/${PDF_QUESTIONS.length} (${(pageRate * 100).toFixed(1)} %)`,
  );
  t.true(documentRate >= 0.9, `right document first ${documentRate}`);
  t.true(pageRate >= 0.85, `right page ${pageRate}`);
});

test('a 100-page PDF reports its progress (pages, then embedding) while processing, and cancelling it leaves nothing', async (t) => {
  const { app } = t.context;
  const { user, browser } = await owner(app);
  const { pdf } = await hundredPageTextPdf();
  const uploaded = await upload(browser, user.defaultKnowledgeBaseId, 'hundred.pdf', pdf);
  const id = uploaded.body.document.id;
  let seen: { phase?: string; pages?: { done: number; total: number }; embedded: number; total: number } | null = null;
  for (let attempt = 0; attempt < 600 && seen === null; attempt += 1) {
    const { body } = await browser.call('GET', `/api/web/documents/${id}`);
    if (body.document.status === 'ready' || body.document.status === 'failed') break;
    if (body.document.progress?.phase === 'embedding') seen = body.document.progress;
    else await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.truthy(seen, 'the embedding phase was seen while processing');
  t.deepEqual(seen?.pages, { done: 100, total: 100 });
  t.true((seen?.total ?? 0) >= 100, 'one chunk at least per page');

  // Cancel: the web app's Cancel is a DELETE of the document while it is in flight.
  t.deepEqual((await browser.call('DELETE', `/api/web/documents/${id}`)).body, { deleted: true });
  t.is((await browser.call('GET', `/api/web/documents/${id}`)).status, 404);
  // The running job notices at its next step and removes what that step wrote: wait until this process no longer
  // runs it, make everything indexed searchable, then count (the DELETE alone already made the count 0 once).
  for (let attempt = 0; attempt < 300 && app.deps.jobs.runningJobs().includes(id); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.false(app.deps.jobs.runningJobs().includes(id), 'the job stopped');
  await app.deps.search.chunksSearchable();
  t.is(await app.deps.search.countChunks({ document_id: id }), 0, 'no chunk remains, even of a step that was running');
  t.is(await app.deps.store.findJob(id), null);
});

/** What the `document_files` GridFS bucket of a database holds. */
async function storedFiles(databaseUrl: string): Promise<{ files: number; chunks: number }> {
  const client = new MongoClient(databaseUrl);
  try {
    await client.connect();
    const db = client.db();
    return {
      files: await db.collection('document_files.files').countDocuments(),
      chunks: await db.collection('document_files.chunks').countDocuments(),
    };
  } finally {
    await client.close();
  }
}

/** Sends the head of a multipart upload (headers and `bytes` of the file), then either drops the connection or ends the body without its closing boundary. */
function brokenUpload(
  baseUrl: string,
  path: string,
  browser: WebClient,
  file: Uint8Array,
  how: 'drop' | 'truncate',
): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  const boundary = 'kbqa-test-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n`;
  const declared = head.length + file.length + 100;
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nCookie: ${browser.cookie}\r\nX-CSRF-Token: ${browser.csrfToken}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\n` +
          (how === 'drop' ? `Content-Length: ${declared}\r\n` : 'Transfer-Encoding: chunked\r\n') +
          '\r\n',
      );
      if (how === 'drop') {
        socket.write(head);
        socket.write(Buffer.from(file).subarray(0, Math.floor(file.length / 2)));
        setTimeout(() => {
          socket.destroy();
          resolve('dropped');
        }, 300);
      } else {
        const body = Buffer.concat([Buffer.from(head), Buffer.from(file)]);
        socket.write(`${body.length.toString(16)}\r\n`);
        socket.write(body);
        socket.write('\r\n0\r\n\r\n');
      }
    });
    let answer = '';
    socket.on('data', (part) => (answer += part.toString()));
    socket.on('end', () => resolve(answer.split('\r\n')[0]));
    socket.on('error', () => resolve('socket error'));
  });
}

test('an upload dropped mid-file, a body without its closing boundary, and one over the limit leave nothing stored, and the service carries on', async (t) => {
  const databaseUrl = freshDatabaseUrl('pdf_broken_uploads');
  const store = await openStore(databaseUrl, 5_000);
  const own = await serveVariant({ ...t.context.app.deps, store }, (config) => ({
    ...config,
    pdf: { ...config.pdf, maxBytes: 300_000 },
  }));
  try {
    const user = await makeWebUser(store);
    const browser = new WebClient(own.baseUrl);
    await browser.signIn(user.email, TEST_PASSWORD);
    const { pdf } = await hundredPageTextPdf();
    const path = `/api/web/knowledge-bases/${user.defaultKnowledgeBaseId}/uploads`;

    t.is(await brokenUpload(own.baseUrl, path, browser, pdf, 'drop'), 'dropped');
    t.regex(await brokenUpload(own.baseUrl, path, browser, pdf, 'truncate'), /^HTTP\/1\.1 400/);
    const big = new Uint8Array(400_000).fill(65);
    const over = await upload(browser, user.defaultKnowledgeBaseId, 'big.pdf', big, own.baseUrl);
    t.is(over.status, 413);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    t.deepEqual(
      await storedFiles(databaseUrl),
      { files: 0, chunks: 0 },
      'no file record and no stored part of any of them',
    );
    // Still serving (an unhandled stream error would have ended the process).
    const ok = await upload(browser, user.defaultKnowledgeBaseId, 'fine.pdf', await multiPagePdf(), own.baseUrl);
    t.is(ok.status, 202);
    t.is((await storedFiles(databaseUrl)).files, 1);
  } finally {
    await own.close();
    await store.close();
    await dropDatabase(databaseUrl);
  }
});
