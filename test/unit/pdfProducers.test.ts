// PDFs as real programs wrote them (test/fixtures/real, each fact and its page in its README.md), read by the real
// extractor (pdfjs in its child process): a tagged page is read from its structure tree (pdfStructure.ts), so printed
// lines join into paragraphs, a table's row carries its header cells' names, a list step stays whole, columns read
// in order, and the untagged or /Artifact running header and footer are not text. Plus the structure module's
// fallbacks on hand-made input. No stack is needed.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import anyTest, { type TestFn } from 'ava';
import { createPdfExtractor, type PdfExtractor } from '../../service/extraction/pdf.ts';
import { structuredLines, type TaggedText } from '../../service/extraction/pdfStructure.ts';
import { splitSentences } from '../../service/text/sentences.ts';

const test = anyTest as TestFn<{ extractor: PdfExtractor }>;
const REAL = path.join(import.meta.dirname, '..', 'fixtures', 'real');

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

/** The fixture's page 1 and its units as answers are cut from it (sentences, list items, table rows, headings). */
async function page1(t: { context: { extractor: PdfExtractor } }, name: string) {
  const { pages } = await t.context.extractor.extract(new Uint8Array(await readFile(path.join(REAL, name))));
  return { text: pages[0], units: splitSentences(pages[0]).map((unit) => unit.text) };
}

const NEWSLETTER = "Brackenfield Orchard · Members' Newsletter";

test('Chromium: a justified sentence printed over three lines is one unit; the margin-box header and footer are not text', async (t) => {
  const { text, units } = await page1(t, 'chromium-paragraph.pdf');
  t.true(
    units.includes(
      'The cold store cost 84,000 pounds to build, and it keeps the fruit at a constant temperature of two degrees Celsius from the first week of October until the end of April, when the last of the late keeping varieties have been sold at the farm gate and at the market in town.',
    ),
    text,
  );
  t.false(text.includes(NEWSLETTER), text);
  t.false(text.includes('page 1'), text);
  t.true(text.startsWith('The cold store\n\n'), text);
});

test('LibreOffice: a paragraph of one span per printed line is one paragraph; the /Artifact header is not text', async (t) => {
  const { text, units } = await page1(t, 'libreoffice-paragraph.pdf');
  t.true(
    units.includes(
      'Each year the grafting team makes about 120 grafts onto MM106 rootstocks, which grow into trees of medium size that can be picked from a short ladder, and the young trees are planted out in the nursery beds along the south hedge in the first week of April.',
    ),
    text,
  );
  t.false(text.includes('Grafting Notes'), text);
  t.is(text.split('\n\n').length, 3, text);
});

test('a table is read by rows from its structure tree: the Cox row answers with its header names', async (t) => {
  const { text, units } = await page1(t, 'table-row.pdf');
  t.true(
    units.includes(
      "Variety: Cox's Orange Pippin; Picking starts: September; Tonnes picked: 187; Price per tonne: 525 pounds",
    ),
    text,
  );
  t.true(
    text.includes('| Variety | Picking starts | Tonnes picked | Price per tonne |\n| --- | --- | --- | --- |\n'),
    text,
  );
  t.false(text.includes(NEWSLETTER), text);
});

test('a numbered list: the wrapped step 3 is one item, the items one per line, no running header', async (t) => {
  const { text, units } = await page1(t, 'numbered-list.pdf');
  t.true(
    units.includes(
      'Pump the juice into the settling tank and chill it to four degrees Celsius within two hours of pressing.',
    ),
    text,
  );
  t.true(text.includes('pulp and cloths on the press bed.\n3. Pump the juice'), text);
  t.false(text.includes(NEWSLETTER), text);
});

test('two columns read left then right, whatever the columns’ baselines, with no running header', async (t) => {
  const { text } = await page1(t, 'two-column.pdf');
  const order = [
    'Volunteering at the orchard',
    '09:30 at the tool shed',
    'first Saturday of December',
    '18 kilograms',
    'Pickers under 16',
  ];
  const places = order.map((fact) => text.indexOf(fact));
  t.true(
    places.every((place) => place >= 0),
    text,
  );
  t.deepEqual(
    [...places].sort((a, b) => a - b),
    places,
    text,
  );
  t.true(text.startsWith('Volunteering at the orchard\n\n'), text);
});

