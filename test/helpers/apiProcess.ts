// A real API process for the tests that crash or stop one: `node service/main.ts` on a free port, ready once
// /healthz answers. Unlike the in-process app (app.ts), it can be SIGKILLed or SIGTERMed and its exit observed, and
// its job runner claims every job in its database, as a deployed instance does. (Spawn and readiness follow
// bench/apiProcess.ts, which tests do not import.)
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { callJson, type CallOptions, type CallResult } from './http.ts';
import { recordResponse } from './openapiCheck.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HOST = '127.0.0.1';

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Date.now() when the exit was seen. */
  at: number;
}

export interface ApiProcess {
  url: string;
  pid: number;
  /** Resolves when the process has exited (never rejects). */
  exited: Promise<ProcessExit>;
  /** The exit, once it happened. */
  exit(): ProcessExit | null;
  /** The last lines the process printed (for failure messages). */
  tail(): string;
  /** fetch() against the process with an optional API key; JSON bodies are encoded for you. */
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
  signal(signal: NodeJS.Signals): void;
  /** SIGKILL unless already gone, and wait for the exit: for `test.after.always`. */
  kill(): Promise<ProcessExit>;
}

/**
 * Spawns the API with `env` over the test process's environment (which points at the running stack), and waits
 * until /healthz answers 200. Throws with the process's last lines if it exits or does not answer in time.
 * `onLine` sees every line the process prints (its log, with KBQA_LOG_LEVEL=info one line per request).
 */
export async function startApiProcess(
  env: Record<string, string>,
  readyTimeoutMs = 120_000,
  onLine?: (line: string) => void,
): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['service/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      KBQA_HOST: HOST,
      KBQA_PORT: String(port),
      KBQA_LOG_LEVEL: 'warn',
      KBQA_METRICS_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  // Per stream: a chunk may end in the middle of a line, whose rest comes with the next one.
  const keep = () => {
    let partial = '';
    return (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        if (!line.trim()) continue;
        lines.push(line);
        onLine?.(line);
      }
      if (lines.length > 60) lines.splice(0, lines.length - 60);
    };
  };
  child.stdout.on('data', keep());
  child.stderr.on('data', keep());
  let exit: ProcessExit | null = null;
  const exited = new Promise<ProcessExit>((resolveExit) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal, at: Date.now() };
      resolveExit(exit);
    });
    // A failed spawn emits 'error' and may never emit 'exit'.
    child.once('error', () => {
      exit ??= { code: null, signal: null, at: Date.now() };
      resolveExit(exit);
    });
  });
  const url = `http://${HOST}:${port}`;
  const tail = () => lines.slice(-20).join('\n');

  const api: ApiProcess = {
    url,
    pid: child.pid ?? -1,
    exited,
    exit: () => exit,
    tail,
    async call(method, path, options) {
      // Checked against the OpenAPI description like the in-process app's responses (helpers/openapiCheck.ts).
      const result = await callJson(url, method, path, options);
      const contentType = result.headers.get('content-type');
      recordResponse({
        method,
        path: path.split('?')[0],
        status: result.status,
        contentType,
        body: result.body,
        where: `API process ${url}`,
      });
      return result;
    },
    signal(signal) {
      if (!exit) child.kill(signal);
    },
    async kill() {
      if (!exit) child.kill('SIGKILL');
      return exited;
    },
  };

  const deadline = Date.now() + readyTimeoutMs;
  while (true) {
    if (exit) {
      const { code, signal } = exit as ProcessExit;
      throw new Error(`the API process exited during start-up (code ${code}, signal ${signal}):\n${tail()}`);
    }
    try {
      const response = await fetch(`${url}/healthz`);
      await response.body?.cancel();
      if (response.status === 200) return api;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await api.kill();
      throw new Error(`the API process did not answer /healthz within ${readyTimeoutMs / 1000} s:\n${tail()}`);
    }
    await sleep(100);
  }
}

// For tests of several API processes on one port (node:cluster) and their one /metrics.

/** Polls `probe` until it returns something other than null/false, or throws after `timeoutMs` saying what it awaited. */
export async function until<T>(
  what: string,
  timeoutMs: number,
  probe: () => T | null | false | Promise<T | null | false>,
  context = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const value = await probe();
    if (value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s\n${context()}`);
    await sleep(100);
  }
}

/** GET on a connection of its own (the primary hands out connections, not requests, in turn). */
export function getOnNewConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { agent: false, headers: { connection: 'close' } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** The samples of one metric in a Prometheus text exposition: labels as written ({a="b",…}, or '') → value. */
export function metricSamples(exposition: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== '{' && line[name.length] !== ' ')) continue;
    const space = line.lastIndexOf(' ');
    found.set(line.slice(name.length, space), Number(line.slice(space + 1)));
  }
  return found;
}

/** GET /metrics (or any text), failing with the URL when it does not answer 200. */
export async function scrapeMetrics(url: string): Promise<string> {
  const response = await fetch(url).catch((error) => {
    throw new Error(`scrape ${url}: ${error.cause?.message ?? error.message}`);
  });
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status}`);
  return response.text();
}

/** VmRSS and VmHWM (the peak RSS since the process started) in MiB, from /proc/<pid>/status. */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(
      status
        .split('\n')
        .find((line) => line.startsWith(`${field}:`))
        ?.split(/\s+/)[1] ?? Number.NaN,
    );
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}
