// docs/configuration.md and service/config.ts in step: every KBQA_* variable the service reads has its row in the
// page's first table ("The service"), and that table names none the service does not read. The second table's
// variables belong to the tools around the service: each is read there, and none by config.ts. A pure test: no stack.
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VARIABLE = /KBQA_[A-Z0-9_]+/g;

/** The keys of config.ts's environment schema: one `  KBQA_…:` line each, inside `environmentSchema`. */
function configVariables(): string[] {
  const text = readFileSync(join(ROOT, 'service/config.ts'), 'utf8');
  const start = text.indexOf('const environmentSchema = z.object({');
  const end = text.indexOf('\n});', start);
  if (start < 0 || end < 0) throw new Error('service/config.ts: no environmentSchema = z.object({ … }) found');
  return [...text.slice(start, end).matchAll(/^ {2}(KBQA_[A-Z0-9_]+):/gm)].map((match) => match[1]);
}

/** The variables named in the first column of each table row under the `## ` heading `title`. */
function documentedVariables(title: string): string[] {
  const text = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
  const start = text.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`docs/configuration.md: no "## ${title}" section`);
  const next = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, next < 0 ? undefined : next);
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `KBQA_'))
    .flatMap((line) => line.split('|')[1].match(VARIABLE) ?? []);
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (name === 'node_modules' || name === 'fixtures') return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(?:ts|mjs|js)$/.test(name) ? [path] : [];
  });
}

const missingFrom = (names: string[], from: string[]) => names.filter((name) => !from.includes(name)).sort();

const fromConfig = configVariables();
const serviceRows = documentedVariables('The service');
const toolRows = documentedVariables('The local stack, the tests and `kbqa eval`');

test('config.ts and the page are read', (t) => {
  t.true(fromConfig.length >= 80, `${fromConfig.length} variables in config.ts`);
  t.true(fromConfig.includes('KBQA_PORT') && fromConfig.includes('KBQA_PDF_STEP_MS'));
  t.true(serviceRows.length >= 80, `${serviceRows.length} variables in the service table`);
  t.true(toolRows.length >= 5, `${toolRows.length} variables in the tools table`);
});

test('every variable config.ts reads has its row in docs/configuration.md', (t) => {
  t.deepEqual(missingFrom(fromConfig, serviceRows), []);
});

test('the service table names no variable config.ts does not read', (t) => {
  t.deepEqual(missingFrom(serviceRows, fromConfig), []);
});

test("the tools table names variables the tools read, and none of config.ts's", (t) => {
  t.deepEqual(
    toolRows.filter((name) => fromConfig.includes(name)),
    [],
  );
  const tools = ['stack', 'scripts', 'test', 'service/cli', 'bench'].flatMap((directory) =>
    sourceFiles(join(ROOT, directory)),
  );
  const read = new Set(tools.flatMap((file) => readFileSync(file, 'utf8').match(VARIABLE) ?? []));
  t.deepEqual(
    toolRows.filter((name) => !read.has(name)),
    [],
  );
});
