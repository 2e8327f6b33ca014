// Issue 32 §2: the new file kinds through the web app's upload, as PDFs come in: DOCX, ODT, PPTX, XLSX, CSV, HTML
// and images, each told by its bytes (a mismatch is a 400 naming what is accepted), read in the reader child, cited
// where a person looks (the slide, the sheet and rows, the section heading), the original kept and served as an
// attachment with its own type and nosniff (an uploaded page never renders on the app's origin).
import { readFile } from 'node:fs/promises';
import { makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { settled, upload } from './helpers/pdfUploads.ts';
import { WebClient } from './helpers/webClient.ts';

const test = testWithApp();

const fixture = (name: string) => readFile(new URL(`./fixtures/real/${name}`, import.meta.url));

async function owner(app: TestApp) {
  const user = await makeWebUser(app.deps.store);
  const browser = new WebClient(app.baseUrl);
  await browser.signIn(user.email, TEST_PASSWORD);
  return { user, browser };
}

async function chunksFor(browser: WebClient, kbId: string, query: string) {
  const asked = await browser.call('POST', '/api/web/query', {
    body: { query, knowledge_base_ids: [kbId], include_chunks: true },
  });
  return asked.body.chunks as Array<{ text: string; heading_path: string[]; page_start: number | null }>;
}

const KINDS: Array<[file: string, kind: string, question: string, fact: RegExp]> = [
  ['office.docx', 'docx', 'How often is the padlock code changed?', /3 months/],
  ['office.odt', 'odt', 'How much seaweed extract goes into the water?', /50 millilitres/],
  ['page.html', 'html', 'When is the wassail held?', /17 January/],
  ['deck.pptx', 'pptx', 'How many crates did the pickers fill?', /11,600 crates/],
  ['rows.xlsx', 'xlsx', "How many tonnes of Cox's Orange Pippin were picked?", /187/],
  ['rows.csv', 'csv', "How many tonnes of Cox's Orange Pippin were picked?", /187/],
];

for (const [file, kind, question, fact] of KINDS) {
  test(`${file}: uploaded in the web app, read in the reader child, ready and found as ${kind}`, async (t) => {
    const { user, browser } = await owner(t.context.app);
    const uploaded = await upload(browser, user.defaultKnowledgeBaseId, file, await fixture(file));
    t.is(uploaded.status, 202, JSON.stringify(uploaded.body));
    t.is(uploaded.body.document.kind, kind);
    const document = await settled(browser, uploaded.body.document.id);
    t.is(document.status, 'ready', document.error);
    const chunks = await chunksFor(browser, user.defaultKnowledgeBaseId, question);
    const found = chunks.find((chunk) => fact.test(chunk.text));
    t.truthy(found, `no chunk holds ${fact}: ${JSON.stringify(chunks.map((chunk) => chunk.text))}`);
    if (kind === 'pptx') t.is(found!.page_start, 2, 'the fact is on slide 2');
    if (kind === 'xlsx' || kind === 'csv') {
      t.regex(found!.heading_path.join(' › '), /^Sheet rows, rows? \d/);
      t.regex(found!.text, /Variety: Cox's Orange Pippin; Picking starts: September; Tonnes picked: 187/);
    }
    if (kind === 'docx') t.deepEqual(found!.heading_path, ['Orchard handbook', 'Tools and the tool shed']);
    if (kind === 'html') t.notRegex(chunks.map((chunk) => chunk.text).join('\n'), /99 pounds/);
  });
}

test('the original comes back as an attachment of its own type with nosniff: an uploaded page never renders here', async (t) => {
  const { user, browser } = await owner(t.context.app);
  const page = await fixture('page.html');
  const uploaded = await upload(browser, user.defaultKnowledgeBaseId, 'page.html', page);
  const id = uploaded.body.document.id;
  const response = await fetch(`${t.context.app.baseUrl}/api/web/documents/${id}/file`, {
    headers: { cookie: browser.cookie ?? '' },
  });
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'text/html; charset=utf-8');
  t.regex(response.headers.get('content-disposition') ?? '', /^attachment; filename\*=UTF-8''page\.html$/);
  t.is(response.headers.get('x-content-type-options'), 'nosniff');
  t.regex(response.headers.get('content-security-policy') ?? '', /sandbox/);
  t.deepEqual(Buffer.from(await response.arrayBuffer()), page);
  await settled(browser, id);
});

test('a file whose bytes are not the kind its name says, or of no kind taken, is a 400 naming the accepted kinds; nothing is kept', async (t) => {
  const { app } = t.context;
  const { user, browser } = await owner(app);
  const kb = user.defaultKnowledgeBaseId;
  const cases: Array<[string, Buffer, RegExp]> = [
    [
      'report.docx',
      await fixture('rows.xlsx'),
      /named as a Word document \(\.docx\) but its content is an Excel workbook/,
    ],
    [
      'slides.pptx',
      await fixture('page.html'),
      /named as a PowerPoint deck \(\.pptx\) but its content is none of the kinds/,
    ],
    [
      'scan.png',
      await fixture('chromium-paragraph.pdf'),
      /named as a PNG, JPEG or TIFF image but its content is a PDF/,
    ],
    ['rows.csv', await fixture('scanned.png'), /named as a CSV file but its content is a PNG, JPEG or TIFF image/],
    ['notes.txt', Buffer.from('hello'), /this upload takes PDF \(\.pdf\), Word \(\.docx\)/],
  ];
  for (const [name, bytes, message] of cases) {
    const refused = await upload(browser, kb, name, bytes);
    t.is(refused.status, 400, name);
    t.regex(refused.body.error.message, message, name);
    t.regex(refused.body.error.message, /\.xlsx/, `${name}: the message names what is accepted`);
  }
  const listed = await browser.call('GET', `/api/web/knowledge-bases/${kb}/documents`);
  t.is(listed.status, 200);
  t.deepEqual(listed.body.documents, []);
});

test('an image is accepted as kind image, read by OCR, and cited as a scanned page', async (t) => {
  const { user, browser } = await owner(t.context.app);
  const kb = user.defaultKnowledgeBaseId;
  const uploaded = await upload(browser, kb, 'scanned.png', await fixture('scanned.png'));
  t.is(uploaded.status, 202);
  t.is(uploaded.body.document.kind, 'image');
  const document = await settled(browser, uploaded.body.document.id);
  t.is(document.status, 'ready', document.error ?? '');
  const asked = await browser.call('POST', '/api/web/query', {
    body: { query: 'How many bottles of juice did the orchard sell last year?', knowledge_base_ids: [kb] },
  });
  t.is(asked.status, 200, JSON.stringify(asked.body));
  t.regex(asked.body.answer, /23,400/);
  t.like(asked.body.citations[0], { page_start: 1, scanned: true });
});

test('the Developer API keeps its contract: a .docx as JSON is refused', async (t) => {
  const { app } = t.context;
  const { user, browser } = await owner(app);
  const key = (await browser.call('POST', '/api/web/api-keys', { body: { name: 'v1' } })).body.key;
  const viaV1 = await app.call('POST', '/api/v1/documents', {
    key,
    body: { kb_id: user.defaultKnowledgeBaseId, filename: 'a.docx', content: 'x' },
  });
  t.is(viaV1.status, 400);
});
