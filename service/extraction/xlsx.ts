// XLSX → rows carrying their header names, in sections labelled with the sheet and the rows ("Sheet rows, rows 2–21"),
// on boundedZip and safeXml. Each sheet's XML is streamed in inflated chunks, so memory holds the rows kept, not the
// sheet; past KBQA_DOC_MAX_ROWS data rows (over all sheets) the workbook is refused and inflating stops there. A
// sheet's first non-empty row is its header. Shared strings are read whole (they precede the sheets), bounded by
// their count and by the zip's per-part limit. Not SheetJS (two advisories unfixed on npm, loads the whole sheet) nor
// exceljs (193 packages): docs/format-readers-research.md. Dates are printed as the serial numbers the XML holds.
import { DocumentReadError } from '../errors.ts';
import { openBoundedZip, type BoundedZip, type ZipLimits } from './boundedZip.ts';
import { RowSections, rowLine, type DocumentLimits, type ExtractedDocument } from './documents.ts';
import { localName, parseXmlPart, readRelationships } from './safeXml.ts';

/** Shared strings a workbook may hold: each is a string kept in memory while the sheets are read. */
export const MAX_SHARED_STRINGS = 1_000_000;

/** "BC12" → 54 (the column's index from 0); -1 when the reference has no letters. */
function columnIndex(reference: string): number {
  let index = 0;
  for (const character of reference) {
    const code = character.charCodeAt(0);
    if (code < 65 || code > 90) break;
    index = index * 26 + (code - 64);
  }
  return index - 1;
}

async function sheetsOf(zip: BoundedZip): Promise<{ sheets: { name: string; part: string }[]; shared?: string }> {
  const relationships = await readRelationships(zip, 'xl/workbook.xml', 'XLSX');
  const sheets: { name: string; part: string }[] = [];
  await parseXmlPart(zip, 'xl/workbook.xml', 'XLSX', {
    open(tag) {
      if (localName(tag.name) !== 'sheet') return;
      const part = relationships.get(tag.attributes['r:id'] ?? '')?.target;
      if (part) sheets.push({ name: tag.attributes.name ?? `Sheet ${sheets.length + 1}`, part });
    },
  });
  const shared = [...relationships.values()].find((entry) => entry.type.endsWith('/sharedStrings'))?.target;
  return { sheets, shared };
}

async function sharedStrings(zip: BoundedZip, part: string | undefined): Promise<string[]> {
  const strings: string[] = [];
  if (!part || !zip.has(part)) return strings;
  let current: string | null = null;
  let inText = false;
  await parseXmlPart(zip, part, 'XLSX', {
    open(tag) {
      const name = localName(tag.name);
      if (name === 'si') current = '';
      else if (name === 't') inText = true;
      else if (name === 'rPh') inText = false; // phonetic runs are not the text
    },
    close(qualified) {
      const name = localName(qualified);
      if (name === 't') inText = false;
      else if (name === 'si') {
        if (strings.length >= MAX_SHARED_STRINGS)
          throw DocumentReadError.corrupt('XLSX', `it holds more than ${MAX_SHARED_STRINGS} shared strings`);
        strings.push(current ?? '');
        current = null;
      }
    },
    text(text) {
      if (inText && current !== null) current += text;
    },
  });
  return strings;
}

/** Reads one sheet's rows into `out`; `counted` is the data rows read so far over the workbook. */
async function readSheet(
  zip: BoundedZip,
  sheet: { name: string; part: string },
  shared: string[],
  out: RowSections,
  counted: { rows: number; max: number },
): Promise<void> {
  let header: string[] | null = null;
  let cells: string[] = [];
  let cell: { column: number; type?: string; text: string } | null = null;
  let inValue = false;
  let rowNumber = 0;
  await parseXmlPart(zip, sheet.part, 'XLSX', {
    open(tag) {
      const name = localName(tag.name);
      if (name === 'row') {
        cells = [];
        rowNumber = Number(tag.attributes.r) || rowNumber + 1;
      } else if (name === 'c') cell = { column: columnIndex(tag.attributes.r ?? ''), type: tag.attributes.t, text: '' };
      else if ((name === 'v' || name === 't') && cell) inValue = true;
    },
    text(text) {
      if (inValue && cell) cell.text += text;
    },
    close(qualified) {
      const name = localName(qualified);
      if (name === 'v' || name === 't') inValue = false;
      else if (name === 'c' && cell) {
        let value = cell.text;
        if (cell.type === 's') value = shared[Number(value)] ?? '';
        else if (cell.type === 'b') value = value === '1' ? 'TRUE' : 'FALSE';
        if (value !== '') cells[cell.column < 0 ? cells.length : cell.column] = value;
        cell = null;
      } else if (name === 'row' && cells.length) {
        if (!header) {
          header = Array.from(cells, (value, index) => value?.trim() || `Column ${index + 1}`);
          return;
        }
        if (++counted.rows > counted.max) throw DocumentReadError.tooManyRows(counted.max);
        out.add(sheet.name, rowNumber, rowLine(header, Array.from(cells), `Row ${rowNumber}: `));
      }
    },
  });
}

export async function readXlsx(
  bytes: Buffer,
  limits: ZipLimits & Pick<DocumentLimits, 'maxRows'>,
): Promise<ExtractedDocument> {
  const zip = await openBoundedZip(bytes, limits, 'XLSX');
  try {
    const { sheets, shared: sharedPart } = await sheetsOf(zip);
    const shared = await sharedStrings(zip, sharedPart);
    const out = new RowSections();
    const counted = { rows: 0, max: limits.maxRows };
    for (const sheet of sheets) if (zip.has(sheet.part)) await readSheet(zip, sheet, shared, out, counted);
    out.flush();
    return { sections: out.sections };
  } finally {
    zip.close();
  }
}
