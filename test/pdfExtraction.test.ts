// The PDF extractor (service/extraction/pdf.ts): reading order, running headers and footers, hyphenation, every
// failure and limit, progress, and that pdfjs never runs on the main thread. No stack is needed: fixtures are
// generated in memory (test/fixtures/pdfs.ts).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import anyTest, { type TestFn } from 'ava';
import { PdfExtractionError } from '../service/errors.ts';
import {
  createPdfExtractor,
  extractionBudgetMs,
  type PdfExtractor,
  type PdfLimits,
} from '../service/extraction/pdf.ts';
import { isPageNumber } from '../service/extraction/pdfRunningLines.ts';
import { flateBombPdf, sharedStreamPdf } from './fixtures/hostilePdfs.ts';
import {
  CJK_TEXT,
  HYPHENATION_LINES,
  LEFT_COLUMN,
  MULTI_PAGE_CONTENT,
  MULTI_PAGE_HEADER,
  PAGE_WITH_TEXT,
  RIGHT_COLUMN,
  TWO_COLUMN_TITLE,
  cjkPdf,
  corruptPdf,
  encryptedPdf,
  hundredPageTextPdf,
  hyphenationPdf,
  manyPagesPdf,
  multiPagePdf,
  pageWithoutTextPdf,
  scannedPdf,
  textPdf,
  textPdfWithLayout,
  twoColumnPdf,
} from './fixtures/pdfs.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

const LIMITS: PdfLimits = { maxBytes: 50 * 1024 ** 2, maxPages: 1000, timeoutMs: 120_000, maxMemoryMb: 1024 };
/** More pages than LIMITS.maxPages, and enough that reading them all takes seconds (~1 ms a page). */
const BIG_PAGE_COUNT = 1234;

const test = anyTest as TestFn<{ extractor: PdfExtractor; big: Uint8Array }>;

test.before(async (t) => {
  t.context.extractor = createPdfExtractor(LIMITS, { workers: 2 });
  t.context.big = await manyPagesPdf(BIG_PAGE_COUNT);
});

test.after.always(async (t) => {
  await t.context.extractor?.close();
});

/** Whitespace runs as one space: compares text regardless of where lines wrapped. */
function flat(text: string): string {
  return text.split(/\s+/u).filter(Boolean).join(' ');
}

async function failureOf(promise: Promise<unknown>): Promise<PdfExtractionError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof PdfExtractionError)) throw new Error(`expected a PdfExtractionError, got ${String(error)}`);
  return error;
}

test('a 100-page document: every page in order, exactly the text drawn on it', async (t) => {
  const { pdf, pages } = await hundredPageTextPdf();
  const started = performance.now();
  const result = await t.context.extractor.extract(pdf);
  t.log(`100 pages in ${Math.round(performance.now() - started)} ms`);
  t.is(result.pageCount, 100);
  t.is(result.pages.length, 100);
  result.pages.forEach((text, index) => t.is(text, pages[index], `page ${index + 1}`));
});

test('each page carries its own sentence, and only that page', async (t) => {
  const { pages } = await t.context.extractor.extract(await multiPagePdf());
  t.is(pages.length, MULTI_PAGE_CONTENT.length);
  MULTI_PAGE_CONTENT.forEach(([sentence], index) => {
    const carriers = pages.flatMap((text, page) => (flat(text).includes(sentence) ? [page] : []));
    t.deepEqual(carriers, [index], sentence);
  });
});

test('running header and "Page n of N" footer are gone; body text is kept, even a line recurring above the footer', async (t) => {
  const { pages } = await t.context.extractor.extract(await multiPagePdf());
  pages.forEach((text, index) => {
    t.false(text.includes(MULTI_PAGE_HEADER), `page ${index + 1}: ${text}`);
    t.false(text.includes(`Page ${index + 1} of`), `page ${index + 1}: ${text}`);
    // The whole body, down to its last line, "officer." on five pages (right above the footer), in its paragraphs.
    t.is(flat(text), flat(MULTI_PAGE_CONTENT[index].join(' ')));
    t.is(text.split('\n\n').length, 2, 'two paragraphs');
  });
  const { printed } = await textPdfWithLayout(MULTI_PAGE_CONTENT);
  t.true(
    printed.filter((lines) => lines.at(-1) === 'officer.').length >= 3,
    'the fixture still has the recurring line',
  );
});

