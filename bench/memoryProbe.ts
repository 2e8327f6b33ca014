// The API process's memory under settings compared in one run (issue 26 §6): each variant is an environment for
// the API process; the variants start in turn (interleaved over rounds, so the machine's noise falls on all of
// them), each as a fresh `node service/main.ts`, and go through the same work:
//   start-up (VmHWM once ready) → idle queries → one big document ingested through the API with sequential queries
//   meanwhile, for at most --seconds → VmHWM over that phase, chunks/s, query p50 idle and during.
// It uses its own MongoDB database and chunk alias (dropped / emptied at the end), never the shared `kbqa` ones.
//
//   node bench/memoryProbe.ts --variant base: --variant arenas:MALLOC_ARENA_MAX=2 [--rounds 2] [--doc-mib 1]
//                             [--seconds 120] [--queries 40] [--connections 0] [--out file.json]
// --connections N: before the big ingest, N sequential query clients at once, one pass each over the queries (as
// the full bench's "8 connections" phase precedes its big ingest in the same API process): what a busy API has
// grown to before the ingest counts in its peak too.
// A variant's `@root=<dir>` runs another checkout's service/main.ts (an older commit's tree, say) instead of this one;
// `@node-flags=<flag> <flag>` replaces the Node flags `npm start` passes (service/runtimeFlags.ts; empty: none).
import { parseArgs } from 'node:util';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiKey } from '../service/commands/apiKeys.ts';
import { createUser } from '../service/commands/accounts.ts';
import { loadConfig } from '../service/config.ts';
import { corpusDocument, loadBeirDataset } from '../service/eval/beir.ts';
import { openStore } from '../service/store/index.ts';
import { startApi, type ApiProcess } from './apiProcess.ts';
import { dropDatabase, withDatabase } from './database.ts';
import { bigDocument } from './duringIngest.ts';
import { runSequentialQueries } from './sequential.ts';
import { round } from './stats.ts';

// Not bench/options.ts: it parses the whole bench's command line.
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const { values: args } = parseArgs({
  options: {
    variant: { type: 'string', multiple: true },
    rounds: { type: 'string', default: '1' },
    'doc-mib': { type: 'string', default: '1' },
    seconds: { type: 'string', default: '120' },
    queries: { type: 'string', default: '40' },
    connections: { type: 'string', default: '0' },
    dataset: { type: 'string', default: join(root, '..', '..', 'shared', 'datasets', 'scifact') },
    out: { type: 'string' },
  },
});

