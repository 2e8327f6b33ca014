// Issue 24 §2: a PDF that is slow to read held the one PDF reader until its last page, so a small PDF queued behind
// it waited for all of it. Now a PDF reads in steps when another waits: the small one is read after one step of the
// big one, and the big one's text is the same as read in one go.
import anyTest, { type TestFn } from 'ava';
import { createPdfExtractor, type PdfExtractor } from '../service/extraction/pdf.ts';
import { slowPagePdf } from './fixtures/hostilePdfs.ts';
import { drawingBehindTextPdf, manualPdf } from './fixtures/pdfs.ts';

const test = anyTest as TestFn<{ extractor: PdfExtractor }>;

const LIMITS = { maxBytes: 50 * 1024 ** 2, maxPages: 2_000, timeoutMs: 120_000, maxMemoryMb: 1_024, stepMs: 300 };

test.before((t) => {
  t.context.extractor = createPdfExtractor(LIMITS, { workers: 1 });
});

test.after.always(async (t) => {
  await t.context.extractor?.close();
});

test('a small PDF queued behind a slow 60-page one is read after one step of it, and the big one reads the same in steps', async (t) => {
  const { extractor } = t.context;
  const big = await drawingBehindTextPdf(60, 100_000);
  const small = (await manualPdf(6)).pdf;
  const finished: string[] = [];
  let bigPagesWhenSmallDone = 0;
  let bigPages = 0;
  const steps: number[] = [];
  let bigStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => (bigStarted = resolve));
  const bigRead = extractor
    .extract(
      big,
      (done) => {
        bigPages = done;
        bigStarted();
      },
      undefined,
      { onStep: (heldMs) => steps.push(heldMs) },
    )
    .then((result) => {
      finished.push('big');
      return result;
    });
  await started;
  const smallRead = extractor.extract(small).then((result) => {
    finished.push('small');
    bigPagesWhenSmallDone = bigPages;
    return result;
  });
  const [bigResult, smallResult] = await Promise.all([bigRead, smallRead]);
  t.log(
    `the big PDF read in ${steps.length} steps (${steps.join(', ')} ms); ${bigPagesWhenSmallDone} of its pages were read when the small one was done`,
  );
  t.deepEqual(finished, ['small', 'big'], 'the small PDF is read before the big one is done');
  t.true(bigPagesWhenSmallDone < 60);
  t.is(smallResult.pages.length, 6);
  // The big one read in one go gives the same text (running headers are found across all pages either way).
  const whole = await extractor.extract(big);
  t.deepEqual(bigResult.pages, whole.pages);
  t.is(bigResult.pageCount, 60);
});

test("a small PDF queued behind one slow page is read before that page ends; the slow page's PDF still ends at its budget", async (t) => {
  // A reader of its own: this test's steps are not those of the others in this file, which run at the same time.
  const extractor = createPdfExtractor(LIMITS, { workers: 1 });
  t.teardown(() => extractor.close());
  // Issue 31 §4: a page drawing one 2 MiB stream 90 times; 4 MiB of padding make its budget 14 s.
  const hog = slowPagePdf(90, 2, 4);
  const small = (await manualPdf(2)).pdf;
  const finished: string[] = [];
  const steps: number[] = [];
  const hogRead = extractor.extract(hog, undefined, undefined, { onStep: (heldMs) => steps.push(heldMs) }).then(
    () => finished.push('hog read'),
    (error: Error) => {
      finished.push('hog failed');
      return error;
    },
  );
  const smallRead = extractor.extract(small).then((result) => {
    finished.push('small');
    return result;
  });
  const [hogOutcome, smallResult] = await Promise.all([hogRead, smallRead]);
  t.log(`the slow PDF held the reader in ${steps.length} steps (${steps.join(', ')} ms)`);
  t.deepEqual(finished, ['small', 'hog failed'], 'the small PDF is read while the slow page is still in progress');
  t.is(smallResult.pages.length, 2);
  t.regex(
    String(hogOutcome),
    /the PDF took longer than \d+ s to read/,
    'its page stopped for the small PDF, the slow one reads on to its budget',
  );
});
