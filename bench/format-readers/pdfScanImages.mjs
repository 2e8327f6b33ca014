// OCR input from a scanned PDF without rendering (no canvas): pdfjs-dist 6.5.438 (the project's own) decodes each
// page's image XObjects while building its operator list; the largest image of a page is written as a PGM (grey,
// 8 bit: a 15-byte header and the pixels), which both Tesseracts read. Usage: node pdfScanImages.mjs file.pdf outdir
// PDFJS=another pdfjs build to use (default: pdfjs-dist from package.json, the version kbqa uses).
import fs from 'node:fs';
const pdfjsPath = process.env.PDFJS ?? 'pdfjs-dist/legacy/build/pdf.mjs';
const { getDocument, OPS } = await import(pdfjsPath);
const [file, outDir] = process.argv.slice(2);
fs.mkdirSync(outDir, { recursive: true });
const t0 = performance.now();
const doc = await getDocument({
  data: new Uint8Array(fs.readFileSync(file)),
  useSystemFonts: false,
  disableFontFace: true,
}).promise;
for (let p = 1; p <= doc.numPages; p++) {
  const page = await doc.getPage(p);
  const ops = await page.getOperatorList();
  let best = null;
  for (let i = 0; i < ops.fnArray.length; i++) {
    if (ops.fnArray[i] !== OPS.paintImageXObject) continue;
    const name = ops.argsArray[i][0];
    const img = await new Promise((r) => (name.startsWith('g_') ? page.commonObjs : page.objs).get(name, r));
    if (img && (!best || img.width * img.height > best.width * best.height)) best = img;
  }
  if (!best) continue;
  const { width: w, height: h, kind, data } = best;
  const grey = Buffer.alloc(w * h);
  const bpp = kind === 3 ? 4 : kind === 2 ? 3 : 0;
  if (bpp)
    for (let j = 0; j < w * h; j++)
      grey[j] = (data[j * bpp] * 77 + data[j * bpp + 1] * 150 + data[j * bpp + 2] * 29) >> 8;
  else {
    const row = (w + 7) >> 3; // 1 bpp
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) grey[y * w + x] = data[y * row + (x >> 3)] & (128 >> (x & 7)) ? 255 : 0;
  }
  fs.writeFileSync(`${outDir}/page-${p}.pgm`, Buffer.concat([Buffer.from(`P5\n${w} ${h}\n255\n`), grey]));
  console.log(JSON.stringify({ page: p, width: w, height: h, kind }));
}
console.log(JSON.stringify({ ms: Math.round(performance.now() - t0) }));
