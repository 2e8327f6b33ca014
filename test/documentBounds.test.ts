// Issue 32 §3: the bounds of the new kinds through the upload, in an API process of its own (its RSS is its alone,
// as in pdfMemoryBound.test.ts): a DOCX inflating 1 MB → 1 GiB, a workbook whose sheet declares a billion laughs,
// an XLSX of 1,000,000 rows and a 500-slide deck, each built here and small on disk. Each is read in the reader
// child (documentWorker.ts): the first three fail once with a message naming their limit, the deck is read within
// its bound, the API's peak RSS does not move, and another user's small document is ready meanwhile.
import { openStore } from '../service/store/index.ts';
import { makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { deck, docxBomb, laughingXlsx, MiB, rawSheet, xlsx } from './fixtures/hostileDocuments.ts';
import { startApiProcess } from './helpers/apiProcess.ts';
import { testWithDatabase } from './helpers/app.ts';
import { settled, upload } from './helpers/pdfUploads.ts';
import { memoryOf } from './helpers/processMemory.ts';
import { WebClient } from './helpers/webClient.ts';

// The file's own database (the harness's): the API process's runner claims every job in its database.
const test = testWithDatabase();

test('a zip bomb, a billion laughs, a million rows and a 500-slide deck: each bounded in the reader child, the API unmoved, another user served', async (t) => {
  const { databaseUrl } = t.context;
  const store = await openStore(databaseUrl, 5_000);
  const lines: string[] = [];
  // A ratio limit high enough that the million rows are refused by their own bound (KBQA_DOC_MAX_ROWS, 100,000),
  // not before inflating by the ratio (their one repeated block compresses ~1,000:1); the part limit under the
  // bomb's 1 GiB and over the sheet's ~100 MB.
  const api = await startApiProcess(
    { KBQA_MONGODB_URL: databaseUrl, KBQA_DOC_MAX_ZIP_RATIO: '100000', KBQA_DOC_MAX_PART_MB: '512' },
    120_000,
    (line) => lines.push(line),
  );
  try {
    const attacker = await makeWebUser(store);
    const browser = new WebClient(api.url);
    await browser.signIn(attacker.email, TEST_PASSWORD);
    const other = await makeWebUser(store);
    const otherBrowser = new WebClient(api.url);
    await otherBrowser.signIn(other.email, TEST_PASSWORD);
    const kb = attacker.defaultKnowledgeBaseId;

    // An ordinary file first: whatever starting a reader child costs the API once is in the baseline.
    const warm = await upload(browser, kb, 'warm.csv', Buffer.from('Item,Region\nCrate,North\n'));
    t.is((await settled(browser, warm.body.document.id)).status, 'ready');

    const files: Array<[string, Buffer, RegExp | null]> = [
      [
        'bomb.docx',
        docxBomb(),
        /^word\/document\.xml inflates to 1,024 MB; the limit is 512 MB \(KBQA_DOC_MAX_PART_MB/,
      ],
      [
        'laughs.xlsx',
        laughingXlsx(),
        /^xl\/worksheets\/sheet1\.xml declares a DTD \(<!DOCTYPE>\); XML entities are refused/,
      ],
      [
        'million.xlsx',
        xlsx(rawSheet(1_000_000)),
        /^the file has more than 100,000 rows; the limit is 100,000 \(KBQA_DOC_MAX_ROWS\)$/,
      ],
      ['deck.pptx', deck(500), null],
    ];
    for (const [name, bytes] of files) t.true(bytes.byteLength < 2 * MiB, `${name} is ${bytes.byteLength} bytes`);

    const before = memoryOf(api.pid);
    let sampled = before.rss;
    const sampler = setInterval(() => (sampled = Math.max(sampled, memoryOf(api.pid).rss)), 100);
    const ids: string[] = [];
    for (const [name, bytes] of files) {
      const uploaded = await upload(browser, kb, name, bytes);
      t.is(uploaded.status, 202, `${name}: ${JSON.stringify(uploaded.body)}`);
      ids.push(uploaded.body.document.id);
    }
    // Another user's small document, queued behind all four.
    const queuedAt = Date.now();
    const small = await upload(
      otherBrowser,
      other.defaultKnowledgeBaseId,
      'small.csv',
      Buffer.from('Item,Region\nCrate,South\n'),
    );
    const smallDocument = await settled(otherBrowser, small.body.document.id);
    const smallSeconds = (Date.now() - queuedAt) / 1000;
    const settledAll: Array<{ status: string; error: string; chunks: number }> = [];
    for (const id of ids) settledAll.push(await settled(browser, id));
    clearInterval(sampler);
    const after = memoryOf(api.pid);
    t.log(
      `API RSS ${before.rss.toFixed(0)} MiB before, highest sample ${sampled.toFixed(0)} MiB; peak ${before.peak.toFixed(0)} → ${after.peak.toFixed(0)} MiB; the other user's document ready in ${smallSeconds.toFixed(1)} s`,
    );

    t.is(smallDocument.status, 'ready');
    files.forEach(([name, , message], index) => {
      const document = settledAll[index];
      if (message === null) {
        t.is(document.status, 'ready', `${name}: ${document.error}`);
        t.true(document.chunks >= 500, `${name}: ${document.chunks} chunks, one a slide`);
      } else {
        t.is(document.status, 'failed', name);
        t.regex(document.error, message, name);
      }
    });
    // The 1 GiB part, the entities or the million rows read in the API would be hundreds of MiB.
    t.true(after.peak - before.peak < 100, `the API's peak RSS rose by ${(after.peak - before.peak).toFixed(0)} MiB`);
    // Once: each failure is recorded and its job gone, so nothing claims it again; each hit its limit once.
    for (const [index, id] of ids.entries()) {
      t.is(await store.findJob(id), null);
      const hits = lines.filter((line) => line.includes(id) && line.includes('a file hit a reading limit')).length;
      t.is(hits, files[index][2] === null ? 0 : 1, `${files[index][0]}: ${api.tail()}`);
    }
    // A slide's chunk cites its slide: the last one's, 500.
    const asked = await browser.call('POST', '/api/web/query', {
      body: { query: 'Topic 500', knowledge_base_ids: [kb], include_chunks: true },
    });
    t.true(
      (asked.body.chunks as Array<{ page_start: number | null; text: string }>).some(
        (chunk) => chunk.page_start === 500 && chunk.text.includes('Topic 500'),
      ),
    );
    t.is(api.exit(), null, 'the API process is still running');
  } finally {
    await api.kill();
    await store.close();
  }
});
