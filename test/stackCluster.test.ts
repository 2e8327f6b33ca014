// The local multi-node OpenSearch cluster of the stack scripts (issue 13): how KBQA_OPENSEARCH_NODES shapes the
// configuration and each node's start-up, the pid bookkeeping a resilience script relies on to kill and restart one
// node, and `stack:status --nodes N`. None of this starts OpenSearch, so it takes a second in `npm test`.
//
// A real 3-node cluster (forming, a node killed with SIGKILL and started again) is what `npm run resilience` runs:
// minutes of three JVMs are too much for npm test on two cores.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import test from 'ava';
import { loadConfig, type Config } from '../service/config.ts';
import { stackPathsFor, stackPaths, ProvisionError } from '../stack/provision.ts';
import {
  LOCAL_CLUSTER_NAME,
  SINGLE_NODE_CLUSTER_NAME,
  TRANSPORT_PORT_OFFSET,
  busyPorts,
  openSearchNodePid,
  openSearchNodeSpec,
  openSearchNodeSpecs,
  portAnswers,
  runningPid,
  startedServers,
} from '../stack/processes.ts';

const run = promisify(execFile);

function clusterConfig(extra: NodeJS.ProcessEnv = {}): Config {
  return loadConfig({
    KBQA_LOCAL_DIR: '/srv/kbqa/.local',
    KBQA_STACK_DATA_DIR: '/tmp/kbqa-instance',
    KBQA_OPENSEARCH_URL: 'http://127.0.0.1:9210',
    KBQA_OPENSEARCH_NODES: '3',
    KBQA_OPENSEARCH_HEAP: '512m',
    ...extra,
  });
}

test('KBQA_OPENSEARCH_NODES=3 with one URL: three consecutive ports, 3 shards and 1 replica', (t) => {
  const config = clusterConfig();
  t.deepEqual(config.opensearch.urls, ['http://127.0.0.1:9210', 'http://127.0.0.1:9211', 'http://127.0.0.1:9212']);
  t.is(config.opensearch.url, 'http://127.0.0.1:9210');
  t.is(config.opensearch.nodes, 3);
  t.is(config.opensearch.shards, 3);
  t.is(config.opensearch.replicas, 1);
  const single = loadConfig({});
  t.deepEqual(single.opensearch.urls, ['http://127.0.0.1:9200']);
  t.deepEqual([single.opensearch.shards, single.opensearch.replicas], [1, 0]);
});

test('KBQA_STACK_DATA_DIR moves data, logs, pids and the default snapshot directory, not the provisioned distribution', (t) => {
  const config = clusterConfig();
  t.is(config.localDir, '/srv/kbqa/.local');
  t.is(config.stackDataDir, '/tmp/kbqa-instance');
  t.is(config.opensearch.snapshotDir, '/tmp/kbqa-instance/snapshots');
  const paths = stackPathsFor(config);
  t.is(paths.opensearchHome, '/srv/kbqa/.local/opensearch-3.6.0');
  t.is(paths.ferretdbBinary, '/srv/kbqa/.local/bin/ferretdb-v1.24.2');
  t.is(paths.modelDir, '/srv/kbqa/.local/models/bge-small-en-v1.5-q');
  t.is(paths.runDir, '/tmp/kbqa-instance/run');
  t.is(paths.ferretdbData, '/tmp/kbqa-instance/data/ferretdb');
  t.is(paths.opensearchData, '/tmp/kbqa-instance/data/opensearch');
  // An explicit snapshot directory wins; unset, one instance is .local itself, as before.
  t.is(clusterConfig({ KBQA_OPENSEARCH_SNAPSHOT_DIR: '/mnt/snapshots' }).opensearch.snapshotDir, '/mnt/snapshots');
  const plain = loadConfig({ KBQA_LOCAL_DIR: '/srv/kbqa/.local' });
  t.is(plain.stackDataDir, '/srv/kbqa/.local');
  t.deepEqual(stackPathsFor(plain), stackPaths('/srv/kbqa/.local', '/srv/kbqa/.local/models/bge-small-en-v1.5-q'));
});

