// Starts, watches and stops the local servers. Each runs detached in its own process group with its pid in
// .local/run/<name>.pid and its output in .local/logs/<name>/, so `stack:down` (or the test runner) can stop
// exactly what was started, and a crash leaves a log to read. OpenSearch runs as one node (`opensearch`) or as a
// local cluster of KBQA_OPENSEARCH_NODES nodes (`opensearch-1` …), each node a server of its own so that a script
// can kill exactly one and start it again (startOpenSearchNode).
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createConnection } from 'node:net';
import { dirname, join, parse } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../service/config.ts';
import { ProvisionError, findOpenSearchJava, type StackPaths } from './provision.ts';

export const OPENSEARCH_USER = 'kbqa-search';

export interface ServerSpec {
  name: string;
  /** The env var that moves this server's port, named in "port busy" errors. */
  portVariable: string;
  host: string;
  port: number;
  logFile: string;
  start(): { command: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv };
  /** Resolves true once the server answers as healthy. */
  healthy(): Promise<boolean>;
  startTimeoutMs: number;
  /** Ports it binds besides `port` (an OpenSearch node's transport port), checked free before it starts; role names it. */
  otherPorts?: Array<{ port: number; role: string }>;
}

export function pidFile(paths: StackPaths, name: string): string {
  return join(paths.runDir, `${name}.pid`);
}

export function runningPid(paths: StackPaths, name: string): number | null {
  const file = pidFile(paths, name);
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    if (!isZombie(pid)) return pid;
  } catch {
    /* gone */
  }
  rmSync(file, { force: true });
  return null;
}

/**
 * A killed server whose parent (init, once the starting command exited) has not reaped it yet still takes signals;
 * it has stopped all the same. Seen: a `kill -9`ed node stayed a zombie ~2 s, long enough to look running to a
 * restart. Linux only (/proc); elsewhere a zombie counts as running.
 */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (command) state …": the command may contain spaces and parentheses, so read after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

