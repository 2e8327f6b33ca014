// Reader throughput: node readBench.mjs [case ...] runs each case in its own process (heap capped at 512 MiB,
// niced, peak RSS from /usr/bin/time -v), 3 timed runs after one warm-up, and prints
// { case, inputMB, bestMs, MBps, outChars, peakRssMiB }. Fixtures: out/fixtures (makeFixtures.sh).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const F = (f) => new URL(`./out/fixtures/${f}`, import.meta.url);
const read = (f) => fs.readFileSync(F(f));
const cases = {
  'docx-mammoth-bounded large.docx': async () =>
    (await import('./readDocx.mjs')).docxToText(read('large.docx')).then((r) => r.text),
  'docx-mammoth-raw large.docx': async () => {
    const m = (await import('mammoth')).default;
    const { htmlToText } = await import('./htmlToText.mjs');
    return htmlToText((await m.convertToHtml({ buffer: read('large.docx') })).value);
  },
  'docx-officeparser large.docx': async () => {
    const { OfficeParser } = await import('officeparser');
    return (await (await OfficeParser.parseOffice(read('large.docx'))).to('md')).value;
  },
  'docx-mammoth-bounded lo/small.docx': async () =>
    (await import('./readDocx.mjs')).docxToText(read('lo/small.docx')).then((r) => r.text),
  'odt-own large.odt': async () => (await import('./readOdt.mjs')).odtToText(read('large.odt')).then((r) => r.text),
  'odt-own lo/small.odt': async () =>
    (await import('./readOdt.mjs')).odtToText(read('lo/small.odt')).then((r) => r.text),
  'odt-officeparser large.odt': async () => {
    const { OfficeParser } = await import('officeparser');
    return (await (await OfficeParser.parseOffice(read('large.odt'))).to('md')).value;
  },
  'html-readability large.html': async () =>
    (await import('./readHtml.mjs')).htmlMainText(read('large.html').toString('utf8')).text,
  'html-htmlparser2-only large.html': async () =>
    (await import('./htmlToText.mjs')).htmlToText(read('large.html').toString('utf8'), { skipChrome: true }),
  'pptx-own deck500.pptx': async () =>
    (await import('./readPptx.mjs')).pptxToText(read('deck500.pptx')).then((r) => r.text),
  'pptx-officeparser deck500.pptx': async () => {
    const { OfficeParser } = await import('officeparser');
    return (await (await OfficeParser.parseOffice(read('deck500.pptx'))).to('md')).value;
  },
  'pptx-own lo/small.pptx': async () =>
    (await import('./readPptx.mjs')).pptxToText(read('lo/small.pptx')).then((r) => r.text),
  'xlsx-own lo/varieties.xlsx': async () =>
    (await import('./readXlsx.mjs')).xlsxToText(read('lo/varieties.xlsx')).then((r) => r.text),
  'xlsx-exceljs lo/varieties.xlsx': async () => {
    const ExcelJS = (await import('exceljs')).default;
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(read('lo/varieties.xlsx'));
    let n = 0;
    wb.eachSheet((ws) => ws.eachRow((r) => (n += JSON.stringify(r.values).length)));
    return 'x'.repeat(n);
  },
  'xlsx-sheetjs lo/varieties.xlsx': async () => {
    const XLSX = (await import('xlsx')).default;
    const wb = XLSX.read(read('lo/varieties.xlsx'));
    return JSON.stringify(XLSX.utils.sheet_to_json(wb.Sheets[wb.SheetNames[0]]));
  },
  'md-read large.md (baseline)': async () => read('large.md').toString('utf8'),
  'csv-parse varieties.csv': async () =>
    (await import('./readCsv.mjs')).csvToText(read('varieties.csv')).then((r) => r.text),
};
const inputOf = (name) => name.split(' ')[1];

const only =
  process.argv[1] === new URL(import.meta.url).pathname && process.argv[2] === '--child' ? process.argv[3] : null;
if (only) {
  await cases[only]();
  const times = [];
  const cpus = [];
  let out = '';
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const c = process.cpuUsage();
    out = await cases[only]();
    times.push(performance.now() - t);
    const d = process.cpuUsage(c);
    cpus.push((d.user + d.system) / 1000);
  }
  const mb = fs.statSync(F(inputOf(only))).size / 1e6;
  const best = Math.min(...times);
  const cpu = Math.min(...cpus);
  // cpuMs: CPU time of the best run (user+sys; the fair figure on a shared machine); text MB per CPU second too
  console.log(
    JSON.stringify({
      case: only,
      inputMB: +mb.toFixed(3),
      bestWallMs: Math.round(best),
      cpuMs: Math.round(cpu),
      inputMBperCpuS: +(mb / (cpu / 1000)).toFixed(2),
      textMBperCpuS: +(out.length / 1e6 / (cpu / 1000)).toFixed(2),
      outChars: out.length,
    }),
  );
} else if (process.argv[1] === new URL(import.meta.url).pathname) {
  for (const name of process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(cases)) {
    const r = spawnSync(
      '/usr/bin/time',
      ['-v', 'nice', process.execPath, '--max-old-space-size=512', new URL(import.meta.url).pathname, '--child', name],
      { encoding: 'utf8', timeout: 300_000 },
    );
    const line = r.stdout
      .trim()
      .split('\n')
      .find((l) => l.startsWith('{'));
    const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr);
    console.log(
      JSON.stringify({
        ...(line
          ? JSON.parse(line)
          : {
              case: name,
              failed: r.stderr
                .split('\n')
                .filter((l) => /Error/.test(l))
                .slice(0, 2)
                .join(' | '),
            }),
        peakRssMiB: rss ? Math.round(rss[1] / 1024) : null,
      }),
    );
  }
}
