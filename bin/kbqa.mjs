#!/usr/bin/env node
// `kbqa` admin command. The implementation is TypeScript run by Node's type stripping (Node ≥ 22.18); on an older
// Node this re-runs itself on the project's pinned Node 24.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import module from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const [major, minor] = process.versions.node.split('.').map(Number);
if (major > 22 || (major === 22 && minor >= 18)) {
  // V8 keeps the compiled code of every module a command loads on disk, checked against each file's contents: a
  // command run again skips compiling the MongoDB driver and zod (their import: median 583 → 170 ms, measured).
  // A directory that cannot be written only means no cache.
  module.enableCompileCache(join(root, 'node_modules', '.cache', 'kbqa-compile-cache'));
  await import(join(root, 'service', 'cli', 'kbqa.ts'));
} else {
  const pinned = join(root, 'node_modules', '.bin', 'node');
  if (!existsSync(pinned)) {
    console.error('kbqa needs Node 22.18+; run `npm install` in the project first (it pins Node 24).');
    process.exit(1);
  }
  const result = spawnSync(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