export function portAnswers(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const socket = createConnection({ host, port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolvePromise(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export function logTail(file: string, lines = 30): string {
  if (!existsSync(file)) return '(no log written)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

type PortState = { state: 'free' } | { state: 'reuse' } | { state: 'busy'; problem: string };

/** Whether a server that kbqa does not run yet can start: its ports free, or a healthy server already there. */
async function portState(spec: ServerSpec): Promise<PortState> {
  const busy = (port: number, what: string): PortState => ({
    state: 'busy',
    problem: `port ${port} on ${spec.host} is busy (${what}); stop what uses it or move ${spec.name} with ${spec.portVariable}`,
  });
  if (await portAnswers(spec.host, spec.port)) {
    return (await spec.healthy()) ? { state: 'reuse' } : busy(spec.port, `needed by ${spec.name}`);
  }
  for (const { port, role } of spec.otherPorts ?? []) {
    if (await portAnswers(spec.host, port)) return busy(port, `${spec.name}'s ${role}`);
  }
  return { state: 'free' };
}

/**
 * The busy-port problems of every server here that kbqa does not run yet, found before any is started: a cluster
 * node that cannot bind would otherwise leave the others waiting minutes for it.
 */
export async function busyPorts(paths: StackPaths, specs: ServerSpec[]): Promise<string[]> {
  const states = await Promise.all(
    specs.map((spec) => (runningPid(paths, spec.name) === null ? portState(spec) : null)),
  );
  return states.flatMap((state) => (state?.state === 'busy' ? [state.problem] : []));
}

/** Starts a server unless it already runs; returns true when this call started it. */
export async function startServer(paths: StackPaths, spec: ServerSpec): Promise<boolean> {
  if (runningPid(paths, spec.name) !== null) {
    if (await waitHealthy(spec, spec.startTimeoutMs)) return false;
    throw new ProvisionError(
      `${spec.name} runs (pid file ${pidFile(paths, spec.name)}) but does not answer; see ${spec.logFile}`,
    );
  }
  const ports = await portState(spec);
  if (ports.state === 'busy') throw new ProvisionError(ports.problem);
  if (ports.state === 'reuse') {
    console.log(`[kbqa] ${spec.name}: something healthy already listens on ${spec.host}:${spec.port}; using it`);
    return false;
  }
  mkdirSync(paths.runDir, { recursive: true });
  mkdirSync(dirname(spec.logFile), { recursive: true });
  const { command, args, cwd, env } = spec.start();
  const log = openSync(spec.logFile, 'a');
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', log, log] });
  if (child.pid === undefined) throw new ProvisionError(`could not start ${spec.name}`);
  writeFileSync(pidFile(paths, spec.name), `${child.pid}\n`);
  child.unref();
  const started = Date.now();
  while (Date.now() - started < spec.startTimeoutMs) {
    if (runningPid(paths, spec.name) === null) {
      throw new ProvisionError(
        `${spec.name} exited during start-up; last lines of ${spec.logFile}:\n${logTail(spec.logFile)}`,
      );
    }
    if (await spec.healthy()) return true;
    await sleep(500);
  }
  await stopServer(paths, spec.name);
  throw new ProvisionError(
    `${spec.name} did not become healthy within ${spec.startTimeoutMs / 1000}s; last lines of ${spec.logFile}:\n${logTail(spec.logFile)}`,
  );
}

async function waitHealthy(spec: ServerSpec, timeoutMs: number): Promise<boolean> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await spec.healthy()) return true;
    await sleep(500);
  }
  return false;
}

/** The names of the servers with a pid file in this instance's run directory: whatever kbqa started there. */
export function startedServers(paths: StackPaths): string[] {
  if (!existsSync(paths.runDir)) return [];
  return readdirSync(paths.runDir)
    .filter((entry) => entry.endsWith('.pid'))
    .map((entry) => entry.slice(0, -'.pid'.length))
    .sort();
}

/** Stops a server started by startServer: SIGTERM to its process group, SIGKILL after a grace period. */
export async function stopServer(paths: StackPaths, name: string, graceMs = 30_000): Promise<boolean> {
  const pid = runningPid(paths, name);
  if (pid === null) return false;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      try {
        process.kill(pid, signal);
      } catch {
        /* already gone */
      }
    }
  };
  signalGroup('SIGTERM');
  const started = Date.now();
  while (Date.now() - started < graceMs && runningPid(paths, name) !== null) await sleep(200);
  if (runningPid(paths, name) !== null) signalGroup('SIGKILL');
  rmSync(pidFile(paths, name), { force: true });
  return true;
}

async function httpHealthy(url: string, check: (body: unknown) => boolean): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    if (!response.ok) return false;
    return check(await response.json());
  } catch {
    return false;
  }
}

/**
 * OpenSearch refuses to run as root. When we are root (CI, containers) it runs as a dedicated system user that
 * owns its home, data and logs; otherwise as the current user.
 */
