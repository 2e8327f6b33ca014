// Per-phase resource accounting: the API's peak RSS, and the CPU each process of the stack used (from /proc), so a
// slow phase shows whether the API was busy or waiting on OpenSearch / FerretDB.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiProcess } from './apiProcess.ts';
import { round } from './stats.ts';

/**
 * utime + stime of a process and all its threads, in seconds (null when it cannot be read). The kernel counts in
 * clock ticks (USER_HZ, 100 on Linux): a reading is exact to 10 ms.
 */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may contain spaces: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** The pids of the local stack's servers, when `npm run stack:up` started them (.local/run/*.pid). */
export function stackPids(localDir: string): Record<string, number> {
  const pids: Record<string, number> = {};
  for (const name of ['opensearch', 'ferretdb']) {
    const file = join(localDir, 'run', `${name}.pid`);
    if (!existsSync(file)) continue;
    const pid = Number(readFileSync(file, 'utf8').trim());
    if (Number.isInteger(pid) && cpuSeconds(pid) !== null) pids[name] = pid;
  }
  return pids;
}

export interface PhaseResources {
  seconds: number;
  /** VmHWM over the phase (reset at its start when the kernel allows). */
  api_peak_rss_mb: number | null;
  api_sampled_max_rss_mb: number;
  /** CPU used over the phase, in % of ONE core (200 % = both cores of a 2-core machine). */
  cpu_percent: Record<string, number>;
  /** The same CPU in milliseconds (for per-chunk figures). */
  cpu_ms: Record<string, number>;
}

export function startPhase(
  api: ApiProcess,
  canResetPeak: boolean,
  stack: Record<string, number>,
): () => PhaseResources {
  if (canResetPeak) api.resetPeak();
  const stopSampling = api.sampleRss();
  const pids: Record<string, number> = { api: api.pid, ...stack };
  const cpuAtStart = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
  const benchAtStart = process.cpuUsage();
  const started = performance.now();
  return () => {
    const seconds = (performance.now() - started) / 1000;
    const cpu: Record<string, number> = {};
    const cpuMs: Record<string, number> = {};
    for (const [name, pid] of Object.entries(pids)) {
      const before = cpuAtStart[name];
      const after = cpuSeconds(pid);
      if (before !== null && before !== undefined && after !== null) {
        cpu[name] = round(((after - before) / seconds) * 100, 0);
        cpuMs[name] = round((after - before) * 1000, 0);
      }
    }
    const bench = process.cpuUsage(benchAtStart);
    cpu.bench = round(((bench.user + bench.system) / 1e6 / seconds) * 100, 0);
    cpuMs.bench = round((bench.user + bench.system) / 1000, 0);
    const sampled = stopSampling();
    const peak = api.memory()?.peakMb ?? null;
    return {
      seconds: round(seconds, 2),
      api_peak_rss_mb: peak === null ? null : round(peak),
      api_sampled_max_rss_mb: round(sampled),
      cpu_percent: cpu,
      cpu_ms: cpuMs,
    };
  };
}
