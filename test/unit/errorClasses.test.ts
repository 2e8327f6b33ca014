// One error taxonomy: every class extending Error in service/ lives in service/errors.ts, except control-flow
// signals, which stay where they are thrown and caught and say so in the comment above them ("Control-flow signal:
// … caught by …"). Read from the sources as text; a pure test: no stack.
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SERVICE = join(ROOT, 'service');
const TAXONOMY = 'service/errors.ts';

interface ClassDeclaration {
  file: string;
  name: string;
  base: string;
  /** The comment lines right above the declaration, joined. */
  comment: string;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

const DECLARATION = /^(?:export )?(?:abstract )?class (\w+)(?:<[^>]*>)? extends ([\w.]+)/;
const COMMENT_LINE = /^\s*(?:\/\/|\/\*|\*)/;

/** Every `class X extends Y` at a line's start in one file's text, with the comment above it. */
function declarationsIn(file: string, text: string): ClassDeclaration[] {
  const lines = text.split('\n');
  const found: ClassDeclaration[] = [];
  lines.forEach((line, index) => {
    const match = DECLARATION.exec(line);
    if (!match) return;
    let start = index;
    while (start > 0 && COMMENT_LINE.test(lines[start - 1])) start -= 1;
    found.push({ file, name: match[1], base: match[2], comment: lines.slice(start, index).join(' ') });
  });
  return found;
}

/** The declarations whose class is an Error: a built-in error class, or one named …Error, or one of these again. */
function errorClasses(declarations: ClassDeclaration[]): ClassDeclaration[] {
  const errors = new Set<string>();
  const isErrorBase = (base: string) => base.endsWith('Error') || errors.has(base);
  let grew = true;
  while (grew) {
    grew = false;
    for (const declaration of declarations) {
      if (!errors.has(declaration.name) && isErrorBase(declaration.base)) {
        errors.add(declaration.name);
        grew = true;
      }
    }
  }
  return declarations.filter((declaration) => errors.has(declaration.name));
}

const isMarkedSignal = (declaration: ClassDeclaration) =>
  /control-flow signal/i.test(declaration.comment) && /\bcaught (?:by|in|below)\b/i.test(declaration.comment);

/** Error classes outside the taxonomy that are not marked as control-flow signals. */
function strays(declarations: ClassDeclaration[]): string[] {
  return errorClasses(declarations)
    .filter((declaration) => declaration.file !== TAXONOMY && !isMarkedSignal(declaration))
    .map((declaration) => `${declaration.file}: ${declaration.name} extends ${declaration.base}`);
}

const files = sourceFiles(SERVICE);
const declarations = files.flatMap((file) => declarationsIn(relative(ROOT, file), readFileSync(file, 'utf8')));

test('the sources are read: every service file, and the taxonomy with its classes', (t) => {
  t.true(files.length > 100, `${files.length} files`);
  const taxonomy = errorClasses(declarations)
    .filter((declaration) => declaration.file === TAXONOMY)
    .map((declaration) => declaration.name);
  t.true(taxonomy.length >= 25, `${taxonomy.length} classes in ${TAXONOMY}`);
  for (const name of [
    'ApiError',
    'ConflictError',
    'EmailTakenError',
    'InvalidCursorError',
    'PdfExtractionError',
    'OpenSearchRequestError',
    'ConfigError',
  ]) {
    t.true(taxonomy.includes(name), name);
  }
});

test('no class extends Error outside service/errors.ts, except marked control-flow signals', (t) => {
  t.deepEqual(strays(declarations), []);
  const signals = errorClasses(declarations).filter((declaration) => declaration.file !== TAXONOMY);
  // The signals known today are found (and so checked): the scan sees classes outside errors.ts at all.
  t.true(signals.length >= 5, signals.map((declaration) => declaration.name).join(', '));
  t.true(signals.some((declaration) => declaration.name === 'UsageError'));
});

test('the check fails on an unmarked Error class, a subclass of one, and a signal naming no catcher', (t) => {
  const source = [
    'export class DuplicateThingError extends Error {}',
    '/** Thrown when the thing is gone. */',
    'class GoneError extends NotFoundError {}',
    'class Deeper extends DuplicateThingError {}',
    '// Control-flow signal: stops the loop.',
    'class Stop extends Error {}',
    '/** Control-flow signal: stops the loop; caught by run(). */',
    'class Marked extends Error {}',
    'class Plain {}',
    'class Widget extends Plain {}',
  ].join('\n');
  t.deepEqual(strays(declarationsIn('service/example.ts', source)), [
    'service/example.ts: DuplicateThingError extends Error',
    'service/example.ts: GoneError extends NotFoundError',
    'service/example.ts: Deeper extends DuplicateThingError',
    'service/example.ts: Stop extends Error',
  ]);
});
