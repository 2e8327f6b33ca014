// `npm run resilience`: faults under a steady mixed load, against a stack of its own (a 3-node OpenSearch cluster,
// a FerretDB, 2 API processes on one port), asserting what operators judge kbqa by on a bad day. Writes
// bench/results/resilience-<stamp>.{md,json} and exits non-zero when an assertion fails.
//
// The faults, one after the other, each with its window of requests:
//   1. kill -9 an OpenSearch data node (not the cluster-manager); restart it; wait for green.
//   2. kill -9 the elected cluster-manager; restart it; wait for green.
//   3. FerretDB killed for 10 s.
//   4. kill -9 the API process holding ingestion jobs.
//   5. a read-only block on the chunk index (what a full disk causes), lifted after a while.
// A quarter of the questions are conversation turns. Then every acknowledged document must become ready and answer a
// question about its own sentence, every turn answered 200 must be readable in its conversation, the cluster must be
// green and `kbqa doctor` clean.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MongoClient } from 'mongodb';
import { createApiKey } from '../service/commands/apiKeys.ts';
import { createUser } from '../service/commands/accounts.ts';
import { CHUNKS_ALIAS } from '../service/search/assets.ts';
import { openStore } from '../service/store/index.ts';
import { startApi, type ApiProcess } from './apiProcess.ts';
import {
  callApi,
  countStatuses,
  recordsBetween,
  startMixedLoad,
  type AcknowledgedDocument,
  type AnsweredTurn,
  type MixedLoad,
  type RequestRecord,
} from './mixedLoad.ts';
import { startStackInstance } from './stackInstance.ts';
import { round, summarize } from './stats.ts';
import { workerPids } from './workers.ts';

const ROOT = process.cwd();
const sleep = (ms: number) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

const { values: args } = parseArgs({
  options: {
    connections: { type: 'string', default: '8' },
    'baseline-seconds': { type: 'string', default: '40' },
    'node-down-seconds': { type: 'string', default: '20' },
    'ferretdb-down-seconds': { type: 'string', default: '10' },
    'block-seconds': { type: 'string', default: '20' },
    heap: { type: 'string', default: '512m' },
    'keep-stack': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log(
    'usage: npm run resilience [-- --connections 8 --baseline-seconds 40 --node-down-seconds 20 --ferretdb-down-seconds 10 --block-seconds 20 --heap 512m --keep-stack]',
  );
  process.exit(0);
}

const CONNECTIONS = Number(args.connections);
const REQUEST_TIMEOUT_MS = 30_000;
/** The API's own limits: a request the store or the search engine cannot serve is answered within about these. */
const MONGODB_TIMEOUT_MS = 5_000;
const OPENSEARCH_TIMEOUT_MS = 10_000;

interface Assertion {
  fault: string;
  what: string;
  passed: boolean;
  detail: string;
}

interface Window {
  fault: string;
  from: number;
  to: number;
  notes: string[];
}

const assertions: Assertion[] = [];
const windows: Window[] = [];

function check(fault: string, what: string, passed: boolean, detail: string): void {
  assertions.push({ fault, what, passed, detail });
  console.log(`[resilience] ${passed ? 'PASS' : 'FAIL'} ${fault}: ${what} — ${detail}`);
}

function log(message: string): void {
  console.log(`[resilience] ${new Date().toISOString().slice(11, 19)} ${message}`);
}

function describeStatuses(records: RequestRecord[]): string {
  const codes = new Map(records.filter((record) => record.status === 0).map((record) => [record.code, true]));
  const entries = Object.entries(countStatuses(records)).map(([status, count]) =>
    status === '0' ? `no response (${[...codes.keys()].join(', ')}): ${count}` : `${status}: ${count}`,
  );
  return entries.join(', ') || 'none';
}

/** How long until `probe` holds (polled every 500 ms), or null when it did not within the time. */
async function within(timeoutMs: number, probe: () => Promise<boolean>): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await probe().catch(() => false)) return Date.now() - started;
    await sleep(500);
  }
  return null;
}

