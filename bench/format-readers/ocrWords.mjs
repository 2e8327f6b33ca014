// Per-word confidences from tesseract.js 7.0.0 (offline, as ocrJs.mjs): prints the page confidence and the words
// under 60. Usage: node ocrWords.mjs page.png
import { createWorker, OEM } from 'tesseract.js';
import { createRequire } from 'node:module';
import path from 'node:path';
const require = createRequire(import.meta.url);
const dataDir = path.dirname(require.resolve('@tesseract.js-data/eng/package.json'));
const w = await createWorker('eng', OEM.LSTM_ONLY, {
  langPath: path.join(dataDir, '4.0.0_best_int'),
  gzip: true,
  cacheMethod: 'none',
});
const { data } = await w.recognize(process.argv[2], {}, { text: true, blocks: true });
const words = data.blocks.flatMap((b) => b.paragraphs.flatMap((p) => p.lines.flatMap((l) => l.words)));
console.log(
  'page confidence',
  data.confidence,
  'words',
  words.length,
  'below 60:',
  words
    .filter((x) => x.confidence < 60)
    .map((x) => x.text)
    .slice(0, 12)
    .join(' '),
);
await w.terminate();
