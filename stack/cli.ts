// The commands behind `npm start`, `npm test`, `npm run test:unit` and `npm run stack:*` (see scripts/launch.mjs,
// which installs npm dependencies and runs this file on the pinned Node 24).
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig, type Config } from '../service/config.ts';
import { API_ENVIRONMENT_DEFAULTS, API_NODE_FLAGS } from '../service/runtimeFlags.ts';
import {
  ProvisionError,
  provisionAll,
  provisionBrowser,
  provisionEmbedder,
  provisionSchemathesis,
  stackPathsFor,
  type StackPaths,
} from './provision.ts';
import {
  busyPorts,
  ferretdbSpec,
  openSearchClusterHealth,
  openSearchNodeSpecs,
  runningPid,
  startServer,
  startedServers,
  stopServer,
  type ServerSpec,
} from './processes.ts';
import { onlyUnitFiles, stackTierFiles, unitTierEnvironment, unitTierFiles } from './testTiers.ts';
import { WEB_DIST, buildWebIfStale } from './webBuild.ts';

function specs(config: Config, paths: StackPaths): ServerSpec[] {
  return [ferretdbSpec(paths, config.mongodb.url), ...openSearchNodeSpecs(config, paths)];
}

/**
 * `--nodes N` (or `--nodes=N`) after any command: KBQA_OPENSEARCH_NODES for this run and every process it starts
 * (the API then reads every node's URL). Returns the other arguments.
 */
function takeNodesOption(args: string[]): string[] {
  const rest: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index];
    if (arg === '--nodes' || arg.startsWith('--nodes=')) {
      const value = arg === '--nodes' ? args[(index += 1)] : arg.slice('--nodes='.length);
      if (value === undefined || value === '')
        throw new ProvisionError('--nodes needs a number of OpenSearch nodes, like --nodes 3');
      process.env.KBQA_OPENSEARCH_NODES = value;
    } else {
      rest.push(arg);
    }
  }
  return rest;
}

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)}s`;
}

/** Provisions what is not cached and starts what is not running; returns the names of the servers it started. */
async function stackUp(config: Config, paths: StackPaths): Promise<string[]> {
  const began = Date.now();
  provisionAll(paths);
  const started: string[] = [];
  const all = specs(config, paths);
  const busy = await busyPorts(paths, all);
  if (busy.length > 0) throw new ProvisionError(busy.join('\n'));
  const cluster = config.opensearch.nodes > 1;
  console.log(
    `[kbqa] starting ${all.map((spec) => spec.name).join(', ')} (OpenSearch takes ~30–60 s${cluster ? `, a ${config.opensearch.nodes}-node cluster 1–2 min` : ''})…`,
  );
  const results = await Promise.allSettled(all.map((spec) => startServer(paths, spec)));
  const failures: string[] = [];
  results.forEach((result, index) => {
    const spec = all[index];
    if (result.status === 'fulfilled') {
      if (result.value) started.push(spec.name);
      console.log(
        `[kbqa] ${spec.name} ${result.value ? 'started' : 'already running'} on ${spec.host}:${spec.port} (log: ${spec.logFile})`,
      );
    } else {
      failures.push(result.reason instanceof Error ? result.reason.message : String(result.reason));
    }
  });
  if (failures.length > 0) {
    for (const name of started) await stopServer(paths, name);
    throw new ProvisionError(failures.join('\n\n'));
  }
  console.log(`[kbqa] stack ready in ${seconds(began)}`);
  return started;
}

async function stackDown(paths: StackPaths, names: string[]): Promise<void> {
  // In parallel: nothing depends on the order, and OpenSearch alone takes seconds to stop.
  await Promise.all(
    names.map(async (name) => {
      if (await stopServer(paths, name)) console.log(`[kbqa] ${name} stopped`);
    }),
  );
}

/** Every configured server (each OpenSearch node with the cluster as it sees it), then any other server kbqa runs here. */
async function stackStatus(config: Config, paths: StackPaths): Promise<boolean> {
  let allHealthy = true;
  const configured = specs(config, paths);
  const nodeUrls = new Map(openSearchNodeSpecs(config, paths).map((node) => [node.name, node.url]));
  const others = startedServers(paths).filter((name) => !configured.some((spec) => spec.name === name));
  const width = Math.max(...[...configured.map((spec) => spec.name), ...others].map((name) => name.length)) + 2;
  for (const spec of configured) {
    const pid = runningPid(paths, spec.name);
    const healthy = await spec.healthy();
    allHealthy &&= healthy;
    const url = nodeUrls.get(spec.name);
    const health = url === undefined ? null : await openSearchClusterHealth(url);
    // A node that answers while its cluster lacks a node (or a primary) is up but not healthy.
    const state = healthy ? 'healthy ' : health ? 'degraded' : 'down    ';
    const seen = health
      ? ` (${health.cluster_name}: ${health.status}, ${health.number_of_nodes} node${health.number_of_nodes === 1 ? '' : 's'})`
      : '';
    console.log(
      `${spec.name.padEnd(width)}${state} ${spec.host}:${spec.port} ${pid ? `pid ${pid}` : health || healthy ? '(not started by kbqa)' : '(not running)'}${seen}`,
    );
  }
  for (const name of others) {
    const pid = runningPid(paths, name);
    if (pid === null) continue;
    console.log(
      `${name.padEnd(width)}running pid ${pid}, not part of this configuration (KBQA_OPENSEARCH_NODES=${config.opensearch.nodes}); stack:down stops it`,
    );
  }
  console.log(`${'.local/'.padEnd(width)}${formatBytes(directorySize(paths.localDir))} on disk`);
  if (paths.instanceDir !== paths.localDir)
    console.log(`${paths.instanceDir} ${formatBytes(directorySize(paths.instanceDir))} on disk`);
  return allHealthy;
}

function directorySize(path: string): number {
  if (!existsSync(path)) return 0;
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.size;
  return readdirSync(path).reduce((total, entry) => total + directorySize(join(path, entry)), 0);
}

function formatBytes(bytes: number): string {
  return bytes > 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(2)} GiB` : `${(bytes / 1024 ** 2).toFixed(0)} MiB`;
}

