// The readers' bounds against hostile files built in memory (fixtures/hostileDocuments.ts): a DOCX part that inflates 1 MB →
// 1 GiB (refused from its central directory before inflating, or after one chunk when its header lies), a
// billion-laughs and an external-entity XML part (refused: no DTD is read), an XLSX of 1,000,000 rows (refused at
// KBQA_DOC_MAX_ROWS, having read no further), a 500-slide deck (read within bounds, or refused from its slide list
// before any slide). Each refusal names its limit. No stack is needed.
import test from 'ava';
import { DocumentReadError } from '../../service/errors.ts';
import { DEFAULT_DOCUMENT_LIMITS } from '../../service/extraction/documents.ts';
import { readDocument, type DocumentKind } from '../../service/extraction/officeDocuments.ts';
import { deck, docxParts, GiB, laughs, MiB, P, R, rawSheet, S, W, xlsx, xxe } from '../fixtures/hostileDocuments.ts';
import { repeatedDeflate, zipOf } from '../helpers/zipFile.ts';

async function refusal(kind: DocumentKind, bytes: Buffer, limits = DEFAULT_DOCUMENT_LIMITS) {
  const error = await readDocument(kind, bytes, `hostile.${kind}`, limits).then(
    () => null,
    (failure: unknown) => failure,
  );
  if (!(error instanceof DocumentReadError)) throw new Error(`not refused as a DocumentReadError: ${String(error)}`);
  return error;
}

test('a DOCX whose part inflates 1 MB → 1 GiB is refused before inflating, naming the limit', async (t) => {
  const head = `<?xml version="1.0"?><w:document xmlns:w="${W}"><w:body><w:p><w:r><w:t>`;
  const deflated = repeatedDeflate(Buffer.alloc(MiB, 'a'), GiB / MiB);
  t.true(deflated.length < 2 * MiB, `${deflated.length} bytes of deflate`);
  const bomb = zipOf({
    ...docxParts,
    'word/document.xml': { deflated, size: GiB + head.length, crc: 0 },
  });
  const error = await refusal('docx', bomb);
  t.is(error.status, 400);
  t.is(error.reason, 'too_large');
  t.regex(error.message, /word\/document\.xml inflates to 1,024 MB; the limit is 256 MB \(KBQA_DOC_MAX_PART_MB/);
});

test('the same bomb with a header that lies (4 KiB) is stopped after the first chunk, as corrupt', async (t) => {
  const deflated = repeatedDeflate(Buffer.alloc(MiB, 'a'), GiB / MiB);
  const bomb = zipOf({ ...docxParts, 'word/document.xml': { deflated, size: 4096, crc: 0 } });
  const error = await refusal('docx', bomb);
  t.is(error.reason, 'corrupt');
  t.regex(error.message, /word\/document\.xml: too many bytes in the stream\. expected 4096/);
});

test('a part past the ratio limit is refused before inflating, naming it', async (t) => {
  const deflated = repeatedDeflate(Buffer.alloc(MiB, 'a'), 64);
  const bomb = zipOf({ ...docxParts, 'word/document.xml': { deflated, size: 64 * MiB, crc: 0 } });
  const error = await refusal('docx', bomb);
  t.regex(error.message, /word\/document\.xml inflates [\d,]+:1; the limit is 200:1 \(KBQA_DOC_MAX_ZIP_RATIO/);
});

test('all parts together are bounded: a zip over KBQA_DOC_MAX_INFLATED_MB is refused', async (t) => {
  const part = Buffer.alloc(64 * 1024, 'x');
  const parts = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`word/media/part${i}.xml`, part]));
  const error = await refusal('docx', zipOf({ ...docxParts, ...parts }), {
    ...DEFAULT_DOCUMENT_LIMITS,
    maxInflatedBytes: MiB,
    maxZipRatio: 100_000,
  });
  t.regex(error.message, /the zip inflates to [\d.]+ MB; the limit is 1 MB \(KBQA_DOC_MAX_INFLATED_MB/);
});

test('a zip with more entries than KBQA_DOC_MAX_ZIP_ENTRIES is refused before they are listed', async (t) => {
  const parts = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`p${i}.xml`, '<a/>']));
  const error = await refusal('odt', zipOf(parts), { ...DEFAULT_DOCUMENT_LIMITS, maxZipEntries: 10 });
  t.regex(error.message, /holds 11 zip entries; the limit is 10 \(KBQA_DOC_MAX_ZIP_ENTRIES\)/);
});

