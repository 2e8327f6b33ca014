#!/usr/bin/env node
// `kbqa` admin command. The implementation is TypeScript run by Node's type stripping (Node ≥ 22.18); on an older
// Node this re-runs itself on the project's pinned Node 24.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const [major, minor] = process.versions.node.split('.').map(Number);
if (major > 22 || (major === 22 && minor >= 18)) {
  await import(join(root, 'service', 'cli', 'kbqa.ts'));
} else {
  const pinned = join(root, 'node_modules', '.bin', 'node');
  if (!existsSync(pinned)) {
    console.error('kbqa needs Node 22.18+; run `npm install` in the project first (it pins Node 24).');
    process.exit(1);
  }
  const result = spawnSync(pinned, [join(root, 'service', 'cli', 'kbqa.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