function runForeground(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { stdio: 'inherit', env });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolvePromise(code ?? (signal ? 1 : 0));
    });
  });
}

/**
 * Builds web/dist when it is missing or stale. A KBQA_WEB_DIST elsewhere is someone's own build (a deployment's):
 * it is served as it is, never built over.
 */
function buildWeb(config: Config, options: { force?: boolean } = {}): void {
  if (config.web.distDir !== resolve(WEB_DIST)) {
    console.log(
      `[kbqa] KBQA_WEB_DIST=${config.web.distDir}: serving that build as it is (the web build writes ${WEB_DIST} only)`,
    );
    return;
  }
  buildWebIfStale(process.cwd(), options);
}

/**
 * The lint (eslint.config.mjs: no regular expression that can run super-linearly on its input). Needs no stack, so
 * `npm test` runs it before starting anything and a ReDoS-prone pattern fails the run in seconds.
 */
async function lint(args: string[] = []): Promise<number> {
  const code = await runForeground(process.execPath, [join('node_modules', 'eslint', 'bin', 'eslint.js'), ...args]);
  // ESLint exits 1 when rules report problems, 2 when it could not run (configuration error, crash).
  if (code === 0) {
    console.log('[kbqa] lint passed: no regular expression that can take super-linear time');
  } else if (code === 1) {
    console.error('[kbqa] lint failed: each regular expression above can take super-linear time on its input (ReDoS);');
    console.error('[kbqa] rewrite it to run in linear time (eslint.config.mjs says why).');
  } else {
    console.error(`[kbqa] lint could not run (eslint exited ${code}); see its message above.`);
  }
  if (code !== 0) return code;
  // The formatter (.prettierrc.json, 120 columns): the code as Prettier writes it, or the files it would change.
  const formatted = await runForeground(process.execPath, [
    join('node_modules', 'prettier', 'bin', 'prettier.cjs'),
    '--check',
    '--log-level=warn',
    '.',
  ]);
  if (formatted === 0) console.log('[kbqa] format passed: the code is as Prettier writes it');
  else
    console.error('[kbqa] format failed: the files above are not as Prettier writes them; run npx prettier --write .');
  return formatted;
}