/** "name:KEY=value,KEY=value" → a name and the environment it adds. */
function parseVariant(spec: string): {
  name: string;
  root: string;
  nodeFlags?: string[];
  env: Record<string, string>;
} {
  const colon = spec.indexOf(':');
  const name = colon < 0 ? spec : spec.slice(0, colon);
  const env: Record<string, string> = {};
  for (const pair of (colon < 0 ? '' : spec.slice(colon + 1)).split(',').filter(Boolean)) {
    const equals = pair.indexOf('=');
    env[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  const { '@root': variantRoot, '@node-flags': nodeFlags, ...rest } = env;
  return {
    name,
    root: variantRoot ?? root,
    nodeFlags: nodeFlags === undefined ? undefined : nodeFlags.split(' ').filter(Boolean),
    env: rest,
  };
}

const variants = (args.variant ?? ['default:']).map(parseVariant);
const rounds = Number(args.rounds);
const log = (message: string) => console.log(`[memory ${new Date().toISOString().slice(11, 19)}] ${message}`);

const configured = loadConfig();
const databaseName = `kbqa_memory_probe_${Date.now()}`;
const mongoUrl = withDatabase(configured.mongodb.url, databaseName);
const alias = process.env.KBQA_CHUNKS_ALIAS ?? 'kbqa-chunks-memory-probe';
const store = await openStore(mongoUrl, configured.mongodb.timeoutMs);
const email = `memory-${Date.now()}@bench.kbqa.test`;
await createUser(store, email, undefined, {});
const { key: apiKey } = await createApiKey(store, email, 'memory probe');

const dataset = await loadBeirDataset(args.dataset, 'test');
const corpus = dataset.corpus.map(corpusDocument).filter((document) => document.content.trim().length > 0);
const big = bigDocument(
  corpus.map((document) => document.content),
  Number(args['doc-mib']) * 1024 * 1024,
);
const bodies = [...dataset.queries.values()].slice(0, Number(args.queries)).map((query) => ({ query }));

async function call<T>(api: ApiProcess, method: string, path: string, body?: unknown, prefer?: string) {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(prefer ? { prefer } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 200)}`);
  return (text ? JSON.parse(text) : {}) as T;
}

interface Row {
  variant: string;
  round: number;
  startup_peak_mb: number;
  idle_rss_mb: number;
  /** VmRSS as the big document is posted (after the idle queries and the --connections load). */
  rss_before_ingest_mb: number;
  ingest_peak_mb: number;
  /** The document's status at the end: `ready` when the whole ingest ran within --seconds. */
  status: string;
  /** When the highest VmRSS sample was taken: seconds after the POST / chunks embedded by then. */
  highest_sample_at: string;
  ingest_seconds: number;
  chunks: number;
  /** Chunks embedded per second after the split (the first progress report to the end). */
  embedded_per_s: number;
  query_p50_idle_ms: number;
  query_p50_during_ms: number;
}

async function measure(variant: ReturnType<typeof parseVariant>, roundNumber: number): Promise<Row> {
  const env = { ...process.env, KBQA_MONGODB_URL: mongoUrl, KBQA_CHUNKS_ALIAS: alias, ...variant.env };
  const api = await startApi({ root: variant.root, env, nodeFlags: variant.nodeFlags });
  try {
    const startupPeak = api.memory()?.peakMb ?? Number.NaN;
    const kb = await call<{ knowledge_base: { id: string } }>(api, 'POST', '/api/v1/knowledge-bases', {
      name: `memory ${variant.name} ${roundNumber}`,
    });
    const kbId = kb.knowledge_base.id;
    for (const document of corpus.slice(0, 10))
      await call(api, 'POST', '/api/v1/documents', { kb_id: kbId, ...document });
    const queryBodies = bodies.map((body) => ({ ...body, knowledge_base_ids: [kbId] }));
    const idle = await runSequentialQueries({ url: api.url, apiKey, bodies: queryBodies, warmup: 5 });
    const idleRss = api.memory()?.rssMb ?? Number.NaN;
    const connections = Number(args.connections);
    if (connections > 0) {
      await Promise.all(
        Array.from({ length: connections }, (_, client) =>
          runSequentialQueries({
            url: api.url,
            apiKey,
            bodies: [...queryBodies.slice(client), ...queryBodies.slice(0, client)],
            warmup: 0,
          }),
        ),
      );
    }
    const rssBeforeIngest = api.memory()?.rssMb ?? Number.NaN;
    api.resetPeak();
    const started = performance.now();
    const created = await call<{ document: { id: string } }>(
      api,
      'POST',
      '/api/v1/documents',
      { kb_id: kbId, filename: big.filename, content: big.content },
      'respond-async',
    );
    let status = 'queued';
    let chunks = 0;
    // VmRSS (MB) / chunks embedded, as the ingest goes: which step the peak belongs to.
    const trace: string[] = [];
    const highest = { rssMb: 0, at: '' };
    // Embedding throughput once the split is done: from the first progress seen to the last.
    const firstProgress = { at: 0, chunks: 0 };
    const deadline = started + Number(args.seconds) * 1000;
    const poller = (async () => {
      while ((status === 'queued' || status === 'processing') && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        const seen = await call<{ document: { status: string; chunks?: number; progress?: { embedded: number } } }>(
          api,
          'GET',
          `/api/v1/documents/${created.document.id}`,
        );
        status = seen.document.status;
        chunks = seen.document.progress?.embedded ?? seen.document.chunks ?? chunks;
        if (firstProgress.at === 0 && chunks > 0) Object.assign(firstProgress, { at: performance.now(), chunks });
        const elapsed = Math.round((performance.now() - started) / 1000);
        const rssMb = api.memory()?.rssMb ?? 0;
        if (rssMb > highest.rssMb) Object.assign(highest, { rssMb, at: `${elapsed}s/${chunks}` });
        trace.push(`${elapsed}s:${Math.round(rssMb)}/${chunks}`);
      }
    })();
    let polling = true;
    void poller.finally(() => (polling = false));
    const during = await runSequentialQueries({
      url: api.url,
      apiKey,
      bodies: queryBodies,
      warmup: 0,
      continueWhile: () => polling,
    });
    await poller;
    const seconds = (performance.now() - started) / 1000;
    const ingestPeak = api.memory()?.peakMb ?? Number.NaN;
    log(`${variant.name}: rss/chunks ${trace.filter((_, index) => index % 10 === 0).join(' ')}`);
    await call(api, 'DELETE', `/api/v1/knowledge-bases/${kbId}`).catch(() => undefined);
    return {
      variant: variant.name,
      round: roundNumber,
      startup_peak_mb: round(startupPeak),
      idle_rss_mb: round(idleRss),
      rss_before_ingest_mb: round(rssBeforeIngest),
      ingest_peak_mb: round(ingestPeak),
      status,
      highest_sample_at: highest.at,
      ingest_seconds: round(seconds),
      chunks,
      embedded_per_s: firstProgress.at
        ? round((chunks - firstProgress.chunks) / ((started + seconds * 1000 - firstProgress.at) / 1000), 2)
        : 0,
      query_p50_idle_ms: idle.latency.p50_ms,
      query_p50_during_ms: during.latency.p50_ms,
    };
  } finally {
    await api.stop();
  }
}

const rows: Row[] = [];
try {
  log(`${variants.length} variants × ${rounds} rounds; a ${big.bytes}-byte document for at most ${args.seconds} s`);
  for (let roundNumber = 1; roundNumber <= rounds; roundNumber += 1) {
    const order = roundNumber % 2 === 1 ? variants : [...variants].reverse();
    for (const variant of order) {
      const row = await measure(variant, roundNumber);
      rows.push(row);
      log(JSON.stringify(row));
    }
  }
} finally {
  await store.close();
  await dropDatabase(mongoUrl, configured.mongodb.timeoutMs).catch(() => undefined);
}

const header = Object.keys(rows[0] ?? {});
const table = [
  `| ${header.join(' | ')} |`,
  `|${header.map(() => '---').join('|')}|`,
  ...rows.map((row) => `| ${Object.values(row).join(' | ')} |`),
].join('\n');
console.log(table);
if (args.out) writeFileSync(args.out, `${JSON.stringify({ args, big: { bytes: big.bytes }, rows }, null, 2)}\n`);