test('each cluster node has its own name, ports and directories, and all of them find each other', (t) => {
  const config = clusterConfig();
  const paths = stackPathsFor(config);
  const nodes = openSearchNodeSpecs(config, paths);
  t.deepEqual(
    nodes.map((node) => node.name),
    ['opensearch-1', 'opensearch-2', 'opensearch-3'],
  );
  t.deepEqual(
    nodes.map((node) => node.port),
    [9210, 9211, 9212],
  );
  t.deepEqual(
    nodes.map((node) => node.transportPort),
    [9310, 9311, 9312],
  );
  for (const key of ['dataDir', 'logDir', 'tmpDir', 'logFile'] as const) {
    t.is(new Set(nodes.map((node) => node[key])).size, 3, `${key} differs per node`);
  }
  t.is(nodes[1].dataDir, '/tmp/kbqa-instance/data/opensearch-cluster/node-2');
  t.is(nodes[1].logDir, '/tmp/kbqa-instance/logs/opensearch-cluster/node-2');
  const allPorts = nodes.flatMap((node) => [node.port, node.transportPort]);
  t.is(new Set(allPorts).size, 6);
  for (const node of nodes) {
    const { settings } = node;
    t.is(settings['node.name'], node.name);
    t.is(settings['cluster.name'], LOCAL_CLUSTER_NAME);
    t.is(settings['discovery.seed_hosts'], '127.0.0.1:9310,127.0.0.1:9311,127.0.0.1:9312');
    t.is(settings['cluster.initial_cluster_manager_nodes'], 'opensearch-1,opensearch-2,opensearch-3');
    t.is(settings['node.roles'], 'cluster_manager,data,ingest');
    t.false('discovery.type' in settings);
    t.is(settings['http.port'], String(node.port));
    t.is(settings['transport.port'], String(node.port + TRANSPORT_PORT_OFFSET));
    t.is(settings['path.data'], node.dataDir);
    t.is(settings['path.logs'], node.logDir);
    t.is(settings['path.repo'], '/tmp/kbqa-instance/snapshots');
    t.is(settings['cluster.routing.allocation.disk.threshold_enabled'], 'false');
    // The heap is per node, as configured: nothing assumes 1g.
    t.true(node.javaOptions.includes('-Xms512m') && node.javaOptions.includes('-Xmx512m'), node.javaOptions.join(' '));
    t.false(
      node.javaOptions.some((option) => option.endsWith('1g')),
      node.javaOptions.join(' '),
    );
    t.true(
      node.javaOptions.some((option) => option.includes(`file=${node.logDir}/gc.log`)),
      "the GC log is the node's own",
    );
    // Healthy means the whole cluster is there (a restarted node has rejoined), not just that this node answers.
    t.is(node.startTimeoutMs, 300_000);
  }
  // A node may be started again while another is down: it then waits for fewer nodes.
  t.truthy(openSearchNodeSpec(config, paths, 2, { waitForNodes: 2 }));
  t.throws(() => openSearchNodeSpec(config, paths, 4), { instanceOf: RangeError, message: /nodes 1 to 3/ });
  t.throws(() => openSearchNodeSpec(config, paths, 0), { instanceOf: RangeError });
});

test('one node keeps the single-node layout and a cluster name of its own', (t) => {
  const config = loadConfig({ KBQA_LOCAL_DIR: '/srv/kbqa/.local' });
  const [node] = openSearchNodeSpecs(config, stackPathsFor(config));
  t.is(node.name, 'opensearch');
  t.is(node.dataDir, '/srv/kbqa/.local/data/opensearch');
  t.is(node.logDir, '/srv/kbqa/.local/logs/opensearch');
  t.is(node.settings['discovery.type'], 'single-node');
  t.false('discovery.seed_hosts' in node.settings);
  t.is(node.settings['transport.port'], '9300');
  t.is(node.settings['path.repo'], '/srv/kbqa/.local/snapshots');
  t.is(node.settings['cluster.name'], SINGLE_NODE_CLUSTER_NAME);
  t.not(SINGLE_NODE_CLUSTER_NAME, LOCAL_CLUSTER_NAME);
  t.true(node.javaOptions.includes('-Xmx1g'));
});

test('a cluster listing fewer URLs than nodes is refused, naming both variables', (t) => {
  const config = clusterConfig({ KBQA_OPENSEARCH_URL: 'http://127.0.0.1:9210,http://127.0.0.1:9211' });
  t.throws(() => openSearchNodeSpecs(config, stackPathsFor(config)), {
    instanceOf: ProvisionError,
    message: /KBQA_OPENSEARCH_NODES=3.*lists 2 URLs/,
  });
});

function listen(server: Server): Promise<number> {
  return new Promise((resolvePromise) =>
    server.listen(0, '127.0.0.1', () => resolvePromise((server.address() as AddressInfo).port)),
  );
}

test('busy ports are found before anything starts: an HTTP port, or the transport port beside it', async (t) => {
  const transport = createServer();
  const http = createHttpServer((_request, response) => response.writeHead(404).end());
  const transportPort = await listen(transport);
  const httpPort = await listen(http as unknown as Server);
  try {
    const paths = stackPaths('/srv/kbqa/.local', '/srv/kbqa/model', '/tmp/kbqa-none/snapshots', '/tmp/kbqa-none');
    const transportBusy = clusterConfig({
      KBQA_OPENSEARCH_URL: `http://127.0.0.1:${transportPort - TRANSPORT_PORT_OFFSET}`,
    });
    const problems = await busyPorts(paths, openSearchNodeSpecs(transportBusy, paths));
    t.true(
      problems.some((problem) =>
        problem.startsWith(`port ${transportPort} on 127.0.0.1 is busy (opensearch-1's transport port`),
      ),
      problems.join('\n'),
    );
    t.true(
      problems.every((problem) => problem.endsWith('with KBQA_OPENSEARCH_URL')),
      problems.join('\n'),
    );
    // Something that answers HTTP but is not this cluster (here: 404) is not taken for a node.
    const httpBusy = clusterConfig({ KBQA_OPENSEARCH_URL: `http://127.0.0.1:${httpPort}`, KBQA_OPENSEARCH_NODES: '1' });
    const [node] = openSearchNodeSpecs(httpBusy, paths);
    t.deepEqual(await busyPorts(paths, [node]), [
      `port ${httpPort} on 127.0.0.1 is busy (needed by opensearch); stop what uses it or move opensearch with KBQA_OPENSEARCH_URL`,
    ]);
  } finally {
    transport.close();
    http.close();
  }
});

