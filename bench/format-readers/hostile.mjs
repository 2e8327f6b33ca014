// Runs one hostile-input case: node hostile.mjs CASE  (prints one JSON line: outcome, ms, rows/bytes seen).
// Driven by runHostile.mjs, which runs each case in its own process under a heap cap, a timeout and /usr/bin/time.
import fs from 'node:fs';
import { openBoundedZip, defaultZipLimits } from './boundedZip.mjs';

const H = (f) => new URL(`./out/hostile/${f}`, import.meta.url);
const file = (f) => fs.readFileSync(H(f));
const cases = {
  // --- zip bombs -------------------------------------------------------------------------------------------
  async 'yauzl-bomb-defaults'() {
    const z = await openBoundedZip(file('bomb.docx'));
    return (await z.read('word/document.xml')).length;
  },
  async 'yauzl-bomb-no-ratio-64MiB'() {
    const z = await openBoundedZip(file('bomb.docx'), {
      ...defaultZipLimits,
      maxRatio: Infinity,
      maxEntryBytes: 2 ** 40,
      maxTotalBytes: 64 * 2 ** 20,
    });
    let n = 0;
    for await (const c of z.stream('word/document.xml')) n += c.length;
    return n;
  },
  async 'yauzl-bomb-lying'() {
    const z = await openBoundedZip(file('bomb-lying.docx'));
    return (await z.read('word/document.xml')).length;
  },
  async 'fflate-unzipSync-bomb-lying'() {
    const { unzipSync } = await import('fflate');
    const out = unzipSync(file('bomb-lying.docx'), { filter: (f) => f.originalSize < 256 * 2 ** 20 });
    return out['word/document.xml']?.length;
  },
  async 'fflate-unzipSync-bomb'() {
    const { unzipSync } = await import('fflate');
    const out = unzipSync(file('bomb.docx'));
    return out['word/document.xml']?.length;
  },
  async 'jszip-bomb'() {
    const JSZip = (await import('jszip')).default;
    const z = await JSZip.loadAsync(file('bomb.docx'));
    return (await z.file('word/document.xml').async('uint8array')).length;
  },
  async 'mammoth-bomb'() {
    const mammoth = (await import('mammoth')).default;
    const r = await mammoth.convertToMarkdown({ buffer: file('bomb.docx') });
    return r.value.length;
  },
  async 'mammoth-bomb-lying'() {
    const mammoth = (await import('mammoth')).default;
    const r = await mammoth.convertToMarkdown({ buffer: file('bomb-lying.docx') });
    return r.value.length;
  },
  async 'officeparser-bomb'() {
    const { OfficeParser } = await import('officeparser');
    const r = await OfficeParser.parseOffice(file('bomb.docx'));
    return JSON.stringify(r).length;
  },
  // --- XML entity expansion and external entities --------------------------------------------------------
  async 'saxes-laughs'() {
    return saxesText(fs.readFileSync(H('laughs.xml'), 'utf8'));
  },
  async 'saxes-xxe'() {
    return saxesText(fs.readFileSync(H('xxe.xml'), 'utf8'));
  },
  async 'fxp-laughs'() {
    const { XMLParser } = await import('fast-xml-parser');
    return JSON.stringify(new XMLParser().parse(fs.readFileSync(H('laughs.xml'), 'utf8'))).length;
  },
  async 'fxp-xxe'() {
    const { XMLParser } = await import('fast-xml-parser');
    return JSON.stringify(new XMLParser().parse(fs.readFileSync(H('xxe.xml'), 'utf8'))).slice(0, 300);
  },
  async 'xmldom-laughs'() {
    const { DOMParser } = await import('@xmldom/xmldom');
    const d = new DOMParser().parseFromString(fs.readFileSync(H('laughs.xml'), 'utf8'), 'text/xml');
    return d.documentElement.textContent.length;
  },
  async 'xmldom-xxe'() {
    const { DOMParser } = await import('@xmldom/xmldom');
    const d = new DOMParser().parseFromString(fs.readFileSync(H('xxe.xml'), 'utf8'), 'text/xml');
    return d.documentElement.textContent;
  },
  async 'mammoth-laughs'() {
    const mammoth = (await import('mammoth')).default;
    const r = await mammoth.convertToMarkdown({ buffer: file('laughs.docx') });
    return r.value.length + ' chars: ' + r.value.slice(0, 80);
  },
  async 'mammoth-xxe'() {
    const mammoth = (await import('mammoth')).default;
    const r = await mammoth.convertToMarkdown({ buffer: file('xxe.docx') });
    return r.value.slice(0, 200);
  },
  async 'officeparser-laughs'() {
    const { OfficeParser } = await import('officeparser');
    const r = await OfficeParser.parseOffice(file('laughs.docx'));
    return JSON.stringify(r).length;
  },
  async 'officeparser-xxe'() {
    const { OfficeParser } = await import('officeparser');
    const r = await OfficeParser.parseOffice(file('xxe.docx'));
    return JSON.stringify(r).slice(0, 300);
  },
  // --- 1,000,000-row XLSX --------------------------------------------------------------------------------
  async 'exceljs-stream-1m'() {
    const ExcelJS = (await import('exceljs')).default;
    const wb = new ExcelJS.stream.xlsx.WorkbookReader(H('rows-1m.xlsx').pathname, {
      sharedStrings: 'cache',
      worksheets: 'emit',
    });
    let rows = 0;
    for await (const ws of wb) for await (const _row of ws) rows++;
    return rows;
  },
  async 'exceljs-stream-stop-10k'() {
    const ExcelJS = (await import('exceljs')).default;
    const wb = new ExcelJS.stream.xlsx.WorkbookReader(H('rows-1m.xlsx').pathname, {
      sharedStrings: 'cache',
      worksheets: 'emit',
    });
    let rows = 0;
    outer: for await (const ws of wb) for await (const _row of ws) if (++rows >= 10_000) break outer;
    return rows;
  },
  async 'exceljs-load-1m'() {
    const ExcelJS = (await import('exceljs')).default;
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(file('rows-1m.xlsx'));
    return wb.worksheets[0].rowCount;
  },
  async 'sheetjs-1m'() {
    const XLSX = (await import('xlsx')).default;
    const wb = XLSX.read(file('rows-1m.xlsx'));
    return XLSX.utils.sheet_to_json(wb.Sheets[wb.SheetNames[0]], { header: 1 }).length;
  },
  async 'sheetjs-1m-sheetRows-10k'() {
    const XLSX = (await import('xlsx')).default;
    const wb = XLSX.read(file('rows-1m.xlsx'), { sheetRows: 10_000 });
    return XLSX.utils.sheet_to_json(wb.Sheets[wb.SheetNames[0]], { header: 1 }).length;
  },
  async 'own-pptx-500-limit-300'() {
    const { pptxToText } = await import('./readPptx.mjs');
    return (
      await pptxToText(fs.readFileSync(new URL('./out/fixtures/deck500.pptx', import.meta.url)), { maxSlides: 300 })
    ).slides;
  },
  async 'own-pptx-500'() {
    const { pptxToText } = await import('./readPptx.mjs');
    return (await pptxToText(fs.readFileSync(new URL('./out/fixtures/deck500.pptx', import.meta.url)))).slides;
  },
  async 'csv-1m-stop-100k'() {
    const { csvToText } = await import('./readCsv.mjs');
    const buf = file('rows-1m.csv'); // written by makeHostile.mjs
    return (await csvToText(buf, { maxRows: 100_000 })).rows + ' rows of ' + (buf.length / 1e6).toFixed(1) + ' MB';
  },
  async 'own-docx-laughs'() {
    const { docxToText } = await import('./readDocx.mjs');
    return (await docxToText(file('laughs.docx'))).text.length;
  },
  async 'own-docx-bomb'() {
    const { docxToText } = await import('./readDocx.mjs');
    return (await docxToText(file('bomb.docx'))).text.length;
  },
  async 'own-docx-bomb-lying'() {
    const { docxToText } = await import('./readDocx.mjs');
    return (await docxToText(file('bomb-lying.docx'))).text.length;
  },
  async 'own-xlsx-1m'() {
    const { readXlsx } = await import('./readXlsx.mjs');
    const r = await readXlsx(file('rows-1m.xlsx'), { maxRows: Infinity, onRow: () => {} });
    return r.rows;
  },
  async 'own-xlsx-stop-100k'() {
    const { readXlsx } = await import('./readXlsx.mjs');
    const r = await readXlsx(file('rows-1m.xlsx'), { maxRows: 100_000, onRow: () => {} });
    return r.rows;
  },
};

async function saxesText(xml) {
  const { SaxesParser } = await import('saxes');
  const p = new SaxesParser({ xmlns: true });
  let text = '';
  p.on('doctype', () => {
    throw new Error('DOCTYPE refused');
  });
  p.on('text', (t) => (text += t));
  p.write(xml).close();
  return text.length + ' chars: ' + text.slice(0, 80);
}

export const caseNames = Object.keys(cases);
const name = process.argv[1] === new URL(import.meta.url).pathname ? process.argv[2] : null;
if (name) {
  const t0 = performance.now();
  try {
    const result = await cases[name]();
    const cpu = process.cpuUsage();
    console.log(
      JSON.stringify({
        case: name,
        outcome: 'finished',
        result,
        ms: Math.round(performance.now() - t0),
        cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      }),
    );
  } catch (e) {
    console.log(
      JSON.stringify({
        case: name,
        outcome: 'error',
        error: String(e.message ?? e).slice(0, 200),
        ms: Math.round(performance.now() - t0),
      }),
    );
  }
}
