// A stack of a script's own (resilience, soak): its OpenSearch node(s) and FerretDB on ports of their own, with data
// under .local/instances/<name>/ (wiped at every start), from the provisioned distribution. The dev stack is never
// touched, and the script can kill and restart exactly one of its servers.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, type Config } from '../service/config.ts';
import { ProvisionError, provisionAll, stackPathsFor, type StackPaths } from '../stack/provision.ts';
import {
  busyPorts,
  ferretdbSpec,
  openSearchClusterHealth,
  openSearchNodeName,
  openSearchNodePid,
  openSearchNodeSpecs,
  runningPid,
  startOpenSearchNode,
  startServer,
  startedServers,
  stopServer,
} from '../stack/processes.ts';

export interface StackInstanceOptions {
  name: string;
  nodes: number;
  heap: string;
  /** The first node's HTTP port; node i takes the i - 1 ports after it (transport ports: HTTP + 100). */
  opensearchPort?: number;
  mongodbPort?: number;
}

export interface StackInstance {
  config: Config;
  paths: StackPaths;
  opensearchUrls: string[];
  mongodbUrl: string;
  /** 0-based index of the elected cluster-manager node. */
  clusterManagerIndex(): Promise<number>;
  /** kill -9 node `index` (0-based). */
  killNode(index: number): void;
  /** Starts node `index` again and waits until it has joined the nodes that are up. */
  startNode(index: number): Promise<void>;
  health(): Promise<string>;
  killFerretdb(): void;
  startFerretdb(): Promise<void>;
  /** Sets or lifts `index.blocks.read_only_allow_delete` on the chunk index (what OpenSearch does at a full disk). */
  setReadOnlyBlock(on: boolean): Promise<void>;
  /** One request to the first node that answers. */
  opensearch<T>(method: string, path: string, body?: unknown): Promise<T>;
  stop(): Promise<void>;
}

const DEFAULT_PORTS: Record<string, { opensearch: number; mongodb: number }> = {
  resilience: { opensearch: 9400, mongodb: 27117 },
  soak: { opensearch: 9450, mongodb: 27118 },
};

export async function startStackInstance(options: StackInstanceOptions): Promise<StackInstance> {
  const ports = DEFAULT_PORTS[options.name] ?? { opensearch: 9480, mongodb: 27119 };
  const opensearchPort = options.opensearchPort ?? ports.opensearch;
  const mongodbPort = options.mongodbPort ?? ports.mongodb;
  const base = loadConfig();
  const instanceDir = join(base.localDir, 'instances', options.name);
  const config = loadConfig({
    ...process.env,
    KBQA_STACK_DATA_DIR: instanceDir,
    KBQA_OPENSEARCH_URL: `http://127.0.0.1:${opensearchPort}`,
    KBQA_OPENSEARCH_NODES: String(options.nodes),
    KBQA_OPENSEARCH_HEAP: options.heap,
    KBQA_OPENSEARCH_SNAPSHOT_DIR: join(instanceDir, 'snapshots'),
    KBQA_MONGODB_URL: `mongodb://127.0.0.1:${mongodbPort}/kbqa`,
  });
  const paths = stackPathsFor(config);
  provisionAll(paths);
  // A previous run's leftovers (a run stopped with --keep-stack or killed): stopped, then wiped.
  await Promise.all(startedServers(paths).map((name) => stopServer(paths, name, 10_000)));
  rmSync(instanceDir, { recursive: true, force: true });

  const ferretdb = ferretdbSpec(paths, config.mongodb.url);
  const nodes = openSearchNodeSpecs(config, paths);
  const busy = await busyPorts(paths, [ferretdb, ...nodes]);
  if (busy.length > 0) throw new ProvisionError(busy.join('\n'));
  await Promise.all([startServer(paths, ferretdb), ...nodes.map((spec) => startServer(paths, spec))]);

  const urls = config.opensearch.urls;
  const opensearch = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let lastError: unknown = null;
    for (const url of urls) {
      try {
        const response = await fetch(`${url}${path}`, {
          method,
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
        const parsed = (await response.json()) as T;
        if (!response.ok)
          throw new Error(`${method} ${path} → ${response.status}: ${JSON.stringify(parsed).slice(0, 300)}`);
        return parsed;
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError instanceof Error ? lastError : new Error(String(lastError));
  };

  const upNodes = () =>
    Array.from({ length: options.nodes }, (_unused, index) => index).filter(
      (index) => openSearchNodePid(config, paths, index + 1) !== null,
    ).length;

  return {
    config,
    paths,
    opensearchUrls: urls,
    mongodbUrl: config.mongodb.url,
    async clusterManagerIndex() {
      const [manager] = await opensearch<Array<{ node: string }>>('GET', '/_cat/cluster_manager?format=json');
      const index = Array.from({ length: options.nodes }, (_unused, node) =>
        openSearchNodeName(config, node + 1),
      ).indexOf(manager.node);
      if (index < 0) throw new Error(`the cluster-manager ${manager.node} is not one of this instance's nodes`);
      return index;
    },
    killNode(index) {
      const pid = openSearchNodePid(config, paths, index + 1);
      if (pid === null) throw new Error(`node ${index + 1} is not running`);
      process.kill(pid, 'SIGKILL');
    },
    async startNode(index) {
      // The pid file of a killed node still names its (reaped or zombie) process: startServer sees it gone.
      await startOpenSearchNode(config, paths, index + 1, { waitForNodes: upNodes() + 1 });
    },
    async health() {
      for (const url of urls) {
        const health = await openSearchClusterHealth(url);
        if (health) return health.status;
      }
      return 'unreachable';
    },
    killFerretdb() {
      const pid = runningPid(paths, ferretdb.name);
      if (pid === null) throw new Error('FerretDB is not running');
      process.kill(pid, 'SIGKILL');
    },
    async startFerretdb() {
      await startServer(paths, ferretdb);
    },
    async setReadOnlyBlock(on) {
      await opensearch('PUT', '/kbqa-chunks/_settings', { 'index.blocks.read_only_allow_delete': on ? true : null });
    },
    opensearch,
    async stop() {
      await Promise.all(startedServers(paths).map((name) => stopServer(paths, name, 15_000)));
    },
  };
}