test('pid files: a live server is found, a dead or killed-but-unreaped one is not, and its pid file goes', async (t) => {
  const instance = mkdtempSync(join(tmpdir(), 'kbqa-pids-'));
  t.teardown(() => rmSync(instance, { recursive: true, force: true }));
  const paths = stackPaths('/srv/kbqa/.local', '/srv/kbqa/model', join(instance, 'snapshots'), instance);
  mkdirSync(paths.runDir, { recursive: true });
  writeFileSync(join(paths.runDir, 'opensearch-1.pid'), `${process.pid}\n`);
  // A pid that cannot be running: beyond the kernel's pid_max (4194304 at most).
  writeFileSync(join(paths.runDir, 'opensearch-2.pid'), '4194305\n');
  t.deepEqual(startedServers(paths), ['opensearch-1', 'opensearch-2']);
  const config = clusterConfig({ KBQA_STACK_DATA_DIR: instance });
  t.is(openSearchNodePid(config, paths, 1), process.pid);
  t.is(openSearchNodePid(config, paths, 2), null);
  t.false(existsSync(join(paths.runDir, 'opensearch-2.pid')));

  if (process.platform !== 'linux') return;
  // A kill -9'ed server whose parent has not reaped it yet (init does so late) is a zombie: it still takes signal
  // 0, and a restart must not wait for it. Here its parent execs into a sleep that never reaps.
  const parent = spawn('sh', ['-c', 'sleep 60 & echo $!; kill -9 $!; exec sleep 5'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  t.teardown(() => parent.kill('SIGKILL'));
  const zombie = Number(
    (await new Promise<Buffer>((resolvePromise) => parent.stdout.once('data', resolvePromise))).toString().trim(),
  );
  await sleep(200);
  t.notThrows(() => process.kill(zombie, 0), 'the zombie still takes signal 0');
  writeFileSync(join(paths.runDir, 'opensearch-3.pid'), `${zombie}\n`);
  t.is(runningPid(paths, 'opensearch-3'), null);
});

/** A base port whose `count` ports and their transport ports (+100) nobody answers on. */
async function freePorts(count: number, from: number): Promise<number> {
  for (let base = from; base < from + 2_000; base += count + 7) {
    const ports = Array.from({ length: count }, (_unused, index) => base + index).flatMap((port) => [
      port,
      port + TRANSPORT_PORT_OFFSET,
    ]);
    const answers = await Promise.all(ports.map((port) => portAnswers('127.0.0.1', port, 200)));
    if (!answers.includes(true)) return base;
  }
  throw new Error(`no free ports from ${from}`);
}

test('stack:status --nodes 3 lists every node of the cluster (the flag reaches the configuration)', async (t) => {
  const instance = mkdtempSync(join(tmpdir(), 'kbqa-status-'));
  t.teardown(() => rmSync(instance, { recursive: true, force: true }));
  const base = await freePorts(3, 21_400);
  const mongo = await freePorts(1, 23_400);
  const status = await run(process.execPath, [resolve('stack/cli.ts'), 'stack:status', '--nodes', '3'], {
    env: {
      ...process.env,
      KBQA_STACK_DATA_DIR: instance,
      KBQA_OPENSEARCH_URL: `http://127.0.0.1:${base}`,
      KBQA_OPENSEARCH_NODES: '',
      KBQA_MONGODB_URL: `mongodb://127.0.0.1:${mongo}/kbqa`,
    },
  }).then(
    () => ({ code: 0, stdout: '' }),
    (error: { code: number; stdout: string }) => error,
  );
  // Nothing runs there: every server is listed as down, and the exit code says so.
  t.is(status.code, 1);
  const lines = status.stdout.split('\n');
  for (const [name, port] of [
    ['ferretdb', mongo],
    ['opensearch-1', base],
    ['opensearch-2', base + 1],
    ['opensearch-3', base + 2],
  ] as const) {
    t.true(
      lines.some((line) => line.startsWith(name) && line.includes(`down     127.0.0.1:${port} (not running)`)),
      `${name} on ${port} in:\n${status.stdout}`,
    );
  }
});
