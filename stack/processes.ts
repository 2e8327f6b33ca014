// Starts, watches and stops the local servers. Each runs detached in its own process group with its pid in
// .local/run/<name>.pid and its output in .local/logs/<name>/, so `stack:down` (or the test runner) can stop
// exactly what was started, and a crash leaves a log to read.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { dirname, join, parse } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
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
    return pid;
  } catch {
    rmSync(file, { force: true });
    return null;
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

/** Starts a server unless it already runs; returns true when this call started it. */
export async function startServer(paths: StackPaths, spec: ServerSpec): Promise<boolean> {
  if (runningPid(paths, spec.name) !== null) {
    if (await waitHealthy(spec, spec.startTimeoutMs)) return false;
    throw new ProvisionError(`${spec.name} runs (pid file ${pidFile(paths, spec.name)}) but does not answer; see ${spec.logFile}`);
  }
  if (await portAnswers(spec.host, spec.port)) {
    if (await spec.healthy()) {
      console.log(`[kbqa] ${spec.name}: something healthy already listens on ${spec.host}:${spec.port}; using it`);
      return false;
    }
    throw new ProvisionError(
      `port ${spec.port} on ${spec.host} is busy (needed by ${spec.name}); stop what uses it or move ${spec.name} with ${spec.portVariable}`,
    );
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
      throw new ProvisionError(`${spec.name} exited during start-up; last lines of ${spec.logFile}:\n${logTail(spec.logFile)}`);
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
function opensearchRunAs(paths: StackPaths, directories: string[]): string[] {
  if (process.getuid?.() !== 0) return [];
  const exists = spawnSync('id', ['-u', OPENSEARCH_USER]).status === 0;
  if (!exists) {
    const created = spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', OPENSEARCH_USER], {
      encoding: 'utf8',
    });
    if (created.status !== 0) throw new ProvisionError(`could not create user ${OPENSEARCH_USER}: ${created.stderr}`);
  }
  const uid = Number(spawnSync('id', ['-u', OPENSEARCH_USER], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', OPENSEARCH_USER], { encoding: 'utf8' }).stdout.trim());
  for (const directory of directories) chownRecursive(directory, uid, gid);
  allowTraversal(paths.localDir);
  return ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'];
}

/** The search user must be able to walk down to .local/ (a clone under /root would otherwise be closed to it). */
function allowTraversal(directory: string): void {
  const { root } = parse(directory);
  for (let current = dirname(directory); current !== root; current = dirname(current)) {
    const mode = statSync(current).mode;
    if ((mode & 0o001) === 0) {
      console.log(`[kbqa] granting others execute (traverse) permission on ${current} so ${OPENSEARCH_USER} can reach .local/`);
      chmodSync(current, mode | 0o001);
    }
  }
}

function chownRecursive(path: string, uid: number, gid: number): void {
  const stats = statSync(path);
  if (stats.uid !== uid) chownSync(path, uid, gid);
  if (stats.isDirectory()) for (const entry of readdirSync(path)) chownRecursive(join(path, entry), uid, gid);
}

export function opensearchSpec(paths: StackPaths, url: string, heap: string): ServerSpec {
  const { hostname, port } = new URL(url);
  const portNumber = Number(port || 9200);
  return {
    name: 'opensearch',
    portVariable: 'KBQA_OPENSEARCH_URL',
    host: hostname,
    port: portNumber,
    logFile: join(paths.opensearchLogs, 'stdout.log'),
    startTimeoutMs: 180_000,
    start() {
      const temporary = join(paths.localDir, 'tmp', 'opensearch');
      for (const directory of [paths.opensearchData, paths.opensearchLogs, temporary, paths.snapshotDir]) mkdirSync(directory, { recursive: true });
      const javaHome = findOpenSearchJava();
      const runAs = opensearchRunAs(paths, [paths.opensearchHome, paths.opensearchData, paths.opensearchLogs, temporary, paths.snapshotDir]);
      const args = [
        join(paths.opensearchHome, 'bin', 'opensearch'),
        '-Ediscovery.type=single-node',
        `-Enetwork.host=${hostname}`,
        `-Ehttp.port=${portNumber}`,
        // Keep the transport port away from a neighbouring cluster's default 9300.
        `-Etransport.port=${portNumber + 100}`,
        `-Epath.data=${paths.opensearchData}`,
        `-Epath.logs=${paths.opensearchLogs}`,
        // Filesystem snapshot repositories (kbqa backup) must live under path.repo.
        `-Epath.repo=${paths.snapshotDir}`,
        '-Ecluster.name=kbqa-local',
        // A developer's nearly-full disk must not flip the indices to read-only.
        '-Ecluster.routing.allocation.disk.threshold_enabled=false',
      ];
      const [command, ...rest] = runAs.length > 0 ? [...runAs, ...args] : args;
      return {
        command,
        args: rest,
        cwd: paths.opensearchHome,
        env: {
          ...process.env,
          OPENSEARCH_JAVA_HOME: javaHome,
          OPENSEARCH_JAVA_OPTS: `-Xms${heap} -Xmx${heap}`,
          OPENSEARCH_TMPDIR: temporary,
        },
      };
    },
    healthy: () =>
      httpHealthy(`${url.replace(/\/$/, '')}/_cluster/health`, (body) =>
        ['green', 'yellow'].includes((body as { status?: string }).status ?? ''),
      ),
  };
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
