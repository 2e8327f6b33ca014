// `npm run soak -- --minutes 10`: a steady mixed load (16 requests in flight: questions and ingests) against 2 API
// processes on a stack of its own, sampled once a minute: 5xx, p50/p99, RSS of every API process, OpenSearch heap
// and segment count. Writes bench/results/soak-<stamp>.{md,json}; exits non-zero on an unexpected 5xx or when a
// process's RSS grew by 10 % or more after the first minute.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createApiKey } from '../service/commands/apiKeys.ts';
import { createUser } from '../service/commands/accounts.ts';
import { openStore } from '../service/store/index.ts';
import { processMemory, startApi } from './apiProcess.ts';
import { callApi, countStatuses, recordsBetween, startMixedLoad } from './mixedLoad.ts';
import { startStackInstance } from './stackInstance.ts';
import { round, summarize } from './stats.ts';
import { workerPids } from './workers.ts';

const ROOT = process.cwd();
const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    processes: { type: 'string', default: '2' },
    heap: { type: 'string', default: '1g' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log('usage: npm run soak [-- --minutes 10 --connections 16 --processes 2 --heap 1g]');
  process.exit(0);
}
const MINUTES = Number(args.minutes);
const CONNECTIONS = Number(args.connections);
const PROCESSES = Number(args.processes);

interface MinuteSample {
  minute: number;
  requests: number;
  queries: number;
  ingests: number;
  server_errors: number;
  no_response: number;
  /** Requests by status (0: no response). */
  statuses: Record<string, number>;
  p50_ms: number;
  p99_ms: number;
  query_p99_ms: number;
  ingest_p99_ms: number;
  rss_mb: Record<string, number>;
  opensearch_heap_mb: number;
  segments: number;
  chunks: number;
}

async function main(): Promise<number> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  console.log(
    `[soak] ${MINUTES} min, ${CONNECTIONS} connections, ${PROCESSES} API processes; starting a stack of its own`,
  );
  const stack = await startStackInstance({ name: 'soak', nodes: 1, heap: args.heap });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KBQA_OPENSEARCH_URL: stack.opensearchUrls.join(','),
    KBQA_MONGODB_URL: stack.mongodbUrl,
    KBQA_API_PROCESSES: String(PROCESSES),
  };
  const api = await startApi({ root: ROOT, env });
  const samples: MinuteSample[] = [];
  try {
    const store = await openStore(stack.mongodbUrl, 5_000);
    await createUser(store, 'soak@example.com', undefined, {});
    const { key } = await createApiKey(store, 'soak@example.com', 'soak');
    await store.close();
    const knowledgeBaseIds: string[] = [];
    for (const name of ['Soak A', 'Soak B', 'Soak C']) {
      const created = await callApi(api.url, key, 'POST', '/api/v1/knowledge-bases', { name }, 30_000);
      if (created.status !== 201) throw new Error(`creating a KB: ${created.status}`);
      knowledgeBaseIds.push((created.body as { knowledge_base: { id: string } }).knowledge_base.id);
    }
    const load = startMixedLoad({
      url: api.url,
      apiKey: key,
      knowledgeBaseIds,
      connections: CONNECTIONS,
      ingestShare: 0.2,
      asyncShare: 0.2,
      requestTimeoutMs: 30_000,
    });
    const began = Date.now();
    for (let minute = 1; minute <= MINUTES; minute += 1) {
      const from = began + (minute - 1) * 60_000;
      const to = began + minute * 60_000;
      await new Promise((resolveWait) => setTimeout(resolveWait, Math.max(0, to - Date.now())));
      const within = recordsBetween(load.records, from, to);
      const pids = {
        primary: api.pid,
        ...Object.fromEntries(workerPids(api.pid).map((pid, index) => [`worker ${index + 1}`, pid])),
      };
      const heap = await stack.opensearch<{ nodes: Record<string, { jvm: { mem: { heap_used_in_bytes: number } } }> }>(
        'GET',
        '/_nodes/stats/jvm',
      );
      const segments = await stack.opensearch<{
        _all: { total: { segments: { count: number } }; primaries: { docs: { count: number } } };
      }>('GET', '/kbqa-chunks/_stats/segments,docs');
      const latencies = within.map((record) => record.ms);
      const sample: MinuteSample = {
        minute,
        requests: within.length,
        queries: within.filter((record) => record.kind === 'query').length,
        ingests: within.filter((record) => record.kind === 'ingest').length,
        server_errors: within.filter((record) => record.status >= 500).length,
        no_response: within.filter((record) => record.status === 0).length,
        statuses: countStatuses(within),
        p50_ms: summarize(latencies).p50_ms,
        p99_ms: summarize(latencies).p99_ms,
        query_p99_ms: summarize(within.filter((record) => record.kind === 'query').map((record) => record.ms)).p99_ms,
        ingest_p99_ms: summarize(within.filter((record) => record.kind === 'ingest').map((record) => record.ms)).p99_ms,
        rss_mb: Object.fromEntries(
          Object.entries(pids).map(([name, pid]) => [
            `${name} (${pid})`,
            round(processMemory(pid)?.rssMb ?? Number.NaN),
          ]),
        ),
        opensearch_heap_mb: round(
          Object.values(heap.nodes).reduce((sum, node) => sum + node.jvm.mem.heap_used_in_bytes, 0) / 1024 ** 2,
        ),
        segments: segments._all.total.segments.count,
        chunks: segments._all.primaries.docs.count,
      };
      samples.push(sample);
      console.log(
        `[soak] minute ${minute}: ${sample.requests} requests (${JSON.stringify(sample.statuses)}), p50 ${sample.p50_ms} ms, p99 ${sample.p99_ms} ms, RSS ${JSON.stringify(sample.rss_mb)}, heap ${sample.opensearch_heap_mb} MiB, ${sample.segments} segments`,
      );
    }
    await load.stop();
    return writeReport(stamp, samples, load.acknowledged.length);
  } finally {
    await api.stop();
    await stack.stop();
  }
}

