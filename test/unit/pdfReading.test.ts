// Text as a reader sees it, from PDFs typeset as printed documents are (test/fixtures/readingPdfs.ts), through the
// real extractor (pdfjs in its worker, then pdfLayout.ts): wrapped and justified lines reflowed into paragraphs, a
// word hyphenated across a column break and across a page break, a sentence running over a page break, columns
// found although the title ends inside the gutter, a table's rows and a numbered list's items as units, a heading
// on its own. No stack is needed.
import anyTest, { type TestFn } from 'ava';
import { createPdfExtractor, type PdfExtractor } from '../../service/extraction/pdf.ts';
import { PAGE_BREAK_TEXT, gutterPdf, pageBreakPdf, tableAndListPdf, villageGuidePdf } from '../fixtures/readingPdfs.ts';

const test = anyTest as TestFn<{ extractor: PdfExtractor }>;

test.before((t) => {
  t.context.extractor = createPdfExtractor({
    maxBytes: 50 * 1024 ** 2,
    maxPages: 100,
    timeoutMs: 120_000,
    maxMemoryMb: 1_024,
  });
});

test.after.always(async (t) => {
  await t.context.extractor?.close();
});

test('wrapped, justified lines come out as paragraphs: one line per paragraph, a blank line between them', async (t) => {
  const { pdf, text } = await villageGuidePdf();
  const { pages } = await t.context.extractor.extract(pdf);
  t.is(pages[0], text);
});

test('two columns are found although the title ends inside the gutter and the page number sits in it; a word hyphenated across the column break is joined', async (t) => {
  const { pdf, text } = await gutterPdf();
  const { pages } = await t.context.extractor.extract(pdf);
  t.is(pages[0], text);
});

test('a sentence running over a page break is kept whole on the page it starts on, a hyphenated word across the break joined', async (t) => {
  const { pages } = await t.context.extractor.extract(await pageBreakPdf());
  t.deepEqual(pages, PAGE_BREAK_TEXT);
});

test('a table comes out one row per line with its header row, a numbered list one item per line, a heading on its own', async (t) => {
  const { pdf, text } = await tableAndListPdf();
  const { pages } = await t.context.extractor.extract(pdf);
  t.is(pages[0], text);
});
