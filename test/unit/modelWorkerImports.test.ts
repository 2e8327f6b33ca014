// What a model worker loads (docs/operations.md, "Memory"): every worker thread pays for each module it imports in
// its own V8 heap. LangChain's text splitter pulled in @langchain/core's documents module, ~34 MB a worker; the
// worker splits with recursiveSplitter.ts instead.
import test from 'ava';
import { fileURLToPath } from 'node:url';
import { runTraced } from '../helpers/moduleTrace.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORKER = new URL('../../service/rag/modelWorker.ts', import.meta.url).href;

test('the model worker module loads neither LangChain text splitters nor its documents module', async (t) => {
  const run = await runTraced(['--input-type=module', '-e', `await import(${JSON.stringify(WORKER)});`], {
    cwd: ROOT,
  });
  t.is(run.code, 0, run.stderr);
  t.true(run.modules.includes(WORKER), 'the worker module itself was traced');
  t.true(
    run.modules.some((url) => url.includes('/node_modules/onnxruntime-node/')),
    'the model runtime is among its modules',
  );
  const unwanted = run.modules.filter(
    (url) =>
      url.includes('/node_modules/@langchain/textsplitters/') || url.includes('/@langchain/core/dist/documents/'),
  );
  t.deepEqual(unwanted, []);
});