test('lines that are only a page number are dropped at the top and bottom, even on a two-page document', async (t) => {
  const roman = ['i', 'ii'];
  const pdf = await textPdf([['The preface thanks the harbour staff.'], ['The foreword explains the survey.']], {
    header: (page) => roman[page - 1],
    footer: (page) => `- ${page} -`,
  });
  const { pages } = await t.context.extractor.extract(pdf);
  t.deepEqual(pages, ['The preface thanks the harbour staff.', 'The foreword explains the survey.']);
});

test('page-number lines are recognised in their usual forms, and sentences with numbers are not', (t) => {
  for (const line of [
    '3',
    'Page 3',
    'page 12',
    'p. 7',
    '3 / 10',
    '3/10',
    '3 of 10',
    'Page 3 of 10',
    '- 3 -',
    '— 14 —',
    '[5]',
    'iv',
    'XII',
    'xx',
  ]) {
    t.true(isPageNumber(line), line);
  }
  for (const line of [
    'Page 3 explains how tides work.',
    'Chapter 3',
    '2023 on well-known documents.',
    'xxi',
    'Table 3 of 10 rows',
    '',
  ]) {
    t.false(isPageNumber(line), line);
  }
});

test('two columns: title first, then the whole left column, then the whole right column, paragraphs kept', async (t) => {
  const { pages } = await t.context.extractor.extract(await twoColumnPdf());
  t.is(pages.length, 2);
  // Page 1: the columns share baselines; page 2: the right column is half a line lower.
  for (const text of pages) {
    t.true(text.startsWith(`${TWO_COLUMN_TITLE}\n\n`), text);
    t.deepEqual(text.split('\n\n').map(flat), [TWO_COLUMN_TITLE, ...LEFT_COLUMN, ...RIGHT_COLUMN], text);
  }
});

test('a one-column page with short and long lines is not split into columns', async (t) => {
  const paragraphs = [
    'Short line.',
    'A much longer paragraph that runs across the whole width of the page and wraps onto a second line, so that a gutter could only be found by mistake.',
    'Another short one.',
    'Tides rise twice a day.',
    'Then a last long paragraph that again crosses the middle of the page from the left margin to the right margin before it ends.',
    'End.',
  ];
  const [text] = (await t.context.extractor.extract(await textPdf([paragraphs]))).pages;
  t.deepEqual(text.split('\n\n').map(flat), paragraphs);
});

test('a word hyphenated over a line end is joined; a hyphen before an uppercase letter or a digit stays, with no blank', async (t) => {
  const [text] = (await t.context.extractor.extract(await hyphenationPdf())).pages;
  t.is(HYPHENATION_LINES[0].slice(-7), 'extrac-', 'the fixture breaks "extraction"');
  t.is(
    text,
    'Reliable text extraction continues on the next line. ' +
      'Benchmarks compare it with the state-Of the art parsers listed in table 4. ' +
      'Versions were tested in the years 2019-2023 on well-known documents.',
  );
});

test('a page without text is an empty string between pages that have text', async (t) => {
  const result = await t.context.extractor.extract(await pageWithoutTextPdf());
  t.is(result.pageCount, 3);
  t.deepEqual(result.pages, [PAGE_WITH_TEXT[0], '', PAGE_WITH_TEXT[1]]);
});

test('Japanese in a font with a predefined CMap comes out (pdfjs needs its CMap files for it)', async (t) => {
  t.deepEqual((await t.context.extractor.extract(cjkPdf())).pages, [CJK_TEXT]);
});

test('a scanned PDF (no text on any page) fails with no_text', async (t) => {
  const error = await failureOf(t.context.extractor.extract(await scannedPdf()));
  t.is(error.reason, 'no_text');
  t.is(error.message, 'scanned PDF: no text to index');
});

test('the encrypted fixture is one pdfjs asks a password for', async (t) => {
  // pdfjs on the test's own thread: this checks the fixture, not the extractor.
  const { getDocument } = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const loading = getDocument({ data: await encryptedPdf(), verbosity: 0 });
  const error = await loading.promise.then(
    () => undefined,
    (reason: unknown) => reason as { name: string },
  );
  await loading.destroy();
  t.is(error?.name, 'PasswordException');
});

