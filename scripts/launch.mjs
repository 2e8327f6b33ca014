#!/usr/bin/env node
// Entry point of every npm script. It must run on whatever Node the machine has (Node 20 here), because on a fresh
// clone the pinned Node 24 (the `node` devDependency) is not installed yet. It installs dependencies when they are
// missing or stale, then hands over to the TypeScript stack command running on Node 24.
import { spawnSync, spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, delimiter } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const bin = join(root, 'node_modules', '.bin');
const pinnedNode = join(bin, 'node');

function dependenciesAreStale() {
  const marker = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(pinnedNode) || !existsSync(marker)) return true;
  const lock = join(root, 'package-lock.json');
  return existsSync(lock) && statSync(lock).mtimeMs > statSync(marker).mtimeMs;
}

if (dependenciesAreStale()) {
  console.log('[kbqa] installing npm dependencies (first run; takes a minute)…');
  // onnxruntime-node's postinstall would otherwise try to download CUDA libraries, which fails offline; its CPU
  // binaries ship inside the npm package.
  const env = { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip', ONNXRUNTIME_NODE_INSTALL_CUDA: 'skip' };
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const hasLock = existsSync(join(root, 'package-lock.json'));
  const result = spawnSync(npm, [hasLock ? 'ci' : 'install', '--no-audit', '--no-fund'], {
    cwd: root,
    env,
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    console.error('[kbqa] npm install failed; fix the error above and run the command again.');
    process.exit(result.status ?? 1);
  }
}

const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };
const child = spawn(pinnedNode, [join(root, 'stack', 'cli.ts'), ...process.argv.slice(2)], {
  cwd: root,
  env,
  stdio: 'inherit',
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
