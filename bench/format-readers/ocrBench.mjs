// OCR comparison on the same page images: Debian's tesseract 5.3.0 CLI (tesseract-ocr + tesseract-ocr-eng, one
// process per page, OMP_THREAD_LIMIT=1) vs tesseract.js 7.0.0 (one worker for all pages, LSTM-only best_int model).
// Accuracy = 1 - word error rate (word-level Levenshtein, lower-cased, punctuation dropped) against truth.txt
// (pdftotext of the source PDF). CPU seconds (user+sys) and peak RSS from /usr/bin/time -v; wall time too (the
// machine is shared, so CPU seconds are the fairer per-core figure). Usage: node ocrBench.mjs DIR truth.txt page...
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [dir, truthFile, ...pages] = process.argv.slice(2);
const words = (s) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);
function wer(ref, hyp) {
  let prev = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i++) {
    const cur = [i];
    for (let j = 1; j <= hyp.length; j++)
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ref[i - 1] === hyp[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[hyp.length] / ref.length;
}
function timed(cmd, args, env) {
  const r = spawnSync('/usr/bin/time', ['-v', cmd, ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    maxBuffer: 1 << 26,
  });
  const num = (re) => Number(re.exec(r.stderr)?.[1] ?? NaN);
  const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(r.stderr);
  return {
    stdout: r.stdout,
    cpuS: num(/User time \(seconds\): ([\d.]+)/) + num(/System time \(seconds\): ([\d.]+)/),
    wallS: wall ? Number(wall[1] ?? 0) * 3600 + Number(wall[2]) * 60 + Number(wall[3]) : NaN,
    rssMiB: num(/Maximum resident set size \(kbytes\): (\d+)/) / 1024,
  };
}
const truth = words(fs.readFileSync(truthFile, 'utf8'));
// CLI: one process per page, tsv for the words' confidences
let cliText = '',
  cliCpu = 0,
  cliWall = 0,
  cliRss = 0;
const cliConf = [];
for (const p of pages) {
  const r = timed('tesseract', [p, 'stdout', '-l', 'eng', 'tsv'], { OMP_THREAD_LIMIT: '1' });
  const rows = r.stdout
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split('\t'));
  const ws = rows.filter((c) => c[0] === '5' && c[11]?.trim());
  cliText += ws.map((c) => c[11]).join(' ') + '\n';
  cliConf.push(ws.reduce((a, c) => a + Number(c[10]), 0) / Math.max(1, ws.length));
  cliCpu += r.cpuS;
  cliWall += r.wallS;
  cliRss = Math.max(cliRss, r.rssMiB);
}
const js = timed(process.execPath, [new URL('./ocrJs.mjs', import.meta.url).pathname, ...pages]);
const lines = js.stdout
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));
const jsPages = lines.filter((l) => l.file);
const jsText = jsPages.map((l) => l.text).join('\n');
const res = {
  pages: pages.length,
  truthWords: truth.length,
  cli: {
    accuracy: 1 - wer(truth, words(cliText)),
    meanWordConfidence: cliConf.map(Math.round),
    cpuSPerPage: cliCpu / pages.length,
    wallSPerPage: cliWall / pages.length,
    peakRssMiB: Math.round(cliRss),
  },
  js: {
    accuracy: 1 - wer(truth, words(jsText)),
    pageConfidence: jsPages.map((l) => l.confidence),
    cpuSPerPage: js.cpuS / pages.length,
    wallSPerPage: js.wallS / pages.length,
    initMs: lines.at(-1).initMs,
    recogMsPerPage: jsPages.reduce((a, l) => a + l.ms, 0) / pages.length,
    peakRssMiB: Math.round(js.rssMiB),
  },
};
fs.writeFileSync(path.join(dir, 'ocr-cli.txt'), cliText);
fs.writeFileSync(path.join(dir, 'ocr-js.txt'), jsText);
console.log(JSON.stringify(res, null, 1));