function opensearchRunAs(directories: string[]): string[] {
  if (process.getuid?.() !== 0) return [];
  const exists = spawnSync('id', ['-u', OPENSEARCH_USER]).status === 0;
  if (!exists) {
    const created = spawnSync(
      'useradd',
      ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', OPENSEARCH_USER],
      {
        encoding: 'utf8',
      },
    );
    if (created.status !== 0) throw new ProvisionError(`could not create user ${OPENSEARCH_USER}: ${created.stderr}`);
  }
  const uid = Number(spawnSync('id', ['-u', OPENSEARCH_USER], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', OPENSEARCH_USER], { encoding: 'utf8' }).stdout.trim());
  for (const directory of directories) {
    chownRecursive(directory, uid, gid);
    allowTraversal(directory);
  }
  return ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'];
}

/**
 * The search user must be able to walk down to each of its directories (a clone under /root, or an instance
 * directory made by mkdtemp, would otherwise be closed to it).
 */
function allowTraversal(directory: string): void {
  const { root } = parse(directory);
  for (let current = dirname(directory); current !== root; current = dirname(current)) {
    const mode = statSync(current).mode;
    if ((mode & 0o001) === 0) {
      console.log(
        `[kbqa] granting others execute (traverse) permission on ${current} so ${OPENSEARCH_USER} can reach its directories`,
      );
      chmodSync(current, mode | 0o001);
    }
  }
}

function chownRecursive(path: string, uid: number, gid: number): void {
  const stats = statSync(path);
  if (stats.uid !== uid) chownSync(path, uid, gid);
  if (stats.isDirectory()) for (const entry of readdirSync(path)) chownRecursive(join(path, entry), uid, gid);
}

/** The single node's cluster and a local cluster's: named apart, so a node of one can never join the other. */
export const SINGLE_NODE_CLUSTER_NAME = 'kbqa-local';
export const LOCAL_CLUSTER_NAME = 'kbqa-local-cluster';
/** A node's transport port is its HTTP port + this: away from a neighbouring cluster's default 9300. */
export const TRANSPORT_PORT_OFFSET = 100;

/** One local OpenSearch node: what it is started with, and where it keeps its data and logs. */
export interface OpenSearchNodeSpec extends ServerSpec {
  /** 1 … KBQA_OPENSEARCH_NODES, as in its name `opensearch-<node>` (a single node is named `opensearch`). */
  node: number;
  url: string;
  transportPort: number;
  clusterName: string;
  dataDir: string;
  logDir: string;
  tmpDir: string;
  /** Its settings (opensearch.yml keys), passed as -E<key>=<value>. */
  settings: Record<string, string>;
  /** OPENSEARCH_JAVA_OPTS: the heap, and the GC log and heap dumps in the node's own log directory. */
  javaOptions: string[];
}

export interface OpenSearchNodeOptions {
  /**
   * How many nodes the cluster health waits for before a node counts as healthy: all of them unless set (fewer
   * when a node is started again while another is still down).
   */
  waitForNodes?: number;
}

export function openSearchNodeName(config: Config, node: number): string {
  return config.opensearch.nodes === 1 ? 'opensearch' : `opensearch-${node}`;
}

function hostAndPort(url: string): { host: string; port: number } {
  const { hostname, port, protocol } = new URL(url);
  return { host: hostname, port: Number(port || (protocol === 'https:' ? 443 : 80)) };
}

/** Every node the local stack runs: one (`opensearch`), or a cluster of KBQA_OPENSEARCH_NODES (`opensearch-1` …). */
export function openSearchNodeSpecs(
  config: Config,
  paths: StackPaths,
  options: OpenSearchNodeOptions = {},
): OpenSearchNodeSpec[] {
  return Array.from({ length: config.opensearch.nodes }, (_unused, index) =>
    openSearchNodeSpec(config, paths, index + 1, options),
  );
}

/**
 * Node `node` (1-based) of the local stack. One node runs as before (discovery.type single-node, .local/data/opensearch);
 * a cluster's node i listens on the i-th of config.opensearch.urls, keeps data/logs/tmp under opensearch-cluster/node-i,
 * and finds the others through every node's transport port. All share the distribution and path.repo.
 */
export function openSearchNodeSpec(
  config: Config,
  paths: StackPaths,
  node: number,
  options: OpenSearchNodeOptions = {},
): OpenSearchNodeSpec {
  const { nodes, urls, heap } = config.opensearch;
  if (!Number.isInteger(node) || node < 1 || node > nodes) {
    throw new RangeError(`OpenSearch node ${node} does not exist: the local stack runs nodes 1 to ${nodes}`);
  }
  if (urls.length < nodes) {
    throw new ProvisionError(
      `KBQA_OPENSEARCH_NODES=${nodes} but KBQA_OPENSEARCH_URL lists ${urls.length} URLs: list one per node, or one URL (the nodes take its port and the ones after it)`,
    );
  }
  const cluster = nodes > 1;
  const name = openSearchNodeName(config, node);
  const url = urls[node - 1];
  const { host, port } = hostAndPort(url);
  const transportPort = port + TRANSPORT_PORT_OFFSET;
  const dataDir = cluster ? join(paths.opensearchClusterData, `node-${node}`) : paths.opensearchData;
  const logDir = cluster ? join(paths.opensearchClusterLogs, `node-${node}`) : paths.opensearchLogs;
  const tmpDir = cluster ? join(paths.tmpDir, 'opensearch-cluster', `node-${node}`) : join(paths.tmpDir, 'opensearch');
  const clusterName = cluster ? LOCAL_CLUSTER_NAME : SINGLE_NODE_CLUSTER_NAME;
  const names = Array.from({ length: nodes }, (_unused, index) => openSearchNodeName(config, index + 1));
  const seedHosts = urls.slice(0, nodes).map((nodeUrl) => {
    const address = hostAndPort(nodeUrl);
    return `${address.host}:${address.port + TRANSPORT_PORT_OFFSET}`;
  });
  const settings: Record<string, string> = {
    'cluster.name': clusterName,
    'node.name': name,
    ...(cluster
      ? {
          // Every node may be elected cluster manager and holds data (and runs the ingest pipelines): any one of
          // three can die and the other two keep a quorum and a copy of every shard (1 replica).
          'node.roles': 'cluster_manager,data,ingest',
          'discovery.seed_hosts': seedHosts.join(','),
          // Read only when the cluster first forms (no cluster state in any data directory yet); ignored after.
          'cluster.initial_cluster_manager_nodes': names.join(','),
        }
      : { 'discovery.type': 'single-node' }),
    'network.host': host,
    'http.port': String(port),
    'transport.port': String(transportPort),
    'path.data': dataDir,
    'path.logs': logDir,
    // Filesystem snapshot repositories (kbqa backup) must live under path.repo; the nodes on this machine share it.
    'path.repo': paths.snapshotDir,
    // A developer's nearly-full disk must not flip the indices to read-only.
    'cluster.routing.allocation.disk.threshold_enabled': 'false',
  };
  const javaOptions = [
    `-Xms${heap}`,
    `-Xmx${heap}`,
    // jvm.options writes the GC log and heap dumps relative to the distribution (shared by every node); each node
    // writes its own instead. OPENSEARCH_JAVA_OPTS is split on spaces, so only a log directory without any.
    ...(logDir.includes(' ')
      ? []
      : [
          `-XX:HeapDumpPath=${logDir}`,
          `-XX:ErrorFile=${logDir}/hs_err_pid%p.log`,
          '-Xlog:disable',
          '-Xlog:all=warning:stderr:uptime,level,tags',
          `-Xlog:gc*,gc+age=trace,safepoint:file=${logDir}/gc.log:utctime,pid,tags:filecount=8,filesize=64m`,
        ]),
  ];
  const waitForNodes = options.waitForNodes ?? nodes;
  const healthUrl = cluster
    ? `${url}/_cluster/health?${new URLSearchParams({ wait_for_nodes: `>=${waitForNodes}`, wait_for_status: 'yellow', timeout: '1s' })}`
    : `${url}/_cluster/health`;
  return {
    name,
    node,
    url,
    transportPort,
    clusterName,
    dataDir,
    logDir,
    tmpDir,
    settings,
    javaOptions,
    portVariable: 'KBQA_OPENSEARCH_URL',
    host,
    port,
    otherPorts: [{ port: transportPort, role: `transport port, its HTTP port + ${TRANSPORT_PORT_OFFSET}` }],
    logFile: join(logDir, 'stdout.log'),
    // Three JVMs starting at once on two cores take longer than one.
    startTimeoutMs: cluster ? 300_000 : 180_000,
    start() {
      for (const directory of [dataDir, logDir, tmpDir, paths.snapshotDir]) mkdirSync(directory, { recursive: true });
      const javaHome = findOpenSearchJava();
      const runAs = opensearchRunAs([paths.opensearchHome, dataDir, logDir, tmpDir, paths.snapshotDir]);
      const args = [
        join(paths.opensearchHome, 'bin', 'opensearch'),
        ...Object.entries(settings).map(([key, value]) => `-E${key}=${value}`),
      ];
      const [command, ...rest] = runAs.length > 0 ? [...runAs, ...args] : args;
      return {
        command,
        args: rest,
        cwd: paths.opensearchHome,
        env: {
          ...process.env,
          OPENSEARCH_JAVA_HOME: javaHome,
          OPENSEARCH_JAVA_OPTS: javaOptions.join(' '),
          OPENSEARCH_TMPDIR: tmpDir,
        },
      };
    },
    healthy: () =>
      // A cluster node is healthy once the cluster it sees has every node (or waitForNodes) and all primaries.
      httpHealthy(healthUrl, (body) => ['green', 'yellow'].includes((body as { status?: string }).status ?? '')),
  };
}

/** Starts node `node` (1-based) unless it runs, and waits until it is healthy (has joined); true when it started it. */
export function startOpenSearchNode(
  config: Config,
  paths: StackPaths,
  node: number,
  options: OpenSearchNodeOptions = {},
): Promise<boolean> {
  return startServer(paths, openSearchNodeSpec(config, paths, node, options));
}

/** Stops node `node` (SIGTERM, then SIGKILL after graceMs); false when kbqa was not running it. */
export function stopOpenSearchNode(
  config: Config,
  paths: StackPaths,
  node: number,
  graceMs?: number,
): Promise<boolean> {
  return stopServer(paths, openSearchNodeName(config, node), graceMs);
}

/** The pid of node `node` (its JVM) when kbqa runs it, else null. */
export function openSearchNodePid(config: Config, paths: StackPaths, node: number): number | null {
  return runningPid(paths, openSearchNodeName(config, node));
}

export interface ClusterHealth {
  cluster_name: string;
  status: 'green' | 'yellow' | 'red';
  number_of_nodes: number;
  unassigned_shards: number;
}

/** The cluster's health as the node at `url` sees it; null when it does not answer. */
export async function openSearchClusterHealth(url: string): Promise<ClusterHealth | null> {
  try {
    const response = await fetch(`${url}/_cluster/health`, { signal: AbortSignal.timeout(2_000) });
    // 503 before a cluster manager is elected: no health to report yet.
    return response.ok ? ((await response.json()) as ClusterHealth) : null;
  } catch {
    return null;
  }
}

export function ferretdbSpec(paths: StackPaths, mongodbUrl: string): ServerSpec {
  const { hostname, port } = new URL(mongodbUrl);
  const portNumber = Number(port || 27017);
  return {
    name: 'ferretdb',
    portVariable: 'KBQA_MONGODB_URL',
    host: hostname,
    port: portNumber,
    logFile: join(paths.ferretdbLogs, 'ferretdb.log'),
    startTimeoutMs: 30_000,
    start() {
      mkdirSync(paths.ferretdbData, { recursive: true });
      mkdirSync(paths.ferretdbLogs, { recursive: true });
      return {
        command: paths.ferretdbBinary,
        args: [
          '--handler=sqlite',
          `--sqlite-url=file:${paths.ferretdbData}/`,
          `--state-dir=${paths.ferretdbData}`,
          `--listen-addr=${hostname}:${portNumber}`,
          // The debug endpoint would claim 127.0.0.1:8088; we do not need it.
          '--debug-addr=-',
          '--telemetry=disable',
          '--log-level=warn',
        ],
        cwd: paths.ferretdbData,
        env: { ...process.env, FERRETDB_TELEMETRY: 'disable', DO_NOT_TRACK: 'true' },
      };
    },
    healthy: () => portAnswers(hostname, portNumber),
  };
}
