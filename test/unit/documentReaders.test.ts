// The readers of the new kinds on the committed real-producer fixtures (test/fixtures/real/README.md says each fact
// and where): DOCX and ODT headings, a numbered list and a table as rows with header names, each in its section; a
// saved web page's main content without its navigation, footer, banner or scripts; an XLSX and a CSV row with header
// names and its sheet and row; a PPTX fact with its slide number. No stack is needed.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { DEFAULT_DOCUMENT_LIMITS, type ExtractedDocument } from '../../service/extraction/documents.ts';
import { decodeHtml, readHtml } from '../../service/extraction/html.ts';
import { documentKindOf, readDocument } from '../../service/extraction/officeDocuments.ts';

const fixture = (name: string) => readFile(new URL(`../fixtures/real/${name}`, import.meta.url));

async function read(name: string): Promise<ExtractedDocument> {
  const kind = documentKindOf(name);
  if (!kind) throw new Error(`no reader for ${name}`);
  return readDocument(kind, await fixture(name), name, DEFAULT_DOCUMENT_LIMITS);
}

/** The section whose text holds `needle`, or a failure that shows every section. */
function sectionWith(document: ExtractedDocument, needle: string) {
  const found = document.sections.find((section) => section.text.includes(needle));
  if (!found) throw new Error(`no section holds "${needle}":\n${JSON.stringify(document.sections, null, 2)}`);
  return found;
}

for (const name of ['office.docx', 'office.odt']) {
  test(`${name}: headings as #, the numbered list's step, the table's row with header names, each in its section`, async (t) => {
    const document = await read(name);
    const text = document.sections.map((section) => section.text).join('\n\n');
    t.regex(text, /^# Orchard handbook$/m);
    t.regex(text, /^## Tools and the tool shed$/m);
    const tools = sectionWith(document, 'The padlock code is changed every 3 months');
    t.is(tools.label, 'Orchard handbook › Tools and the tool shed');
    const step = sectionWith(document, 'Mix 50 millilitres of seaweed extract into each 10 litres of water.');
    t.is(step.label, 'Orchard handbook › Spraying the trees');
    t.true(step.text.includes('\n2. Mix 50 millilitres of seaweed extract into each 10 litres of water.'));
    const row = sectionWith(document, "Cox's Orange Pippin");
    t.is(row.label, 'Orchard handbook › Rows of the orchard');
    t.true(row.text.includes("- Row: B; Variety: Cox's Orange Pippin; Trees: 31; Planted: 1952"));
    // No section is a heading alone (a heading is never a chunk on its own).
    for (const section of document.sections)
      t.true(section.text.split('\n').some((line) => line && !line.startsWith('#')));
  });
}

test('page.html: the main content only — no navigation, breadcrumbs, aside, footer, cookie banner or script text', async (t) => {
  const document = await read('page.html');
  const text = document.sections.map((section) => section.text).join('\n\n');
  t.true(text.includes('the Saturday nearest to 17 January, starting at 18:00'));
  const tickets = sectionWith(document, 'Tickets cost 8 pounds for adults');
  t.true(tickets.label.endsWith('› Tickets'), tickets.label);
  t.false(text.includes('99 pounds'), 'the script decoy');
  t.false(text.includes('also sold at the village shop'), 'the footer');
  t.false(/related events/i.test(text), 'the aside');
  t.false(/cookie/i.test(text), 'the cookie banner');
  t.false(/skip to/i.test(text), 'the skip link');
});

test('rows.xlsx: a row with its header names, labelled with its sheet and rows; a quoted comma kept', async (t) => {
  const document = await read('rows.xlsx');
  const section = sectionWith(document, "Cox's Orange Pippin");
  t.is(section.label, 'Sheet rows, rows 2–6');
  t.true(
    section.text.includes(
      "- Row 3: Variety: Cox's Orange Pippin; Picking starts: September; Tonnes picked: 187; Price per tonne: 525 pounds",
    ),
  );
  t.true(section.text.includes('- Row 6: Variety: Blenheim Orange, old trees;'));
});

test('rows.csv: the same rows as the XLSX made from it, with the same row numbers', async (t) => {
  const [csv, xlsx] = await Promise.all([read('rows.csv'), read('rows.xlsx')]);
  t.deepEqual(csv, xlsx);
});

test('deck.pptx: one section per slide, labelled with its number; the slide-number placeholder is not text', async (t) => {
  const document = await read('deck.pptx');
  t.deepEqual(
    document.sections.map((section) => section.label),
    ['Slide 1', 'Slide 2', 'Slide 3'],
  );
  const harvest = sectionWith(document, 'The pickers filled 11,600 crates of apples');
  t.is(harvest.label, 'Slide 2');
  t.true(harvest.text.startsWith('## Slide 2: The harvest\n'));
  t.true(harvest.text.includes('- The best day was 27 September, with 640 crates'));
  t.false(/^\d+$/m.test(harvest.text), 'a line holding only the slide number');
});

test('documentKindOf: the kinds by extension, .htm as HTML, anything else none', (t) => {
  t.is(documentKindOf('Report.DOCX'), 'docx');
  t.is(documentKindOf('page.htm'), 'html');
  t.is(documentKindOf('notes.txt'), null);
  t.is(documentKindOf('docx'), null);
});

test('a page Readability finds no article in is read whole, with its navigation, header, footer and scripts dropped', (t) => {
  const page = Buffer.from(
    '<html><head><title>Short</title><script>var decoy = "Tickets cost 99 pounds"</script></head><body>' +
      '<header>Site name</header><nav><a href="/">Home</a></nav><h1>Opening hours</h1>' +
      '<p>The shop opens at 10:00.</p><table><tr><th>Day</th><th>Opens</th></tr><tr><td>Friday</td><td>10:00</td></tr></table>' +
      '<footer>Contact us</footer></body></html>',
  );
  const document = readHtml(page, DEFAULT_DOCUMENT_LIMITS);
  t.deepEqual(document.sections, [
    { label: 'Opening hours', text: '# Opening hours\n\nThe shop opens at 10:00.\n\n- Day: Friday; Opens: 10:00' },
  ]);
});

test("an HTML page's bytes are decoded by its BOM, else its declared charset, else UTF-8, else windows-1252", (t) => {
  const cafe = 'Caf\u00e9';
  t.is(decodeHtml(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(cafe)])), cafe);
  t.is(
    decodeHtml(Buffer.from(`<meta charset="iso-8859-1"><p>${cafe}`, 'latin1')),
    `<meta charset="iso-8859-1"><p>${cafe}`,
  );
  t.is(decodeHtml(Buffer.from(`<p>${cafe}`)), `<p>${cafe}`);
  t.is(decodeHtml(Buffer.from([0x3c, 0x70, 0x3e, 0x93, 0x61, 0x94])), '<p>\u201ca\u201d');
});