/** For what the run cannot go on without: throws when `probe` does not hold in time. */
async function waitFor(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<number> {
  const took = await within(timeoutMs, probe);
  if (took === null) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
  return took;
}

async function main(): Promise<number> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const began = Date.now();
  log('starting a stack of its own: 3 OpenSearch nodes, FerretDB');
  const stack = await startStackInstance({ name: 'resilience', nodes: 3, heap: args.heap });
  let api: ApiProcess | null = null;
  let load: MixedLoad | null = null;
  try {
    const apiEnv: NodeJS.ProcessEnv = {
      ...process.env,
      KBQA_OPENSEARCH_URL: stack.opensearchUrls.join(','),
      KBQA_OPENSEARCH_NODES: '3',
      KBQA_MONGODB_URL: stack.mongodbUrl,
      KBQA_API_PROCESSES: '2',
      KBQA_MODEL_WORKERS: '1',
      KBQA_JOB_LEASE_MS: '10000',
      KBQA_MONGODB_TIMEOUT_MS: String(MONGODB_TIMEOUT_MS),
      KBQA_OPENSEARCH_TIMEOUT_MS: String(OPENSEARCH_TIMEOUT_MS),
    };
    log(`stack ready in ${round((Date.now() - began) / 1000)} s; starting the API with 2 processes`);
    api = await startApi({ root: ROOT, env: apiEnv });
    const workersAtStart = workerPids(api.pid);
    log(`API on ${api.url}: primary ${api.pid}, workers ${workersAtStart.join(', ')}`);

    const store = await openStore(stack.mongodbUrl, MONGODB_TIMEOUT_MS);
    await createUser(store, 'resilience@example.com', undefined, {});
    const { key } = await createApiKey(store, 'resilience@example.com', 'resilience');
    await store.close();
    const knowledgeBaseIds: string[] = [];
    for (const name of ['Harbour records A', 'Harbour records B']) {
      const created = await callApi(api.url, key, 'POST', '/api/v1/knowledge-bases', { name }, REQUEST_TIMEOUT_MS);
      if (created.status !== 201) throw new Error(`creating a KB: ${created.status} ${JSON.stringify(created.body)}`);
      knowledgeBaseIds.push((created.body as { knowledge_base: { id: string } }).knowledge_base.id);
    }

    load = startMixedLoad({
      url: api.url,
      apiKey: key,
      knowledgeBaseIds,
      connections: CONNECTIONS,
      ingestShare: 0.25,
      asyncShare: 0.3,
      turnShare: 0.25,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    });
    const mark = () => Date.now();

    // Baseline.
    const baselineFrom = mark();
    await sleep(Number(args['baseline-seconds']) * 1000);
    const baselineTo = mark();
    windows.push({ fault: 'baseline', from: baselineFrom, to: baselineTo, notes: [] });
    await load.settled(baselineTo);
    const baseline = recordsBetween(load.records, baselineFrom, baselineTo);
    check(
      'baseline',
      'every request succeeds',
      baseline.every((record) => record.status >= 200 && record.status < 300),
      describeStatuses(baseline),
    );

    for (const role of ['data node', 'cluster-manager'] as const) {
      const fault = `kill -9 OpenSearch ${role}`;
      const manager = await stack.clusterManagerIndex();
      const victim = role === 'cluster-manager' ? manager : ([0, 1, 2].find((index) => index !== manager) ?? 0);
      const from = mark();
      stack.killNode(victim);
      log(`${fault}: node ${victim + 1} killed (cluster-manager was node ${manager + 1})`);
      await sleep(Number(args['node-down-seconds']) * 1000);
      const restartedAt = mark();
      await stack.startNode(victim);
      const joinedAfter = mark() - restartedAt;
      await waitFor('cluster green after the restart', 300_000, async () => (await stack.health()) === 'green');
      const greenAfter = mark() - restartedAt;
      const to = mark();
      const newManager = await stack.clusterManagerIndex();
      windows.push({
        fault,
        from,
        to,
        notes: [
          `node ${victim + 1} down ${round((restartedAt - from) / 1000)} s`,
          `started and rejoined ${round(joinedAfter / 1000)} s after its restart began, cluster green at ${round(greenAfter / 1000)} s`,
          `cluster-manager now node ${newManager + 1}`,
        ],
      });
      await load.settled(to);
      const queries = recordsBetween(load.records, from, to).filter((record) => record.kind === 'query');
      check(
        fault,
        '0 failed queries (after the client retries)',
        queries.every((record) => record.status === 200),
        `${queries.length} queries: ${describeStatuses(queries)}`,
      );
      const turns = recordsBetween(load.records, from, to).filter((record) => record.kind === 'turn');
      check(
        fault,
        '0 failed conversation turns',
        turns.every((record) => record.status === 200 || record.status === 201),
        `${turns.length} turns (and conversations started): ${describeStatuses(turns)}`,
      );
      check(
        fault,
        'the cluster is green again after the node restarts',
        (await stack.health()) === 'green',
        `green ${round(greenAfter / 1000)} s after the restart`,
      );
    }

    {
      const fault = 'FerretDB killed';
      const workersBefore = workerPids(api.pid);
      const from = mark();
      stack.killFerretdb();
      log(`${fault} for ${args['ferretdb-down-seconds']} s`);
      await sleep(Number(args['ferretdb-down-seconds']) * 1000);
      const restartedAt = mark();
      await stack.startFerretdb();
      const apiUrl = api.url;
      const recovered = await waitFor('the API answering after FerretDB is back', 60_000, async () => {
        const probe = await callApi(apiUrl, key, 'GET', '/api/v1/me', undefined, 5_000);
        return probe.status === 200;
      });
      await sleep(5_000);
      const to = mark();
      windows.push({
        fault,
        from,
        to,
        notes: [
          `down ${round((restartedAt - from) / 1000)} s`,
          `API answering ${round(recovered / 1000)} s after the restart`,
        ],
      });
      await load.settled(to);
      const during = recordsBetween(load.records, from, to);
      const bad = during.filter((record) => !((record.status >= 200 && record.status < 300) || record.status === 503));
      check(
        fault,
        'requests in the window get 2xx or 503 (never 500, never no answer)',
        bad.length === 0,
        `${during.length} requests: ${describeStatuses(during)}`,
      );
      const slowest = Math.max(0, ...during.map((record) => record.ms));
      const bound = MONGODB_TIMEOUT_MS + OPENSEARCH_TIMEOUT_MS + 5_000;
      check(
        fault,
        `no request hangs beyond the timeouts (${bound / 1000} s)`,
        slowest < bound,
        `slowest ${round(slowest)} ms`,
      );
      const unavailable = during.filter((record) => record.status === 503);
      check(
        fault,
        '503s carry the envelope code',
        unavailable.every((record) => record.code === 'server_error'),
        `${unavailable.length} × 503, codes ${[...new Set(unavailable.map((record) => record.code))].join(', ') || 'none'}`,
      );
      const workersAfter = workerPids(api.pid);
      check(
        fault,
        'the API recovers without a restart',
        workersBefore.join(',') === workersAfter.join(','),
        `workers before ${workersBefore.join(', ')}, after ${workersAfter.join(', ')}`,
      );
    }

    {
      const fault = 'kill -9 an API process';
      // Larger documents, queued, so that a process holds ingestion jobs when it is killed.
      const queued: AcknowledgedDocument[] = [];
      for (let index = 0; index < 4; index += 1) {
        const filler = Array.from(
          { length: 60 },
          (_unused, line) =>
            `Paragraph ${line} of the harbour almanac describes tides, moorings and the weather of a season.`,
        ).join('\n\n');
        const volume = `av${Date.now().toString(36)}${index}`;
        const unique = `Almanac volume ${volume} records that the lighthouse keeper logged ${index + 3} storms.`;
        const created = await callApi(
          api.url,
          key,
          'POST',
          '/api/v1/documents',
          { kb_id: knowledgeBaseIds[0], filename: `almanac-${volume}.md`, content: `${filler}\n\n${unique}\n` },
          REQUEST_TIMEOUT_MS,
          { prefer: 'respond-async' },
        );
        if (created.status !== 202)
          throw new Error(`queueing an almanac: ${created.status} ${JSON.stringify(created.body)}`);
        const document: AcknowledgedDocument = {
          id: (created.body as { document: { id: string } }).document.id,
          knowledgeBaseId: knowledgeBaseIds[0],
          question: `How many storms did the lighthouse keeper log according to almanac volume ${volume}?`,
          acknowledgedAt: Date.now(),
          status: 202,
        };
        queued.push(document);
        load.acknowledged.push(document);
      }
      const holder = await waitForJobHolder(
        stack.mongodbUrl,
        workerPids(api.pid),
        queued.map((document) => document.id),
      );
      const from = mark();
      process.kill(holder.pid, 'SIGKILL');
      log(`${fault}: worker ${holder.pid} killed while holding ${holder.jobs} of the queued documents' jobs`);
      const apiPid = api.pid;
      const replaced = await within(60_000, async () => {
        const pids = workerPids(apiPid);
        return pids.length === 2 && !pids.includes(holder.pid);
      });
      const apiUrl = api.url;
      const finished = await within(180_000, async () => {
        const states = await Promise.all(
          queued.map((document) => callApi(apiUrl, key, 'GET', `/api/v1/documents/${document.id}`, undefined, 10_000)),
        );
        return states.every((state) => documentStatus(state.body) === 'ready');
      });
      const to = mark();
      windows.push({
        fault,
        from,
        to,
        notes: [
          `worker ${holder.pid} held ${holder.jobs} job(s)`,
          replaced === null ? 'not replaced within 60 s' : `replaced ${round(replaced / 1000)} s later`,
          finished === null
            ? 'its documents not ready within 180 s'
            : `its documents ready ${round(finished / 1000)} s after the kill`,
        ],
      });
      await load.settled(to);
      check(
        fault,
        'the primary replaces the killed process',
        replaced !== null,
        replaced === null ? 'still not replaced after 60 s' : `replaced ${round(replaced / 1000)} s after the kill`,
      );
      // The killed process is gone, so documents whose jobs it held and that end ready were finished by another.
      check(
        fault,
        'its ingestion jobs finish in another process',
        finished !== null && !workerPids(apiPid).includes(holder.pid),
        finished === null
          ? 'not all ready within 180 s'
          : `${holder.jobs} of its jobs among ${queued.length} queued documents, all ready ${round(finished / 1000)} s after the kill`,
      );
      const during = recordsBetween(load.records, from, to);
      const cut = during.filter((record) => record.status === 0 && record.code !== 'timeout');
      const otherBad = during.filter((record) => record.status !== 0 && !(record.status >= 200 && record.status < 300));
      check(
        fault,
        'no error answers; only the killed process’s open requests are cut',
        otherBad.length === 0 && cut.every((record) => record.startedAt <= from + 1_000),
        `${during.length} requests: ${describeStatuses(during)}`,
      );
    }

    {
      const fault = 'read-only index block';
      const from = mark();
      await stack.setReadOnlyBlock(true);
      log(`${fault}: set on ${CHUNKS_ALIAS}`);
      await sleep(Number(args['block-seconds']) * 1000);
      const liftedAt = mark();
      await stack.setReadOnlyBlock(false);
      const apiUrl = api.url;
      const recovered = await within(60_000, async () => {
        const probe = await callApi(
          apiUrl,
          key,
          'POST',
          '/api/v1/documents',
          {
            kb_id: knowledgeBaseIds[1],
            filename: `after-block-${Date.now()}.md`,
            content: 'The block was lifted and the harbour office ingests again.\n',
          },
          REQUEST_TIMEOUT_MS,
        );
        return probe.status === 201;
      });
      const to = mark();
      windows.push({
        fault,
        from,
        to,
        notes: [
          `blocked ${round((liftedAt - from) / 1000)} s`,
          recovered === null
            ? 'no ingest answered 201 within 60 s of the lift'
            : `ingest answering 201 ${round(recovered / 1000)} s after the lift`,
        ],
      });
      await load.settled(to);
      // Each process reads the block at most a second late: from two seconds after it was set, every ingest is refused.
      const blocked = recordsBetween(load.records, from + 2_000, liftedAt);
      const ingests = blocked.filter((record) => record.kind === 'ingest');
      const queries = blocked.filter((record) => record.kind === 'query' || record.kind === 'turn');
      const refused = ingests.filter((record) => record.status === 503 && (record.message ?? '').includes('read-only'));
      check(
        fault,
        'ingest answers 503 saying the index is read-only',
        ingests.length > 0 && refused.length === ingests.length,
        `${ingests.length} ingests: ${describeStatuses(ingests)}; message: ${refused[0]?.message ?? '(none)'}`,
      );
      check(
        fault,
        'queries and conversation turns keep working',
        queries.length > 0 && queries.every((record) => record.status === 200 || record.status === 201),
        `${queries.length} queries and turns: ${describeStatuses(queries)}`,
      );
      check(
        fault,
        'ingest recovers when the block is lifted',
        recovered !== null,
        recovered === null ? 'no 201 within 60 s of the lift' : `201 ${round(recovered / 1000)} s after the lift`,
      );
    }

    await load.stop();
    const acknowledged = load.acknowledged;
    log(
      `load stopped: ${load.records.length} requests, ${acknowledged.length} acknowledged documents; waiting for them to be ready`,
    );
    const apiUrl = api.url;
    const states = new Map<string, string>();
    await waitFor('every acknowledged document ready', 300_000, async () => {
      for (const document of acknowledged) {
        if (states.get(document.id) === 'ready') continue;
        const state = await callApi(apiUrl, key, 'GET', `/api/v1/documents/${document.id}`, undefined, 10_000);
        states.set(document.id, state.status === 200 ? String(documentStatus(state.body)) : `HTTP ${state.status}`);
      }
      return [...states.values()].every((state) => state === 'ready' || state === 'failed');
    }).catch(() => 0);
    const notReady = acknowledged.filter((document) => states.get(document.id) !== 'ready');
    check(
      'afterwards',
      '0 acknowledged documents lost (every one ready)',
      notReady.length === 0,
      `${acknowledged.length} acknowledged, not ready: ${notReady.map((document) => `${document.id} (${states.get(document.id)})`).join(', ') || 'none'}`,
    );

    const unanswered: string[] = [];
    for (let start = 0; start < acknowledged.length; start += 4) {
      await Promise.all(
        acknowledged.slice(start, start + 4).map(async (document) => {
          const answer = await callApi(
            apiUrl,
            key,
            'POST',
            '/api/v1/query',
            { query: document.question, knowledge_base_ids: [document.knowledgeBaseId] },
            REQUEST_TIMEOUT_MS,
          );
          const cited = ((answer.body as { citations?: Array<{ document_id: string }> } | null)?.citations ?? []).some(
            (citation) => citation.document_id === document.id,
          );
          if (answer.status !== 200 || !cited) {
            const body = answer.body as { answer?: string; citations?: Array<{ document_id: string }> } | null;
            unanswered.push(
              `${document.id} (${answer.status}: "${document.question}" → "${(body?.answer ?? '').slice(0, 120)}", cited ${(body?.citations ?? []).map((citation) => citation.document_id.slice(0, 8)).join(' ')})`,
            );
          }
        }),
      );
    }
    check(
      'afterwards',
      'every acknowledged document answers a question about its own sentence (cited)',
      unanswered.length === 0,
      `${acknowledged.length - unanswered.length} of ${acknowledged.length}${unanswered.length ? `; not: ${unanswered.slice(0, 5).join('; ')}` : ''}`,
    );

    const lostTurns = await unreadableTurns(apiUrl, key, load.answeredTurns);
    check(
      'afterwards',
      '0 messages lost (every turn answered 200 is readable in its conversation)',
      lostTurns.length === 0,
      `${load.answeredTurns.length} turns answered, not readable: ${lostTurns.slice(0, 5).join('; ') || 'none'}`,
    );

    check('afterwards', 'the cluster is green', (await stack.health()) === 'green', await stack.health());
    const doctor = spawnSync(
      process.execPath,
      [join(ROOT, 'service', 'cli', 'kbqa.ts'), 'doctor', '--grace', '0s', '--json'],
      { env: { ...apiEnv, KBQA_LOG_LEVEL: 'silent' }, encoding: 'utf8' },
    );
    let doctorClean = false;
    try {
      doctorClean = (JSON.parse(doctor.stdout) as { clean?: boolean }).clean === true;
    } catch {
      /* reported below */
    }
    check(
      'afterwards',
      'kbqa doctor is clean (nothing orphaned or half-written)',
      doctorClean,
      doctorClean ? 'clean' : `${doctor.stdout.slice(0, 600)} ${doctor.stderr.slice(0, 300)}`,
    );

    writeReport(stamp, began, load.records, acknowledged.length, load.answeredTurns.length);
  } finally {
    await load?.stop();
    await api?.stop();
    if (!args['keep-stack']) await stack.stop();
  }
  return assertions.every((assertion) => assertion.passed) ? 0 : 1;
}