for (const [name, prolog] of [
  ['billion laughs', laughs],
  ['an external entity (XXE)', xxe],
] as const) {
  const use = name === 'billion laughs' ? '&lol9;' : '&xxe;';
  test(`${name}: the part is refused for its DTD in DOCX, ODT, XLSX and PPTX alike`, async (t) => {
    const cases: [DocumentKind, Buffer, string][] = [
      [
        'docx',
        zipOf({
          ...docxParts,
          'word/document.xml': `${prolog}<w:document xmlns:w="${W}"><w:body><w:p><w:r><w:t>${use}</w:t></w:r></w:p></w:body></w:document>`,
        }),
        'word/document.xml',
      ],
      [
        'odt',
        zipOf({
          'content.xml': `${prolog}<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text><text:p>${use}</text:p></office:text></office:body></office:document-content>`,
        }),
        'content.xml',
      ],
      [
        'xlsx',
        xlsx(
          `${prolog}<worksheet xmlns="${S}"><sheetData><row r="1"><c t="inlineStr"><is><t>${use}</t></is></c></row></sheetData></worksheet>`,
        ),
        'xl/worksheets/sheet1.xml',
      ],
      [
        'pptx',
        zipOf({
          'ppt/presentation.xml': `${prolog}<p:presentation xmlns:p="${P}" xmlns:r="${R}"><p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst></p:presentation>`,
        }),
        'ppt/presentation.xml',
      ],
    ];
    for (const [kind, bytes, part] of cases) {
      const error = await refusal(kind, bytes);
      t.is(error.reason, 'xml_refused', kind);
      t.is(
        error.message,
        `${part} declares a DTD (<!DOCTYPE>); XML entities are refused (entity expansion, external entities)`,
      );
    }
  });
}

test('an XLSX of 1,000,000 rows is refused at KBQA_DOC_MAX_ROWS, having read only that far', async (t) => {
  const sheet = rawSheet(1_000_000);
  t.true(sheet.size > 80 * MiB, `${sheet.size} bytes of sheet XML`);
  const error = await refusal('xlsx', xlsx(sheet), {
    ...DEFAULT_DOCUMENT_LIMITS,
    maxPartBytes: GiB,
    maxZipRatio: 100_000,
  });
  t.is(error.reason, 'too_many_rows');
  t.is(error.message, 'the file has more than 100,000 rows; the limit is 100,000 (KBQA_DOC_MAX_ROWS)');
});

test('an XLSX at the row limit is read whole, 20 rows a section, each labelled with its sheet and rows', async (t) => {
  const document = await readDocument('xlsx', xlsx(rawSheet(10_000)), 'rows.xlsx', {
    ...DEFAULT_DOCUMENT_LIMITS,
    maxRows: 10_000,
    maxZipRatio: 100_000,
  });
  t.is(document.sections.length, 500);
  t.is(document.sections[0].label, 'Sheet Orders, rows 2–21');
  t.is(document.sections.at(-1)!.label, 'Sheet Orders, rows 9982–10001');
  t.true(document.sections[0].text.includes('- Row 2: Item: Crate; Region: North'));
});

test('a CSV over KBQA_DOC_MAX_ROWS is refused naming the limit', async (t) => {
  const csv = Buffer.from(`Item,Region\n${'Crate,North\n'.repeat(1_001)}`);
  const error = await refusal('csv', csv, { ...DEFAULT_DOCUMENT_LIMITS, maxRows: 1_000 });
  t.is(error.message, 'the file has more than 1,000 rows; the limit is 1,000 (KBQA_DOC_MAX_ROWS)');
});

test('a 500-slide deck is read within the default bound (1,000 slides), each slide its own section', async (t) => {
  const document = await readDocument('pptx', deck(500), 'deck.pptx', DEFAULT_DOCUMENT_LIMITS);
  t.is(document.sections.length, 500);
  t.deepEqual(document.sections[499], { label: 'Slide 500', text: '## Slide 500: Topic 500' });
});

test('a 500-slide deck over KBQA_DOC_MAX_SLIDES is refused from its slide list', async (t) => {
  const error = await refusal('pptx', deck(500), { ...DEFAULT_DOCUMENT_LIMITS, maxSlides: 300 });
  t.is(error.reason, 'too_many_slides');
  t.is(error.message, 'the deck has 500 slides; the limit is 300 (KBQA_DOC_MAX_SLIDES)');
});

test('a file that is not a zip is refused as unreadable, not a crash', async (t) => {
  const error = await refusal('docx', Buffer.from('this is not a zip'));
  t.is(error.reason, 'corrupt');
  t.regex(error.message, /^the file is not a readable DOCX \(/);
});
