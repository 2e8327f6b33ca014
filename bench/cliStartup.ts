// The `kbqa` command's start-up (issue 26, item 5): `kbqa --help` and `kbqa keys create`, each run as a fresh process
// on this Node — the pinned Node 24 the README names, which `npm run bench` runs on — alternately, a warm-up first,
// the median of the measured runs judged. Wall time is from spawning the process until it exited and closed its
// output, what a person at a shell waits. One more run of each with a module-load hook counts what it loads.
// Also, for information: `kbqa --help` through the machine's own Node when that is another one (an older Node
// hands off to the pinned one: the launcher's one extra process start).
import { execFileSync, spawn } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import os from 'node:os';
import { delimiter, join } from 'node:path';
import { HEAVY_PACKAGES, packagesOf, runTraced } from '../test/helpers/moduleTrace.ts';
import { round } from './stats.ts';

export const CLI_HELP_TARGET_MS = 500;
export const CLI_KEYS_CREATE_TARGET_MS = 1500;

export interface CliCommandTiming {
  /** The command line after `kbqa`, the email replaced by E. */
  command: string;
  runs_ms: number[];
  median_ms: number;
  min_ms: number;
  max_ms: number;
  /** Modules the process loaded (file modules, ours and node_modules'), from a traced run. */
  modules: number;
  /** Distinct npm packages among them. */
  packages: number;
  /** Which of the heavy packages (test/helpers/moduleTrace.ts) it loaded. */
  heavy_packages: string[];
}

