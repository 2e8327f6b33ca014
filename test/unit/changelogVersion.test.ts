// CHANGELOG.md is in released versions (Keep a Changelog): "Unreleased" on top, then `## [X.Y.Z] - YYYY-MM-DD`,
// newest first, and package.json's version is the newest release, so the version a build reports is the one the
// changelog and the tag `vX.Y.Z` name. A pure test: no stack.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RELEASE = /^## \[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})$/;

interface Release {
  version: string;
  parts: [number, number, number];
  date: string;
  /** The `### ` sections under it. */
  sections: number;
}

function changelog(): { headings: string[]; releases: Release[] } {
  const headings: string[] = [];
  const releases: Release[] = [];
  for (const line of readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8').split('\n')) {
    if (line.startsWith('## ')) {
      headings.push(line);
      const match = RELEASE.exec(line);
      if (match) {
        const parts = [Number(match[1]), Number(match[2]), Number(match[3])] as [number, number, number];
        releases.push({ version: parts.join('.'), parts, date: match[4], sections: 0 });
      }
    } else if (line.startsWith('### ') && headings.length > 0 && releases.length > 0) {
      if (RELEASE.test(headings.at(-1)!)) releases.at(-1)!.sections += 1;
    }
  }
  return { headings, releases };
}

function newer(a: [number, number, number], b: [number, number, number]): boolean {
  return a[0] - b[0] > 0 || (a[0] === b[0] && (a[1] - b[1] > 0 || (a[1] === b[1] && a[2] > b[2])));
}

test('the changelog is Unreleased, then released versions newest first, each dated and not empty', (t) => {
  const { headings, releases } = changelog();
  t.is(headings[0], '## [Unreleased]');
  t.deepEqual(
    headings.slice(1).filter((heading) => !RELEASE.test(heading)),
    [],
    'every other second-level heading is a release',
  );
  t.true(releases.length >= 2, `${releases.length} releases`);
  for (let index = 1; index < releases.length; index += 1) {
    const [later, earlier] = [releases[index - 1], releases[index]];
    t.true(newer(later.parts, earlier.parts), `${later.version} above ${earlier.version}`);
    t.true(later.date >= earlier.date, `${later.version} (${later.date}) not dated before ${earlier.version}`);
  }
  t.deepEqual(
    releases.filter((release) => release.sections === 0).map((release) => release.version),
    [],
    'every release says what it changed',
  );
});

test("package.json's version is the newest release in the changelog", (t) => {
  const [newest] = changelog().releases;
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    version: string;
    packages: Record<string, { version?: string }>;
  };
  t.is(manifest.version, newest.version);
  t.is(lock.version, newest.version, 'package-lock.json follows package.json');
  t.is(lock.packages[''].version, newest.version);
});
