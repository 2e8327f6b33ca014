// The bench's own API process: `node service/main.ts` on a free port, so its memory can be read from /proc and it
// can be stopped at the end without touching anyone else's API.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { API_ENVIRONMENT_DEFAULTS, API_NODE_FLAGS } from '../service/runtimeFlags.ts';

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export interface ApiProcess {
  url: string;
  pid: number;
  /** The last lines the process printed (for failure messages). */
  tail(): string;
  /** VmRSS / VmHWM (peak RSS since start or the last resetPeak) in MiB, from /proc/<pid>/status. */
  memory(): { rssMb: number; peakMb: number } | null;
  /** Resets VmHWM (writes 5 to /proc/<pid>/clear_refs); false when the kernel or permissions refuse. */
  resetPeak(): boolean;
  /** Samples VmRSS every `intervalMs` until the returned function is called; it returns the highest sample. */
  sampleRss(intervalMs?: number): () => number;
  stop(): Promise<void>;
  /** Synchronous last resort for process exit handlers. */
  kill(): void;
}

/** VmRSS / VmHWM of a process in MiB, from /proc/<pid>/status; null when it is gone. */
export function processMemory(pid: number): { rssMb: number; peakMb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    // Lines like "VmRSS:     123456 kB".
    const field = (name: string) => {
      const line = status.split('\n').find((candidate) => candidate.startsWith(`${name}:`));
      return (line ? Number.parseInt(line.slice(name.length + 1).trim(), 10) : Number.NaN) / 1024;
    };
    return { rssMb: field('VmRSS'), peakMb: field('VmHWM') };
  } catch {
    return null;
  }
}

export async function startApi(options: {
  root: string;
  env: NodeJS.ProcessEnv;
  readyTimeoutMs?: number;
  /** Node flags before service/main.ts (default API_NODE_FLAGS, as `npm start` passes them). */
  nodeFlags?: readonly string[];
}): Promise<ApiProcess> {
  const host = '127.0.0.1';
  const port = await freePort(host);
  const child: ChildProcess = spawn(
    process.execPath,
    [...(options.nodeFlags ?? API_NODE_FLAGS), join(options.root, 'service', 'main.ts')],
    {
      cwd: options.root,
      env: {
        // As `npm start` and the Docker image run the API (service/runtimeFlags.ts), unless the caller says.
        ...API_ENVIRONMENT_DEFAULTS,
        ...options.env,
        KBQA_HOST: host,
        KBQA_PORT: String(port),
        KBQA_LOG_LEVEL: 'warn',
        KBQA_METRICS_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(line);
    if (lines.length > 60) lines.splice(0, lines.length - 60);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exitPromise = new Promise<void>((resolveExit) =>
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      resolveExit();
    }),
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not spawn the API process');
  const url = `http://${host}:${port}`;
  const tail = () => lines.slice(-20).join('\n');

  const api: ApiProcess = {
    url,
    pid,
    tail,
    memory: () => processMemory(pid),
    resetPeak() {
      try {
        writeFileSync(`/proc/${pid}/clear_refs`, '5');
        return true;
      } catch {
        return false;
      }
    },
    sampleRss(intervalMs = 200) {
      let highest = processMemory(pid)?.rssMb ?? 0;
      const timer = setInterval(() => {
        highest = Math.max(highest, processMemory(pid)?.rssMb ?? 0);
      }, intervalMs);
      timer.unref();
      return () => {
        clearInterval(timer);
        return Math.max(highest, processMemory(pid)?.rssMb ?? 0);
      };
    },
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const timeout = new Promise<'timeout'>((resolveTimeout) =>
        setTimeout(() => resolveTimeout('timeout'), 8000).unref(),
      );
      if ((await Promise.race([exitPromise, timeout])) === 'timeout' && !exited) {
        child.kill('SIGKILL');
        await exitPromise;
      }
    },
    kill() {
      if (!exited) child.kill('SIGKILL');
    },
  };

  // Ready once /readyz answers 200 (OpenSearch with its plugins, MongoDB and the embedder are all there).
  const deadline = Date.now() + (options.readyTimeoutMs ?? 180_000);
  while (true) {
    if (exited) {
      const { code, signal } = exited;
      throw new Error(`the API process exited during start-up (code ${code}, signal ${signal}):\n${tail()}`);
    }
    try {
      const response = await fetch(`${url}/readyz`);
      if (response.status === 200) return api;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      api.kill();
      throw new Error(
        `the API did not become ready within ${(options.readyTimeoutMs ?? 180_000) / 1000} s:\n${tail()}`,
      );
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 250));
  }
}
