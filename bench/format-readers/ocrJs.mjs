// tesseract.js 7.0.0 OCR of the page images given, fully offline: the wasm core comes from the tesseract.js-core
// package (required from node_modules by the worker), the model from @tesseract.js-data/eng (langPath set to its
// folder, gzip); cacheMethod 'none' so nothing is written to the working directory. One worker = one thread.
// Usage: node ocrJs.mjs [--legacy] page.png ...   prints one JSON line per page, then {init, total} timings.
import { createWorker, OEM } from 'tesseract.js';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const legacy = process.argv.includes('--legacy');
const dataDir = path.dirname(require.resolve('@tesseract.js-data/eng/package.json'));
const t0 = performance.now();
const worker = await createWorker('eng', legacy ? OEM.DEFAULT : OEM.LSTM_ONLY, {
  langPath: path.join(dataDir, legacy ? '4.0.0' : '4.0.0_best_int'),
  gzip: true,
  cacheMethod: 'none',
});
const init = performance.now() - t0;
for (const file of process.argv.slice(2).filter((a) => !a.startsWith('--'))) {
  const s = performance.now();
  const { data } = await worker.recognize(file);
  console.log(
    JSON.stringify({ file, ms: Math.round(performance.now() - s), confidence: data.confidence, text: data.text }),
  );
}
await worker.terminate();
console.log(JSON.stringify({ initMs: Math.round(init), totalMs: Math.round(performance.now() - t0) }));