test('an encrypted PDF fails with encrypted', async (t) => {
  const error = await failureOf(t.context.extractor.extract(await encryptedPdf()));
  t.is(error.reason, 'encrypted');
  t.is(error.message, 'the PDF is password-protected (encrypted); remove the password and upload it again');
});

test('a file that starts like a PDF but cannot be parsed fails with corrupt', async (t) => {
  const bytes = corruptPdf();
  t.is(new TextDecoder().decode(bytes.subarray(0, 5)), '%PDF-');
  const error = await failureOf(t.context.extractor.extract(bytes));
  t.is(error.reason, 'corrupt');
  t.is(error.message, 'the file is not a readable PDF (damaged or not a PDF)');
});

test('a file over maxBytes fails with too_large before it is parsed', async (t) => {
  const extractor = createPdfExtractor({ ...LIMITS, maxBytes: 1024 });
  try {
    // A corrupt file: had it been parsed, the failure would say corrupt.
    const error = await failureOf(extractor.extract(corruptPdf()));
    t.is(error.reason, 'too_large');
    t.is(error.message, 'the PDF is 2.1 KB; the limit is 1 KB');
    t.is(PdfExtractionError.tooLarge(66_280_000, LIMITS.maxBytes).message, 'the PDF is 63.2 MB; the limit is 50 MB');
  } finally {
    await extractor.close();
  }
});

test('more pages than maxPages fails with too_many_pages, saying both numbers', async (t) => {
  const pages: number[] = [];
  const error = await failureOf(t.context.extractor.extract(t.context.big, (done) => pages.push(done)));
  t.is(error.reason, 'too_many_pages');
  t.is(error.message, 'the PDF has 1,234 pages; the limit is 1,000');
  t.deepEqual(pages, [], 'no page was read');
});

test('an extraction over the time limit is stopped with timeout, and the extractor still works afterwards', async (t) => {
  // 2 s: the small PDF after the slow one fits even on a loaded machine (each PDF is a reader process of its own, and
  // the budget starts once it has loaded). The slow one is 2,000 pages sharing one 2 MiB stream, ~8 s a page even on
  // an idle machine: the 1,234-page fixture read within 2 s on an idle one.
  const extractor = createPdfExtractor({ ...LIMITS, maxPages: 5000, timeoutMs: 2_000 });
  try {
    let pagesRead = 0;
    const started = performance.now();
    const slow = sharedStreamPdf(2_000, 2);
    const error = await failureOf(extractor.extract(slow, (done) => (pagesRead = done)));
    t.is(error.reason, 'timeout');
    t.is(error.message, 'the PDF took longer than 2 s to read');
    t.true(pagesRead < 2_000, `stopped after ${pagesRead} pages`);
    // Generous for a loaded 2-core machine (the page count above already shows it did not finish).
    t.true(performance.now() - started < 20_000, 'stopped, not left to finish');
    // The next PDF gets a reader of its own.
    t.deepEqual((await extractor.extract(await pageWithoutTextPdf())).pages, [
      PAGE_WITH_TEXT[0],
      '',
      PAGE_WITH_TEXT[1],
    ]);
  } finally {
    await extractor.close();
  }
});

test('a stream inflating past maxMemoryMb fails with too_large naming the limit, and the extractor still works afterwards', async (t) => {
  const extractor = createPdfExtractor({ ...LIMITS, maxMemoryMb: 128 });
  try {
    // 64 MiB of zeros fits the default budget (the page's text after them comes out); 512 MiB does not fit 128 MB.
    t.deepEqual((await t.context.extractor.extract(await flateBombPdf(64))).pages, ['Text after the zeros.']);
    const error = await failureOf(extractor.extract(await flateBombPdf(512)));
    t.is(error.reason, 'too_large');
    t.is(
      error.message,
      'the PDF needs more than the 128 MB of memory allowed to read it (its compressed contents expand too far)',
    );
    t.deepEqual((await extractor.extract(await pageWithoutTextPdf())).pages, [
      PAGE_WITH_TEXT[0],
      '',
      PAGE_WITH_TEXT[1],
    ]);
  } finally {
    await extractor.close();
  }
});