export interface CliStartupResult {
  method: string;
  node: string;
  runs: number;
  warmup: number;
  load_average_at_start: number[];
  help: CliCommandTiming;
  keys_create: CliCommandTiming;
  /** `kbqa --help` through the first `node` on PATH that is not this one, when its version differs; else null. */
  machine_node: { path: string; version: string; help_runs_ms: number[]; help_median_ms: number } | null;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Milliseconds from spawning `node args…` until it exited and closed stdout/stderr; throws unless it exited 0. */
function timedRun(node: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(node, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve(ms);
      else reject(new Error(`${node} ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
    });
  });
}

/** The machine's own Node: the first executable `node` on PATH that is not this one (npm scripts put the pinned one first). */
function machineNode(): string | null {
  const self = realpathSync(process.execPath);
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    if (directory.length === 0) continue;
    const candidate = join(directory, 'node');
    try {
      accessSync(candidate, constants.X_OK);
      if (realpathSync(candidate) !== self) return candidate;
    } catch {
      // not here: the next PATH entry
    }
  }
  return null;
}

function timing(command: string, runs: number[], traced: Awaited<ReturnType<typeof runTraced>>): CliCommandTiming {
  const packages = packagesOf(traced.modules);
  return {
    command,
    runs_ms: runs.map((ms) => round(ms, 0)),
    median_ms: round(median(runs), 0),
    min_ms: round(Math.min(...runs), 0),
    max_ms: round(Math.max(...runs), 0),
    modules: traced.modules.length,
    packages: packages.length,
    heavy_packages: packages.filter((name) => (HEAVY_PACKAGES as readonly string[]).includes(name)),
  };
}

export async function measureCliStartup(options: {
  root: string;
  /** The bench's environment (its own database: the keys are created there). */
  env: NodeJS.ProcessEnv;
  /** An existing user's email, for `keys create`. */
  email: string;
  runs: number;
  warmup: number;
  log: (line: string) => void;
}): Promise<CliStartupResult> {
  const { root, env, email } = options;
  const loadAverage = os.loadavg().map((value) => round(value, 2));
  const help = ['bin/kbqa.mjs', '--help'];
  const keysCreate = (run: number) => [
    'bin/kbqa.mjs',
    'keys',
    'create',
    '--email',
    email,
    '--name',
    `bench-cli-${run}`,
  ];
  const helpRuns: number[] = [];
  const keysRuns: number[] = [];
  for (let run = 0; run < options.warmup + options.runs; run += 1) {
    const helpMs = await timedRun(process.execPath, help, root, env);
    const keysMs = await timedRun(process.execPath, keysCreate(run), root, env);
    if (run < options.warmup) continue;
    helpRuns.push(helpMs);
    keysRuns.push(keysMs);
  }
  const helpTraced = await runTraced(help, { cwd: root, env });
  const keysTraced = await runTraced(keysCreate(options.warmup + options.runs), { cwd: root, env });
  if (helpTraced.code !== 0 || keysTraced.code !== 0)
    throw new Error(`a traced kbqa run failed: ${helpTraced.stderr}${keysTraced.stderr}`);
  const result: CliStartupResult = {
    method:
      `Each command run as a fresh process (\`${process.execPath} bin/kbqa.mjs …\`, cwd the project), --help and keys create alternately, ` +
      `${options.warmup} warm-up run(s) of each first, then ${options.runs} measured: wall time from spawn until the process exited and closed ` +
      "its output. keys create makes a real key for a user of the bench's own database (opening the store included). Module counts " +
      'from one more run of each with a module-load hook (test/helpers/moduleTraceHook.ts).',
    node: process.version,
    runs: options.runs,
    warmup: options.warmup,
    load_average_at_start: loadAverage,
    help: timing('--help', helpRuns, helpTraced),
    keys_create: timing('keys create --email E --name N', keysRuns, keysTraced),
    machine_node: null,
  };
  const machine = machineNode();
  if (machine) {
    const version = execFileSync(machine, ['--version'], { encoding: 'utf8' }).trim();
    if (version !== process.version) {
      const runs: number[] = [];
      for (let run = 0; run < options.warmup + options.runs; run += 1) {
        const ms = await timedRun(machine, help, root, env);
        if (run >= options.warmup) runs.push(ms);
      }
      result.machine_node = {
        path: machine,
        version,
        help_runs_ms: runs.map((ms) => round(ms, 0)),
        help_median_ms: round(median(runs), 0),
      };
    }
  }
  options.log(
    `cli: kbqa --help median ${result.help.median_ms} ms (${result.help.modules} modules), keys create median ${result.keys_create.median_ms} ms ` +
      `(${result.keys_create.modules} modules; heavy: ${result.keys_create.heavy_packages.join(', ') || 'none'}) on Node ${result.node}` +
      (result.machine_node
        ? `; --help via the machine's Node ${result.machine_node.version}: ${result.machine_node.help_median_ms} ms`
        : ''),
  );
  return result;
}

/** The section of the bench report. */
export function renderCliStartup(cli: CliStartupResult | { error: string } | undefined): string[] {
  if (!cli) return [];
  const lines = ['', "## The `kbqa` command's start-up", ''];
  if ('error' in cli) return [...lines, `**The phase failed:** ${cli.error}`];
  lines.push(
    cli.method,
    '',
    `Node ${cli.node}; load average (1/5/15 min) at the phase's start: ${cli.load_average_at_start.join(' / ')}.`,
    '',
    '| command | median ms | min – max | runs (ms) | modules loaded | packages | heavy packages loaded |',
    '|---|---:|---:|---|---:|---:|---|',
  );
  for (const row of [cli.help, cli.keys_create]) {
    lines.push(
      `| \`kbqa ${row.command}\` | ${row.median_ms} | ${row.min_ms} – ${row.max_ms} | ${row.runs_ms.join(', ')} | ${row.modules} | ${row.packages} | ${row.heavy_packages.join(', ') || 'none'} |`,
    );
  }
  if (cli.machine_node) {
    const node = cli.machine_node;
    lines.push(
      '',
      `Through the machine's own Node (${node.path}, ${node.version}): \`kbqa --help\` median ${node.help_median_ms} ms (runs ${node.help_runs_ms.join(', ')}). ` +
        'A Node older than 22.18 cannot strip TypeScript types, so bin/kbqa.mjs hands the command to the pinned Node 24 (one more process start); ' +
        'on Node 22.18+ it runs in its own process. `npx kbqa` puts node_modules/.bin first on PATH, so it runs on the pinned Node directly.',
    );
  }
  return lines;
}