/**
 * The TypeScript projects `npm test` checks before any test runs: Node strips types without checking them, so a type
 * error would otherwise land unseen. tsconfig.json covers service, test, bench, stack, bin and clients; the web app
 * has its own (DOM types, the bundler's resolution).
 */
export const TYPESCRIPT_PROJECTS = ['tsconfig.json', join('web', 'tsconfig.json')];

/** `tsc --noEmit` over every project; tsc prints each error with its file, line and column. */
async function typecheck(): Promise<number> {
  for (const project of TYPESCRIPT_PROJECTS) {
    const code = await runForeground(process.execPath, [
      join('node_modules', 'typescript', 'bin', 'tsc'),
      '--noEmit',
      '--pretty',
      'false',
      '-p',
      project,
    ]);
    if (code !== 0) {
      console.error(`[kbqa] type check failed in ${project}: each error above names its file and line`);
      return code;
    }
  }
  console.log(`[kbqa] type check passed: ${TYPESCRIPT_PROJECTS.join(', ')}`);
  return 0;
}

/** ava's options (`--match=…`, `--serial`) and the test files named, apart. */
function splitTestArguments(args: string[]): [options: string[], files: string[]] {
  return [args.filter((arg) => arg.startsWith('-')), args.filter((arg) => !arg.startsWith('-'))];
}

async function runUnitTier(paths: StackPaths, files: string[], options: string[]): Promise<number> {
  // A count guard: an empty list would make ava fall back to every test file, the stack tier included.
  if (files.length === 0) {
    console.error('[kbqa] no unit test files found under test/unit/');
    return 1;
  }
  // The embedder's model is a file, not a server: the answerer's and the model pool's unit tests read it. On a fresh
  // clone it is extracted here (once, cached in .local/models), before any server would be provisioned.
  provisionEmbedder(paths);
  console.log(`[kbqa] unit tier: ${files.length} test files, no server (the stores' addresses point at a closed port)`);
  return runForeground(
    process.execPath,
    [join('node_modules', 'ava', 'entrypoints', 'cli.mjs'), ...options, ...files],
    unitTierEnvironment(process.env),
  );
}

