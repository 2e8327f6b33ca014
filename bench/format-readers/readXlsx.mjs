// XLSX → rows carrying their header names, on boundedZip (yauzl) + safeXml (saxes). Streams each sheet's XML
// in inflated chunks and stops at maxRows (rows counted over all sheets) or maxCells, so a 1,000,000-row sheet
// costs only the rows read. Shared strings are read whole but bounded (maxSharedStrings, and their part's bytes
// by the zip limits).
import { openBoundedZip } from './boundedZip.mjs';
import { parseXml, localName } from './safeXml.mjs';
import { readRels } from './ooxmlRels.mjs';

export class RowLimitError extends Error {}

function colIndex(ref) {
  let n = 0;
  for (const ch of ref) {
    const c = ch.charCodeAt(0);
    if (c < 65 || c > 90) break;
    n = n * 26 + (c - 64);
  }
  return n - 1;
}

/**
 * onRow({ sheet, row, cells: [{ header, value }] }) is called for each data row; the first non-empty row of a
 * sheet is its header. Returns { sheets, rows, stopped }.
 */
export async function readXlsx(
  buffer,
  { maxRows = 100_000, maxSharedStrings = 1_000_000, onRow, onLimit = 'stop' } = {},
) {
  const zip = await openBoundedZip(buffer);
  const wbRels = new Map([...(await readRels(zip, 'xl/workbook.xml'))].map(([id, r]) => [id, r.target]));
  const sheets = [];
  await parseXml(zip.stream('xl/workbook.xml'), {
    open(n) {
      if (localName(n.name) === 'sheet')
        sheets.push({ name: n.attributes.name, path: wbRels.get(n.attributes['r:id']) });
    },
  });
  const shared = [];
  const ssPath = [...wbRels.values()].find((p) => p.endsWith('sharedStrings.xml'));
  if (ssPath && zip.has(ssPath)) {
    let cur = null;
    let inT = false;
    await parseXml(zip.stream(ssPath), {
      open(n) {
        const l = localName(n.name);
        if (l === 'si') cur = '';
        else if (l === 't') inT = true;
        else if (l === 'rPh') inT = false; // phonetic runs are not the text
      },
      close(q) {
        const l = localName(q);
        if (l === 't') inT = false;
        else if (l === 'si') {
          if (shared.length >= maxSharedStrings)
            throw new RowLimitError(`more than ${maxSharedStrings} shared strings`);
          shared.push(cur);
          cur = null;
        }
      },
      text(t) {
        if (inT && cur !== null) cur += t;
      },
    });
  }
  let rows = 0;
  let stopped = false;
  for (const sheet of sheets) {
    if (stopped) break;
    let header = null;
    let cells = [];
    let cell = null;
    let inV = false;
    let rowNumber = 0;
    await parseXml(zip.stream(sheet.path), {
      stopped: () => stopped,
      open(n) {
        const l = localName(n.name);
        if (l === 'row') {
          cells = [];
          rowNumber = Number(n.attributes.r) || rowNumber + 1;
        } else if (l === 'c') cell = { col: colIndex(n.attributes.r ?? ''), type: n.attributes.t, text: '' };
        else if ((l === 'v' || l === 't') && cell) inV = true;
      },
      text(t) {
        if (inV) cell.text += t;
      },
      close(q) {
        const l = localName(q);
        if (l === 'v' || l === 't') inV = false;
        else if (l === 'c' && cell) {
          let value = cell.text;
          if (cell.type === 's') value = shared[Number(value)] ?? '';
          else if (cell.type === 'b') value = value === '1' ? 'TRUE' : 'FALSE';
          if (value !== '') cells[cell.col < 0 ? cells.length : cell.col] = value;
          cell = null;
        } else if (l === 'row' && !stopped) {
          if (cells.length === 0) return;
          if (!header) {
            header = cells;
            return;
          }
          if (rows >= maxRows) {
            if (onLimit === 'throw') throw new RowLimitError(`the workbook has more than ${maxRows} rows`);
            stopped = true;
            return;
          }
          rows++;
          onRow?.({
            sheet: sheet.name,
            row: rowNumber,
            cells: cells.map((value, i) => ({ header: header[i] ?? `Column ${i + 1}`, value })).filter(Boolean),
          });
        }
      },
    });
  }
  zip.close();
  return { sheets: sheets.map((s) => s.name), rows, stopped };
}

/** Markdown-like text: a heading per sheet, one line per row with its header names. */
export async function xlsxToText(buffer, opts) {
  const out = [];
  let lastSheet = null;
  const r = await readXlsx(buffer, {
    ...opts,
    onRow({ sheet, row, cells }) {
      if (sheet !== lastSheet) out.push(`\n## ${sheet}\n`);
      lastSheet = sheet;
      out.push(`- Row ${row}: ` + cells.map((c) => `${c.header}: ${c.value}`).join('; '));
    },
  });
  return { text: out.join('\n').trim(), ...r };
}
