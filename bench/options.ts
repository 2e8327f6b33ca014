// `npm run bench`'s options, read from the command line once as the bench starts (--help prints them and exits).
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const root = dirname(dirname(fileURLToPath(import.meta.url)));
export const resultsDir = join(root, 'bench', 'results');

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'ingest-docs': { type: 'string' },
    queries: { type: 'string' },
    'load-amount': { type: 'string' },
    'scale-steps': { type: 'string' },
    'scale-queries': { type: 'string' },
    neighbours: { type: 'string' },
    'auth-seconds': { type: 'string' },
    'model-workers': { type: 'string' },
    'embed-threads': { type: 'string' },
    'refresh-chunks': { type: 'string' },
    'big-doc-mib': { type: 'string' },
    'during-queries': { type: 'string' },
    'group-commit-ms': { type: 'string' },
    dataset: { type: 'string' },
    only: { type: 'string' },
    'pdf-runs': { type: 'string' },
    'pdf-warmup': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});

if (args.help) {
  console.log(`usage: npm run bench -- [--quick] [--ingest-docs N] [--queries N] [--load-amount N]
                       [--scale-steps 10000,100000] [--scale-queries N] [--neighbours N] [--auth-seconds S]
                       [--dataset DIR]
                       [--model-workers N] [--embed-threads N] [--refresh-chunks N] [--big-doc-mib M]
                       [--during-queries N] [--group-commit-ms 250,1000]
                       [--only pdf|cli|ingest|scale|burst|conversation|ocr] [--pdf-runs N] [--pdf-warmup N]
  --quick           60 documents, 100 sequential / 200 concurrent queries, scale 2k → 10k chunks beside 20k of
                    neighbours, 300 chunks per refresh policy, a 0.5 MiB "big" document, 3 s auth run
  --neighbours      chunks of OTHER KBs loaded after the first scale step, in KBs of 50k (default 200000; 0: none):
                    the scale KB's search stage at its first size is measured again beside them, and the steps
                    after it grow the KB beside them
  --model-workers   model worker threads of BOTH the API process and the raw-embedder baseline
                    (default: KBQA_MODEL_WORKERS if set, else one per core)
  --embed-threads   ONNX intra-op threads per worker, both sides (default: KBQA_EMBED_THREADS if set, else 1)
  --refresh-chunks  chunks each refresh policy indexes (default 2000; refresh=wait_for takes ~1 s per 4 documents)
  --group-commit-ms group-commit intervals compared besides KBQA_REFRESH_INTERVAL_MS (default 250; 0: none)
  --big-doc-mib     size of the document ingested while queries run (default 5, capped at KBQA_MAX_CONTENT_BYTES)
  --during-queries  the sequential queries run idle, then over and over during that ingest (default 100)
  --only pdf        only the PDF-vs-text ingest phase (a 100-page text PDF through the web upload against the same
                    text through POST /api/v1/documents); the results file holds just that section
  --only scale      only the scale phase: --ingest-docs documents through the API once (concurrency 4) for the
                    template chunks, the test questions embedded in this process, then the scale steps and neighbours;
                    the results file holds just that section
  --only ocr        only OCR throughput: the committed scans (bench/answers/real/scanned), each PDF through the PDF
                    extractor (Tesseract in its reader child), the handbook's page 3 as PNG, JPEG and TIFF; pages/s
  --only cli        only \`kbqa --help\` and \`kbqa keys create\` as fresh processes, 5 measured runs of each (median)
  --only ingest     only the ingest phase (API at concurrency 1 and 4, OpenSearch's work) and the raw embedder on the
                    same documents; the results file holds just those
  --only burst      only another user's questions (--during-queries of them, one at a time) idle and while one key
                    keeps 24 long questions in flight: --ingest-docs documents into the burst's KB, the first 60 into
                    the other user's; the results file holds just that section
  --only conversation  only /query against a conversation turn: --ingest-docs documents into a KB, then --queries
                    test questions each asked through /query and as the next turn of a conversation, alternately;
                    the results file holds just that section (target: the turn's p50 within 10 ms of /query's)
  --pdf-runs        measured ingests of EACH kind in that phase, alternating (default 5, --quick 3)
  --pdf-warmup      warm-up ingests of each kind before them (default 1; 0: none)`);
  process.exit(0);
}

