// `node bench/groupCommitProbe.ts URL API_KEY [--docs 300] [--offset 1000] [--dataset DIR]`: ingests SciFact
// abstracts through a running API, 4 waited-for documents in flight (as the bench's concurrency-4 run), into a new
// KB, and prints what that cost OpenSearch: its process CPU per chunk (utime + stime from /proc, the stack's
// OpenSearch pid file) and its operation counts (_nodes/stats: refreshes, merges, searches, thread pools). Start the
// API with the KBQA_REFRESH_INTERVAL_MS to measure; alternate settings over several runs (the machine is noisy).
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../service/config.ts';
import { createKbqaClient } from '../service/eval/apiClient.ts';
import { corpusDocument, loadBeirDataset } from '../service/eval/beir.ts';
import { cpuSeconds, stackPids } from './phases.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    docs: { type: 'string', default: '300' },
    offset: { type: 'string', default: '1000' },
    dataset: { type: 'string', default: fileURLToPath(new URL('../../shared/datasets/scifact', import.meta.url)) },
  },
});
if (positionals.length !== 2) {
  process.stderr.write(
    'usage: node bench/groupCommitProbe.ts URL API_KEY [--docs 300] [--offset 1000] [--dataset DIR]\n',
  );
  process.exit(2);
}
const [url, apiKey] = positionals;
const client = createKbqaClient(url, apiKey);
const openSearchUrl = loadConfig().opensearch.url;
const openSearchPid = stackPids(fileURLToPath(new URL('../.local', import.meta.url))).opensearch;
if (openSearchPid === undefined) throw new Error('the OpenSearch pid is unknown (.local/run/opensearch.pid)');
const openSearchCpuMs = () => (cpuSeconds(openSearchPid) ?? Number.NaN) * 1000;

interface NodeStats {
  thread_pool: Record<string, { completed: number }>;
  indices: {
    refresh: { total: number };
    merges: { total: number };
    search: { query_total: number };
  };
}

async function counts(): Promise<Record<string, number>> {
  const response = await fetch(`${openSearchUrl}/_nodes/stats/indices,thread_pool`);
  const stats = Object.values(((await response.json()) as { nodes: Record<string, NodeStats> }).nodes)[0];
  return {
    refreshes: stats.indices.refresh.total,
    merges: stats.indices.merges.total,
    searches: stats.indices.search.query_total,
    ...Object.fromEntries(Object.entries(stats.thread_pool).map(([name, pool]) => [`pool ${name}`, pool.completed])),
  };
}

const documents = (await loadBeirDataset(values.dataset, 'test')).corpus
  .slice(Number(values.offset), Number(values.offset) + Number(values.docs))
  .map(corpusDocument);
const kb = await client.createKnowledgeBase(`group commit probe ${Date.now()}`);
const before = await counts();
const cpuBefore = openSearchCpuMs();
const started = performance.now();
let next = 0;
let chunks = 0;
await Promise.all(
  Array.from({ length: 4 }, async () => {
    while (next < documents.length) {
      const { filename, content } = documents[next++];
      const stored = await client.ingestDocument(kb.id, filename, content);
      chunks += stored.chunks;
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
await new Promise((resolve) => setTimeout(resolve, 3_000)); // the merges the run set off
const after = await counts();
const operations = Object.fromEntries(
  Object.keys(after)
    .map((name) => [name, after[name] - (before[name] ?? 0)])
    .filter(([, delta]) => delta !== 0),
);
console.log(
  JSON.stringify({
    documents: documents.length,
    chunks,
    seconds: Math.round(seconds * 10) / 10,
    opensearch_cpu_ms_per_chunk: Math.round(((openSearchCpuMs() - cpuBefore) / chunks) * 100) / 100,
    operations,
  }),
);