/** The answered turns whose answer is not in their conversation as read back (a GET per conversation). */
async function unreadableTurns(url: string, key: string, answered: AnsweredTurn[]): Promise<string[]> {
  const byConversation = new Map<string, AnsweredTurn[]>();
  for (const turn of answered)
    byConversation.set(turn.conversationId, [...(byConversation.get(turn.conversationId) ?? []), turn]);
  const lost: string[] = [];
  for (const [conversationId, turns] of byConversation) {
    const read = await callApi(
      url,
      key,
      'GET',
      `/api/v1/conversations/${conversationId}`,
      undefined,
      REQUEST_TIMEOUT_MS,
    );
    const messages = (read.body as { conversation?: { messages?: Array<{ id: string; content: string }> } } | null)
      ?.conversation?.messages;
    const stored = new Map((messages ?? []).map((message) => [message.id, message.content]));
    for (const turn of turns)
      if (stored.get(turn.messageId) !== turn.answer)
        lost.push(`${conversationId}/${turn.messageId} (${read.status === 200 ? 'missing' : `HTTP ${read.status}`})`);
  }
  return lost;
}

function documentStatus(body: unknown): string | undefined {
  return (body as { document?: { status?: string } } | null)?.document?.status;
}

/** Waits until a worker holds one of these documents' jobs; returns that worker's pid (job owners are `host:pid:id`). */
async function waitForJobHolder(
  mongodbUrl: string,
  workers: number[],
  documentIds: string[],
): Promise<{ pid: number; jobs: number }> {
  const client = new MongoClient(mongodbUrl, { serverSelectionTimeoutMS: 5_000 });
  try {
    await client.connect();
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      // A job's _id is its document's id.
      const jobs = await client
        .db()
        .collection<{ _id: string; lease_owner: string | null; lease_until: number | null }>('ingest_jobs')
        .find({ _id: { $in: documentIds } })
        .toArray();
      const held = new Map<number, number>();
      for (const job of jobs) {
        if (!job.lease_owner || (job.lease_until ?? 0) < Date.now()) continue;
        const pid = Number(job.lease_owner.split(':')[1]);
        if (workers.includes(pid)) held.set(pid, (held.get(pid) ?? 0) + 1);
      }
      const busiest = [...held.entries()].sort((a, b) => b[1] - a[1])[0];
      if (busiest) return { pid: busiest[0], jobs: busiest[1] };
      await sleep(100);
    }
    throw new Error('no API process took an ingestion job within 60 s');
  } finally {
    await client.close();
  }
}

