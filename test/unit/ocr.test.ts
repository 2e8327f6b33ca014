// OCR of scans (extraction/ocr.ts, pdfOcr.ts): an image upload's text by Tesseract (tesseract.js, offline, the model
// from its npm package), a PDF page without a text layer read in the PDF reader's child process, and the bounds:
// pixels read from the header before decoding, scanned pages counted before the first OCR. No stack is needed.
import anyTest, { type TestFn } from 'ava';
import { closeOcr, DEFAULT_OCR_LIMITS, imageSize, readScannedImage } from '../../service/extraction/ocr.ts';
import { createPdfExtractor, type PdfExtractor } from '../../service/extraction/pdf.ts';
import { DocumentReadError, PdfExtractionError } from '../../service/errors.ts';
import { handbookPage3, repeatedScanPdf, SCANNED_FACT, scannedPdfPage, scannedPng } from '../fixtures/scans.ts';

const test = anyTest as TestFn<{ extractor: PdfExtractor }>;

test.before((t) => {
  t.context.extractor = createPdfExtractor({
    maxBytes: 50 * 1024 ** 2,
    maxPages: 2_000,
    timeoutMs: 120_000,
    maxMemoryMb: 1_024,
    ocr: DEFAULT_OCR_LIMITS,
  });
});

test.after.always(async (t) => {
  await t.context.extractor?.close();
  await closeOcr();
});

test.serial(
  'a committed scan (PNG, 1-bit) is read by OCR: its fact, one section labelled as a scanned page, its confidence',
  async (t) => {
    const progress: string[] = [];
    const read = await readScannedImage(scannedPng(), DEFAULT_OCR_LIMITS, (done, total) =>
      progress.push(`${done}/${total}`),
    );
    t.is(read.sections.length, 1);
    t.is(read.sections[0].label, 'Page 1, scanned');
    t.true(read.sections[0].text.includes(SCANNED_FACT), read.sections[0].text);
    t.true(read.sections[0].text.includes('Notice to members'));
    t.is(read.pages.length, 1);
    t.true(read.pages[0].confidence >= 80, `confidence ${read.pages[0].confidence}`);
    t.deepEqual(progress, ['0/1', '1/1']);
  },
);

test.serial('JPEG and TIFF (Group 4) scans are read too: the pressure-zone page of the bench handbook', async (t) => {
  for (const extension of ['jpg', 'tiff'] as const) {
    const read = await readScannedImage(handbookPage3(extension), DEFAULT_OCR_LIMITS);
    t.true(read.sections[0].text.includes('five pressure zones'), `${extension}: ${read.sections[0].text}`);
    // The table's rows, each a line of its own: Tesseract's full layout analysis (its one-block default dropped them).
    if (extension === 'jpg')
      t.true(read.sections[0].text.includes('\nRiverside Millfield 5.1 bar\n'), read.sections[0].text);
  }
});

test('an image over the pixel limit is refused from its header, naming KBQA_OCR_MAX_PIXELS, before any decoding', async (t) => {
  // A PNG signature and an IHDR claiming 100,000 × 100,000 pixels, and nothing else: decoding it would fail anyway.
  const header = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).copy(header);
  header.write('IHDR', 12, 'ascii');
  header.writeUInt32BE(100_000, 16);
  header.writeUInt32BE(100_000, 20);
  t.deepEqual(imageSize(header), { width: 100_000, height: 100_000 });
  const error = await t.throwsAsync(readScannedImage(header, DEFAULT_OCR_LIMITS), { instanceOf: DocumentReadError });
  t.is(error.message, 'the scan is 100000 × 100000 pixels; the limit is 40,000,000 pixels (KBQA_OCR_MAX_PIXELS)');
  t.deepEqual(imageSize(handbookPage3('tiff')), { width: 1700, height: 2200 });
  t.deepEqual(imageSize(handbookPage3('jpg')), { width: 1700, height: 2200 });
});

test('not an image: refused as unreadable', async (t) => {
  const error = await t.throwsAsync(readScannedImage(Buffer.from('plain text'), DEFAULT_OCR_LIMITS), {
    instanceOf: DocumentReadError,
  });
  t.is(error.reason, 'corrupt');
});

test.serial(
  'a scanned PDF (no text layer) is read by OCR in the reader process: the page text, marked scanned with its confidence',
  async (t) => {
    const read = await t.context.extractor.extract(scannedPdfPage());
    t.is(read.pageCount, 1);
    t.true(read.pages[0].includes(SCANNED_FACT), read.pages[0]);
    t.is(read.scanned.length, 1);
    t.is(read.scanned[0].page, 1);
    t.true(read.scanned[0].confidence >= 80, `confidence ${read.scanned[0].confidence}`);
  },
);

test.serial('a 200-page scan fails at once, before any OCR, naming KBQA_OCR_MAX_PAGES', async (t) => {
  const pdf = await repeatedScanPdf(200);
  t.true(pdf.byteLength < 200_000, `${pdf.byteLength} bytes`);
  const pages: number[] = [];
  const error = await t.throwsAsync(
    t.context.extractor.extract(pdf, (done) => pages.push(done)),
    { instanceOf: PdfExtractionError },
  );
  t.is(error.reason, 'too_many_pages');
  t.is(
    error.message,
    'the PDF has 200 scanned pages (no text layer) to read by OCR; the limit is 50 (KBQA_OCR_MAX_PAGES)',
  );
  // No page was read: the count came first.
  t.deepEqual(pages, [0]);
});
