// The README and the guides in docs/ link to each other, to result files and to screenshots: every relative link
// must reach a file, and every #anchor a heading of the file it names; every repository path they write in
// backticks (`service/…`, `bench/results/…`) must exist, so a moved or deleted file cannot leave a stale pointer
// behind. A pure test: no stack.
import test from 'ava';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGES = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replaceAll(' ', '-');
}

function anchorsIn(file: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('#')) anchors.add(anchorOf(line.replace(/^#+ /, '')));
  }
  return anchors;
}

function linksIn(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]).filter((target) => !/^[a-z]+:/.test(target));
}

test('the guides exist and the README stays a front door', (t) => {
  t.true(PAGES.length >= 9, PAGES.join(', '));
  t.true(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length <= 250);
});

test('every relative link in README and docs/ reaches a file, and every anchor a heading', (t) => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of PAGES) {
    const file = join(ROOT, page);
    for (const link of linksIn(file)) {
      checked += 1;
      const [path, anchor] = link.split('#');
      const target = path === '' ? file : resolve(dirname(file), path);
      if (!existsSync(target)) broken.push(`${page}: ${link} (no such file)`);
      else if (anchor !== undefined && target.endsWith('.md') && !anchorsIn(target).has(anchor))
        broken.push(`${page}: ${link} (no such heading)`);
    }
  }
  t.true(checked > 30, `${checked} links checked`);
  t.deepEqual(broken, []);
});

/** The repository's top-level entries: a backticked path starting with one of them is a repository path. */
const TOP_LEVEL = new Set(readdirSync(ROOT).filter((name) => !['.git', 'node_modules', '.local'].includes(name)));

/** What a build or a run makes (git-ignored): named in the guides, absent from a clean clone. */
const GENERATED = ['web/dist'];

/**
 * The repository paths written in backticks on a page: one word, starting at a top-level entry, with no pattern or
 * placeholder in it (`bench/results/eval-*.json`, `routes/<resource>.ts` name families, not files); a `:line` or
 * `#anchor` suffix dropped.
 */
function backtickedPathsIn(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/`([^`\n]+)`/g)]
    .map((match) => match[1].trim())
    .filter((word) => !/[\s*<>{}…$[\]|]/.test(word))
    .map((word) => word.split('#')[0].replace(/:\d+(?:-\d+)?$/, ''))
    .filter((path) => path.includes('/') && TOP_LEVEL.has(path.split('/')[0]))
    .filter((path) => !GENERATED.some((generated) => path.startsWith(generated)));
}

test('every repository path in backticks in README, CHANGELOG and docs/ exists', (t) => {
  const missing: string[] = [];
  let checked = 0;
  for (const page of PAGES) {
    for (const path of backtickedPathsIn(join(ROOT, page))) {
      checked += 1;
      if (!existsSync(join(ROOT, path))) missing.push(`${page}: ${path}`);
    }
  }
  t.true(checked > 100, `${checked} paths checked`);
  t.deepEqual(missing, []);
});