function writeReport(
  stamp: string,
  began: number,
  records: RequestRecord[],
  acknowledged: number,
  turnsAnswered: number,
): void {
  const baseline = windows.find((window) => window.fault === 'baseline');
  const baselineP99 = baseline
    ? summarize(
        recordsBetween(records, baseline.from, baseline.to)
          .filter((record) => record.kind === 'query' && record.status === 200)
          .map((record) => record.ms),
      ).p99_ms
    : Number.NaN;
  const lines = [
    `# Resilience run ${stamp}`,
    '',
    `\`npm run resilience\`: a 3-node OpenSearch cluster (heap ${args.heap} per node, chunk index 3 shards × 1 replica), FerretDB, 2 API processes on one port (node:cluster), ${CONNECTIONS} requests in flight (¾ questions, a quarter of them conversation turns, ¼ ingests, 30 % of those queued with \`Prefer: respond-async\`), client timeout ${REQUEST_TIMEOUT_MS / 1000} s. ${records.length} requests over ${round((Date.now() - began) / 60_000)} min; ${acknowledged} documents acknowledged; ${turnsAnswered} conversation turns answered.`,
    '',
    '## Assertions',
    '',
    '| fault | assertion | result | detail |',
    '|---|---|---|---|',
    ...assertions.map(
      (assertion) =>
        `| ${assertion.fault} | ${assertion.what} | ${assertion.passed ? 'PASS' : '**FAIL**'} | ${assertion.detail.replaceAll('|', '\\|')} |`,
    ),
    '',
    '## Windows',
    '',
    `Query latency of the answered (200) queries sent in each window; the p99 blip is the window's p99 over the baseline's (${round(baselineP99)} ms).`,
    '',
    '| window | seconds | queries | query p50 ms | query p99 ms | p99 blip | max ms | turns | ingests | statuses | notes |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...windows.map((window) => {
      const within = recordsBetween(records, window.from, window.to);
      const queries = within.filter((record) => record.kind === 'query');
      const answered = summarize(queries.filter((record) => record.status === 200).map((record) => record.ms));
      const ingests = within.filter((record) => record.kind === 'ingest');
      const turns = within.filter((record) => record.kind === 'turn');
      return `| ${window.fault} | ${round((window.to - window.from) / 1000)} | ${queries.length} | ${answered.p50_ms} | ${answered.p99_ms} | ×${round(answered.p99_ms / baselineP99, 2)} | ${answered.max_ms} | ${turns.length} | ${ingests.length} | ${describeStatuses(within)} | ${window.notes.join('; ')} |`;
    }),
    '',
  ];
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  const file = join(ROOT, 'bench', 'results', `resilience-${stamp}.md`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  writeFileSync(
    file.replace(/\.md$/, '.json'),
    `${JSON.stringify({ stamp, assertions, windows, requests: records.length, acknowledged }, null, 2)}\n`,
  );
  log(`report: ${file}`);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`[resilience] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
