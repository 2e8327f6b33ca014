// The service's import graph: no circles, and no arrows up from the modules everything else stands on (config,
// metrics). Read from the sources as text: relative imports and re-exports, type-only ones included (a circle of
// types is still a circle for a reader). A pure test: no stack.
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SERVICE = join(ROOT, 'service');

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** A file's relative imports and re-exports, as paths relative to the repository. */
function importsOf(file: string): string[] {
  const found: string[] = [];
  const text = readFileSync(file, 'utf8');
  // Statements start at a line's beginning; the specifier is the first quoted string after `from`.
  for (const statement of text.split(/^(?=import |export )/m)) {
    if (!statement.startsWith('import ') && !statement.startsWith('export ')) continue;
    const from = statement.indexOf(" from '");
    if (from < 0 || statement.slice(0, from).includes(';')) continue;
    const start = from + " from '".length;
    const specifier = statement.slice(start, statement.indexOf("'", start));
    if (specifier.startsWith('./') || specifier.startsWith('../'))
      found.push(relative(ROOT, resolve(dirname(file), specifier)));
  }
  return found;
}

const files = sourceFiles(SERVICE);
const graph = new Map(files.map((file) => [relative(ROOT, file), importsOf(file)]));

function circles(): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next].join(' → '));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

test('the import graph is read: every service file, with the imports it names', (t) => {
  t.true(graph.size > 100, `${graph.size} files`);
  t.true((graph.get('service/app.ts') ?? []).includes('service/http/routes/query.ts'));
  t.true(
    (graph.get('service/search/applyAssets.ts') ?? []).includes('service/search/drift.ts'),
    'a multi-line import is read',
  );
});

test('no import circle in service/', (t) => {
  t.deepEqual(circles(), []);
});

test('no arrow up: config and metrics import nothing from the layers that read them', (t) => {
  const upward = (file: string, folders: string[]) =>
    (graph.get(file) ?? []).filter((target) => folders.some((folder) => target.startsWith(`service/${folder}/`)));
  t.deepEqual(upward('service/config.ts', ['search', 'commands', 'store', 'rag', 'http', 'extraction']), []);
  t.deepEqual(upward('service/metrics.ts', ['commands', 'http']), []);
});

// Commands by kind (docs/architecture.md): the kbqa CLI and the routes call operator tasks and request use cases,
// which stand on the job engine; never the other way. `operations/` (doctor, backup, index migration) may use a
// command (backup's reconcile re-indexes documents) and the job engine; a command may use the job engine.
test('one way between the kinds of code: cli, http → operations → commands → jobs', (t) => {
  const below: Record<string, string[]> = {
    jobs: ['commands', 'operations', 'http', 'cli'],
    commands: ['operations', 'http', 'cli'],
    operations: ['http', 'cli'],
  };
  const arrowsUp = [...graph.entries()].flatMap(([file, targets]) => {
    const kind = Object.keys(below).find((folder) => file.startsWith(`service/${folder}/`));
    if (!kind) return [];
    return targets
      .filter((target) => below[kind].some((folder) => target.startsWith(`service/${folder}/`)))
      .map((target) => `${file} → ${target}`);
  });
  t.deepEqual(arrowsUp, []);
  // The rule reads something: each kind has files, and the arrows down that the map describes are there.
  for (const kind of Object.keys(below))
    t.true(
      files.some((file) => relative(ROOT, file).startsWith(`service/${kind}/`)),
      `service/${kind}/ has files`,
    );
  t.true(
    (graph.get('service/commands/documents.ts') ?? []).includes('service/jobs/jobRecord.ts'),
    'a command uses the job engine',
  );
  t.true(
    (graph.get('service/operations/backup/reconcile.ts') ?? []).includes('service/commands/documents.ts'),
    'an operation uses a command',
  );
});