test('a heading across the gutter sits between the columns above it and those below it, on its own', async (t) => {
  const { text, units } = await page1(t, 'heading-gutter.pdf');
  const order = [
    'planted in 1936',
    '25 pounds a year',
    'Opening hours of the orchard shop',
    '10:00 to 16:00',
    '11:00 to 17:00',
  ];
  const places = order.map((fact) => text.indexOf(fact));
  t.true(
    places.every((place) => place >= 0),
    text,
  );
  t.deepEqual(
    [...places].sort((a, b) => a - b),
    places,
    text,
  );
  t.true(units.includes('Opening hours of the orchard shop and the Blossom Café'), text);
  t.false(text.includes(NEWSLETTER), text);
});

const BENCH_REAL = path.join(import.meta.dirname, '..', '..', 'bench', 'answers', 'real');

/** Every page's units of a benchmark document as a real producer wrote it (bench/answers/real). */
async function benchUnits(t: { context: { extractor: PdfExtractor } }, file: string) {
  const { pages } = await t.context.extractor.extract(new Uint8Array(await readFile(path.join(BENCH_REAL, file))));
  return { pages, units: pages.flatMap((page) => splitSentences(page).map((unit) => unit.text)) };
}

test('untagged (pdfTeX, Ghostscript): table cells closer than 2 em are still cut at the header’s columns', async (t) => {
  for (const file of ['pdftex-pdf/council-services.pdf', 'ghostscript-pdf/council-services.pdf']) {
    const { units } = await benchUnits(t, file);
    t.true(units.includes('Permit: Visitor book of 10; Price: 15 pounds; Valid for: 10 days'), file);
    t.true(units.includes('Permit: Business; Price: 240 pounds; Valid for: 12 months'), file);
  }
  const { units } = await benchUnits(t, 'pdftex-pdf/community-transport-guide.pdf');
  t.true(units.includes('Route: S3; Villages served: Fenwick and Ashby Cross; Day: Friday; Departs: 10:05'));
});

test('untagged (pdfTeX): multicol’s narrow gutter is found, so each column reads as its own sentences', async (t) => {
  const { pages, units } = await benchUnits(t, 'pdftex-pdf/community-transport-guide.pdf');
  t.true(
    units.includes(
      'The dial-a-ride service runs from 08:00 to 18:00 on weekdays and from 09:00 to 13:00 on Saturdays.',
    ),
    pages[1],
  );
  t.true(
    units.includes(
      'The shopper buses take members from the villages to Lowmoor market on Wednesdays and to the Ashby Cross supermarket on Fridays.',
    ),
    pages[1],
  );
});

const tagged = (text: string, y: number, mcid?: string, artifact = false): TaggedText => ({
  text,
  x: 72,
  y,
  width: text.length * 5,
  size: 10,
  mcid,
  artifact,
});

test('structuredLines: no tree, or a tree naming under half of the text, leaves the page to the layout', (t) => {
  const items = [tagged('Named text.', 700, 'mc0'), tagged('A long paragraph nobody tagged at all, far longer.', 680)];
  t.is(structuredLines(null, items), null);
  const tree = { role: 'Root', children: [{ role: 'P', children: [{ type: 'content', id: 'mc0' }] }] };
  t.is(structuredLines(tree, items), null);
  const lines = structuredLines(tree, [tagged('Named text.', 700, 'mc0'), tagged('Header', 760, undefined, true)]);
  t.deepEqual(
    lines?.map((line) => line.text),
    ['Named text.'],
  );
});

test('structuredLines: a paragraph’s printed lines joined (a soft hyphen at a line end joins the word), a list item per line, a symbol-font bullet read as •', (t) => {
  const tree = {
    role: 'Root',
    children: [
      {
        role: 'P',
        children: [
          { type: 'content', id: 'a' },
          { type: 'content', id: 'b' },
        ],
      },
      {
        role: 'L',
        children: [
          { role: 'LI', children: [{ type: 'content', id: 'c' }] },
          { role: 'LI', children: [{ type: 'content', id: 'd' }] },
        ],
      },
    ],
  };
  const lines = structuredLines(tree, [
    tagged('The extrac\u00ad', 700, 'a'),
    tagged('tion ran at ten.', 688, 'b'),
    tagged('1. One', 660, 'c'),
    tagged('\uf0b7 Two', 648, 'd'),
  ]);
  t.deepEqual(
    lines?.map((line) => [line.text, line.paragraphStart]),
    [
      ['The extraction ran at ten.', false],
      ['1. One', true],
      ['• Two', false],
    ],
  );
});