const positive = (value: string | undefined, fallback: number, name: string): number => {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${name} must be a positive integer`);
  return parsed;
};

const positiveNumber = (value: string | undefined, fallback: number, name: string): number => {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`--${name} must be a positive number`);
  return parsed;
};

export const quick = Boolean(args.quick);
const ONLY_PHASES = ['pdf', 'cli', 'ingest', 'scale', 'burst', 'conversation', 'ocr'] as const;
type OnlyPhase = (typeof ONLY_PHASES)[number];
export const only = (args.only ?? null) as OnlyPhase | null;
if (only !== null && !ONLY_PHASES.includes(only)) throw new Error(`--only takes one of: ${ONLY_PHASES.join(', ')}`);
const nonNegative = (value: string | undefined, fallback: number, name: string): number => {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`--${name} must be an integer ≥ 0`);
  return parsed;
};
export const options = {
  quick,
  dataset: resolve(args.dataset ?? join(root, '..', 'shared', 'datasets', 'scifact')),
  ingestDocs: positive(args['ingest-docs'], quick ? 60 : 800, 'ingest-docs'),
  queries: positive(args.queries, quick ? 100 : 300, 'queries'),
  loadAmount: positive(args['load-amount'], quick ? 200 : 600, 'load-amount'),
  loadConnections: 8,
  scaleSteps: (args['scale-steps'] ?? (quick ? '2000,10000' : '10000,100000'))
    .split(',')
    .map((step) => positive(step.trim(), 0, 'scale-steps')),
  scaleQueries: positive(args['scale-queries'], quick ? 50 : 100, 'scale-queries'),
  neighbours: nonNegative(args.neighbours, quick ? 20_000 : 200_000, 'neighbours'),
  authSeconds: positive(args['auth-seconds'], quick ? 3 : 10, 'auth-seconds'),
  authConnections: 32,
  // The API process and the raw-embedder baseline get the same pool, whatever the environment says.
  modelWorkers: positive(
    args['model-workers'] ?? (Number(process.env.KBQA_MODEL_WORKERS) > 0 ? process.env.KBQA_MODEL_WORKERS : undefined),
    os.availableParallelism(),
    'model-workers',
  ),
  embedThreads: positive(
    args['embed-threads'] ?? (Number(process.env.KBQA_EMBED_THREADS) > 0 ? process.env.KBQA_EMBED_THREADS : undefined),
    1,
    'embed-threads',
  ),
  refreshChunks: positive(args['refresh-chunks'], quick ? 300 : 2000, 'refresh-chunks'),
  bigDocumentMiB: positiveNumber(args['big-doc-mib'], quick ? 0.5 : 5, 'big-doc-mib'),
  groupCommitMs: (args['group-commit-ms'] ?? '250')
    .split(',')
    .map((interval) => Number(interval.trim()))
    .filter((interval) => {
      if (!Number.isInteger(interval) || interval < 0)
        throw new Error('--group-commit-ms takes integers ≥ 0, comma-separated');
      return interval > 0;
    }),
  duringQueries: positive(args['during-queries'], quick ? 50 : 100, 'during-queries'),
  burstConnections: 24,
  ingestConcurrency: 4,
  only,
  pdfRuns: positive(args['pdf-runs'], quick ? 3 : 5, 'pdf-runs'),
  pdfWarmup: nonNegative(args['pdf-warmup'], 1, 'pdf-warmup'),
};
for (let index = 1; index < options.scaleSteps.length; index += 1) {
  if (options.scaleSteps[index] <= options.scaleSteps[index - 1]) throw new Error('--scale-steps must increase');
}