test('the time budget scales with pages and size: 2,000 pages sharing one 2 MiB stream get 26 s, not the 120 s ceiling', async (t) => {
  t.is(
    extractionBudgetMs(210_000, 100, 120_000),
    7_000,
    'a 100-page, 205 KB document: 5 s + 1 s + 0.4 s, in whole seconds',
  );
  t.is(extractionBudgetMs(50 * 1024 ** 2, 2_000, 120_000), 120_000, 'a 50 MiB document of 2,000 pages: the ceiling');
  t.is(extractionBudgetMs(1_000, 0, 300), 300, 'never over the ceiling');
  const hog = sharedStreamPdf(2_000, 2);
  const expected = extractionBudgetMs(hog.byteLength, 2_000, LIMITS.timeoutMs);
  t.is(expected, 26_000);
  const extractor = createPdfExtractor({ ...LIMITS, maxPages: 2_000 });
  try {
    let pagesRead = 0;
    const error = await failureOf(extractor.extract(hog, (done) => (pagesRead = done)));
    t.is(error.reason, 'timeout');
    t.is(error.message, 'the PDF took longer than 26 s to read');
    t.true(pagesRead < 2_000, `stopped after ${pagesRead} pages`);
  } finally {
    await extractor.close();
  }
});

test('onPage is called with (0, total) once the PDF is open, then (n, total) for every page, in order, before the result', async (t) => {
  const calls: [number, number][] = [];
  // A page slow to read (over 250 ms on a loaded machine) also reports its characters so far: not counted here.
  const result = await t.context.extractor.extract(await multiPagePdf(), (done, total, characters) => {
    if (characters === undefined) calls.push([done, total]);
  });
  const total = MULTI_PAGE_CONTENT.length;
  t.deepEqual(
    calls,
    Array.from({ length: total + 1 }, (_, index) => [index, total]),
  );
  t.is(result.pageCount, total);
});

test('pdfjs is never loaded on the main thread', async (t) => {
  // A fresh process, so nothing else has imported pdfjs. A synchronous module hook (module.registerHooks) records
  // every module the main thread loads, ESM and CommonJS alike; the worker thread loads into its own module graph,
  // which this thread's hook never sees. Two more witnesses: pdfjs sets globalThis.pdfjsLib when evaluated, and in
  // Node polyfills globalThis.DOMMatrix (Node has none). The positive control at the end imports pdfjs here on
  // purpose, to show the hook and the flags would have seen it.
  const script = `
    import module from 'node:module';
    import { isMainThread } from 'node:worker_threads';
    const loaded = [];
    module.registerHooks({ load(url, context, next) { if (isMainThread) loaded.push(url); return next(url, context); } });
    const { createPdfExtractor } = await import(${JSON.stringify(new URL('../service/extraction/pdf.ts', import.meta.url).href)});
    const { hyphenationPdf } = await import(${JSON.stringify(new URL('./fixtures/pdfs.ts', import.meta.url).href)});
    const extractor = createPdfExtractor({ maxBytes: 1e8, maxPages: 100, timeoutMs: 60000, maxMemoryMb: 1024 });
    const { pages } = await extractor.extract(await hyphenationPdf());
    await extractor.close();
    const witnesses = () => ({
      pdfjsModules: loaded.filter((url) => url.includes('pdfjs-dist') || url.includes('pdfWorker') || url.includes('@napi-rs')).length,
      pdfjsLib: typeof globalThis.pdfjsLib,
      DOMMatrix: typeof globalThis.DOMMatrix,
    });
    const during = witnesses();
    const sawExtractor = loaded.some((url) => url.endsWith('/service/extraction/pdf.ts'));
    await import('pdfjs-dist/legacy/build/pdf.mjs');
    console.log(JSON.stringify({ text: pages[0], during, sawExtractor, control: witnesses() }));
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: process.env,
    timeout: 120_000,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  t.true(result.text.startsWith('Reliable text extraction'), 'the extraction ran');
  t.deepEqual(result.during, { pdfjsModules: 0, pdfjsLib: 'undefined', DOMMatrix: 'undefined' });
  t.true(result.sawExtractor, 'the hook sees the modules the main thread loads');
  t.true(result.control.pdfjsModules > 0, 'the hook would have seen pdfjs');
  t.is(result.control.pdfjsLib, 'object', 'the flag would have been set');
});
