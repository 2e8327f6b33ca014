// The unit tier stays pure: no file under test/unit/ reaches, through its relative imports, the helpers that build
// an app, open a store or drive a browser, nor imports a store or search client library itself. Read from the
// sources as text, so the check holds before anything runs. The runner (stack/testTiers.ts) also points the stores'
// addresses at a closed port for this tier; this check names the import that would need them.
import test from 'ava';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stackTierFiles, unitTierFiles } from '../../stack/testTiers.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Test helpers a unit test must not reach: each builds an app, opens a store, or launches a browser or a process of
 * the API. (Service modules may be imported: importing one opens nothing; the closed port catches any call.)
 */
const STACK_MODULES = [
  'test/helpers/app.ts',
  'test/helpers/browser.ts',
  'test/helpers/apiProcess.ts',
  'test/helpers/webClient.ts',
  'test/factories/accounts.ts',
];

/** Packages that talk to a server of the stack or drive a browser. */
const STACK_PACKAGES = ['mongodb', '@opensearch-project/opensearch', 'playwright-core'];

function specifiersOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  // `from '…'` of static imports and re-exports, and `import('…')` of dynamic ones; the specifier ends at its quote.
  for (const marker of [" from '", "import('"]) {
    for (let at = text.indexOf(marker); at >= 0; at = text.indexOf(marker, at + 1)) {
      const start = at + marker.length;
      found.push(text.slice(start, text.indexOf("'", start)));
    }
  }
  return found;
}

/** Every repository file `entry` reaches through relative imports, with the chain that reaches it. */
function reachable(entry: string): Map<string, string[]> {
  const chains = new Map<string, string[]>([[entry, [entry]]]);
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    for (const specifier of specifiersOf(join(ROOT, file))) {
      if (!specifier.startsWith('.')) continue;
      const target = relative(ROOT, resolve(dirname(join(ROOT, file)), specifier));
      if (chains.has(target) || !existsSync(join(ROOT, target))) continue;
      chains.set(target, [...(chains.get(file) ?? []), target]);
      pending.push(target);
    }
  }
  return chains;
}

test('the tiers split the test files: each file in exactly one, and both hold files', (t) => {
  const unit = unitTierFiles(ROOT);
  const stack = stackTierFiles(ROOT);
  const everyTestFile = (directory: string): string[] =>
    readdirSync(join(ROOT, directory), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? everyTestFile(join(directory, entry.name))
        : entry.name.endsWith('.test.ts')
          ? [join(directory, entry.name)]
          : [],
    );
  const all = everyTestFile('test').sort();
  t.true(unit.length >= 10, `${unit.length} unit test files`);
  t.true(stack.length >= 40, `${stack.length} stack test files`);
  t.deepEqual([...unit, ...stack].sort(), all);
  t.true(unit.every((file) => file.startsWith('test/unit/')));
  t.false(stack.some((file) => file.startsWith('test/unit/')));
});

test('no unit test file reaches a helper that builds an app, opens a store or drives a browser', (t) => {
  const files = unitTierFiles(ROOT);
  t.true(files.length >= 10, `${files.length} unit test files`);
  const problems: string[] = [];
  for (const file of files) {
    const chains = reachable(file);
    for (const module of STACK_MODULES) {
      const chain = chains.get(module);
      if (chain) problems.push(chain.join(' → '));
    }
  }
  t.deepEqual(problems, []);
});

test("no unit test file imports a client of the stack's servers or the browser itself", (t) => {
  const files = unitTierFiles(ROOT);
  t.true(files.length >= 10, `${files.length} unit test files`);
  const problems = files.flatMap((file) =>
    specifiersOf(join(ROOT, file))
      .filter((specifier) => STACK_PACKAGES.some((name) => specifier === name || specifier.startsWith(`${name}/`)))
      .map((specifier) => `${file} imports ${specifier}`),
  );
  t.deepEqual(problems, []);
});

test('the check finds what it looks for: a stack test file reaches the app helper through its imports', (t) => {
  const chains = reachable('test/auth.test.ts');
  t.deepEqual(chains.get('test/helpers/app.ts'), ['test/auth.test.ts', 'test/helpers/app.ts']);
  t.true(reachable('test/web/signIn.test.ts').has('test/helpers/app.ts'), 'transitively, through the browser helper');
});