async function main(): Promise<number> {
  const [command, ...given] = process.argv.slice(2);
  const rest = takeNodesOption(given);
  const config = loadConfig();
  const paths = stackPathsFor(config);
  switch (command) {
    case 'stack:up':
      await stackUp(config, paths);
      return 0;
    case 'stack:down':
      // Whatever kbqa started in this instance: the single node and/or a cluster's nodes, and FerretDB.
      await stackDown(paths, startedServers(paths));
      return 0;
    case 'stack:status':
      return (await stackStatus(config, paths)) ? 0 : 1;
    case 'build:web':
      buildWeb(config, { force: rest.includes('--force') });
      return 0;
    case 'start': {
      buildWeb(config);
      const started = await stackUp(config, paths);
      console.log(
        `[kbqa] API on http://${config.host}:${config.port} (Ctrl-C stops it${started.length ? ` and ${started.join(', ')}` : ''})`,
      );
      // As the Docker image runs it (service/runtimeFlags.ts); the caller's MALLOC_ARENA_MAX wins.
      const code = await runForeground(process.execPath, [...API_NODE_FLAGS, join('service', 'main.ts'), ...rest], {
        ...API_ENVIRONMENT_DEFAULTS,
        ...process.env,
      });
      await stackDown(paths, started);
      return code;
    }
    case 'lint':
      return lint(rest);
    case 'typecheck':
      return typecheck();
    case 'test:unit': {
      // Never starts the stack: the unit tier needs no server (stack/testTiers.ts), only the embedder's model file.
      const [options, files] = splitTestArguments(rest);
      return runUnitTier(paths, files.length > 0 ? files : unitTierFiles(process.cwd()), options);
    }
    case 'test': {
      const linted = await lint();
      if (linted !== 0) {
        console.error('[kbqa] tests not run: the lint must pass first (npm run lint runs it alone).');
        return linted;
      }
      const typed = await typecheck();
      if (typed !== 0) {
        console.error('[kbqa] tests not run: the type check must pass first (npm run typecheck runs it alone).');
        return typed;
      }
      const [options, files] = splitTestArguments(rest);
      if (onlyUnitFiles(files)) return runUnitTier(paths, files, options);
      // Both tiers, once each: the unit tier first (seconds, no server), so a broken pure function fails the run
      // before the stack is started.
      if (files.length === 0) {
        const unit = await runUnitTier(paths, unitTierFiles(process.cwd()), options);
        if (unit !== 0) {
          console.error(
            '[kbqa] the stack tier was not run: the unit tier must pass first (npm run test:unit runs it alone).',
          );
          return unit;
        }
      }
      const stackFiles = files.length > 0 ? files : stackTierFiles(process.cwd());
      buildWeb(config);
      // The browser tests (test/helpers/browser.ts) read the Chromium to drive from KBQA_CHROMIUM.
      const chromium = provisionBrowser();
      // The short Schemathesis run (test/schemathesis.test.ts) reads the fuzzer to run from KBQA_SCHEMATHESIS.
      const schemathesis = provisionSchemathesis(config.localDir);
      const started = await stackUp(config, paths);
      console.log(`[kbqa] stack tier: ${stackFiles.length} test files`);
      const code = await runForeground(
        process.execPath,
        [join('node_modules', 'ava', 'entrypoints', 'cli.mjs'), ...options, ...stackFiles],
        {
          ...process.env,
          KBQA_CHROMIUM: chromium,
          KBQA_SCHEMATHESIS: schemathesis,
        },
      );
      await stackDown(paths, started);
      return code;
    }
    case 'fuzz': {
      // The long Schemathesis run: the same test file as npm test's short run, with a bigger budget per operation.
      const schemathesis = provisionSchemathesis(config.localDir);
      const started = await stackUp(config, paths);
      const code = await runForeground(
        process.execPath,
        [join('node_modules', 'ava', 'entrypoints', 'cli.mjs'), 'test/schemathesis.test.ts', '--timeout=60m'],
        {
          ...process.env,
          KBQA_SCHEMATHESIS: schemathesis,
          KBQA_FUZZ_EXAMPLES: process.env.KBQA_FUZZ_EXAMPLES ?? '100',
          KBQA_FUZZ_PHASES: process.env.KBQA_FUZZ_PHASES ?? 'examples,coverage,fuzzing,stateful',
          ...Object.fromEntries(
            rest
              .filter((arg) => arg.startsWith('--seed='))
              .map((arg) => ['KBQA_FUZZ_SEED', arg.slice('--seed='.length)]),
          ),
        },
      );
      await stackDown(paths, started);
      return code;
    }
    case 'dev:web':
      // Vite's dev server with hot reload; it forwards /api, /healthz and /readyz to the API (run `npm start` too).
      return runForeground(process.execPath, [
        join('node_modules', 'vite', 'bin', 'vite.js'),
        '--config',
        join('web', 'vite.config.ts'),
        ...rest,
      ]);
    case 'resilience':
    case 'soak':
      // Each runs a stack of its own (bench/stackInstance.ts): the dev stack may run beside it, untouched.
      buildWeb(config);
      return runForeground(process.execPath, [join('bench', `${command}.ts`), ...rest]);
    case 'bench': {
      const code = await runForeground(process.execPath, [join('bench', 'run.ts'), ...rest]);
      return code;
    }
    default:
      console.error(
        'usage: stack/cli.ts start|test|test:unit|fuzz [-- --seed=N]|lint|typecheck|bench|dev:web|build:web [--force]|stack:up|stack:down|stack:status [--nodes N]',
      );
      return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`[kbqa] ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