function writeReport(stamp: string, samples: MinuteSample[], acknowledged: number): number {
  const processes = Object.keys(samples[0]?.rss_mb ?? {});
  const first = samples[0];
  const last = samples[samples.length - 1];
  // Growth after the first minute: the last minute's RSS over the first minute's, per process.
  const growth = processes.map((name) => ({
    name,
    percent: round(((last.rss_mb[name] ?? Number.NaN) / first.rss_mb[name] - 1) * 100),
  }));
  const serverErrors = samples.reduce((sum, sample) => sum + sample.server_errors, 0);
  // Nothing in the load is a bad request: a 4xx is as unexpected as a 5xx.
  const clientErrors = samples.reduce(
    (sum, sample) =>
      sum +
      Object.entries(sample.statuses)
        .filter(([status]) => status.startsWith('4'))
        .reduce((count, [, n]) => count + n, 0),
    0,
  );
  const noResponse = samples.reduce((sum, sample) => sum + sample.no_response, 0);
  const total = samples.reduce((sum, sample) => sum + sample.requests, 0);
  const rssOk = growth.every((entry) => Number.isFinite(entry.percent) && entry.percent < 10);
  const lines = [
    `# Soak run ${stamp}`,
    '',
    `\`npm run soak -- --minutes ${MINUTES}\`: ${CONNECTIONS} requests in flight (80 % questions, 20 % ingests, a fifth of those queued) against ${PROCESSES} API processes on one port, one OpenSearch node (heap ${args.heap}) and FerretDB of its own. ${total} requests, ${acknowledged} documents ingested.`,
    '',
    `- 5xx: **${serverErrors}** (target 0); 4xx: ${clientErrors}; no response: ${noResponse}`,
    `- RSS growth after the first minute (last minute ÷ first − 1): ${growth.map((entry) => `${entry.name} ${entry.percent} %`).join(', ')} (target < 10 %): **${rssOk ? 'PASS' : 'MISS'}**`,
    '',
    `| minute | requests | 5xx | p50 ms | p99 ms | query p99 ms | ingest p99 ms | ${processes.map((name) => `RSS ${name} MiB`).join(' | ')} | OpenSearch heap MiB | segments | chunks |`,
    `|---|---|---|---|---|---|---|${processes.map(() => '---|').join('')}---|---|---|`,
    ...samples.map(
      (sample) =>
        `| ${sample.minute} | ${sample.requests} | ${sample.server_errors} | ${sample.p50_ms} | ${sample.p99_ms} | ${sample.query_p99_ms} | ${sample.ingest_p99_ms} | ${processes.map((name) => sample.rss_mb[name]).join(' | ')} | ${sample.opensearch_heap_mb} | ${sample.segments} | ${sample.chunks} |`,
    ),
    '',
  ];
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  const file = join(ROOT, 'bench', 'results', `soak-${stamp}.md`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  writeFileSync(
    file.replace(/\.md$/, '.json'),
    `${JSON.stringify({ stamp, minutes: MINUTES, connections: CONNECTIONS, processes: PROCESSES, samples, growth, serverErrors, clientErrors, noResponse }, null, 2)}\n`,
  );
  console.log(`[soak] report: ${file}`);
  return serverErrors === 0 && clientErrors === 0 && noResponse === 0 && rssOk ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`[soak] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
