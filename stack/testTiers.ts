// The two tiers of the test suite. The unit tier (test/unit/) is pure logic: it needs no server, so `npm run
// test:unit` runs it in seconds starting nothing (it only extracts the embedder's model file on a fresh clone), with the stores' addresses pointed at a
// closed port (a unit test that reached for OpenSearch or MongoDB fails at once instead of passing against a stack
// someone left running). The stack tier is every other test file, against the real OpenSearch, FerretDB and Chromium.
import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export const UNIT_TIER_DIR = join('test', 'unit');

/** The discard port: nothing listens there, so a connection is refused at once. */
const CLOSED_PORT = '127.0.0.1:9';

/** The environment of the unit tier: no store reachable, whatever the caller's environment says. */
export function unitTierEnvironment(environment: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...environment,
    KBQA_OPENSEARCH_URL: `http://${CLOSED_PORT}`,
    KBQA_OPENSEARCH_NODES: '1',
    KBQA_MONGODB_URL: `mongodb://${CLOSED_PORT}/kbqa-unit-tier`,
  };
}

function testFilesUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return testFilesUnder(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Test files of the unit tier, relative to `root`, sorted. */
export function unitTierFiles(root: string): string[] {
  return testFilesUnder(join(root, UNIT_TIER_DIR))
    .map((path) => relative(root, path))
    .sort();
}

/**
 * Test files of the stack tier, relative to `root`, sorted: every test file outside test/unit/. Listed here rather
 * than by a glob so that a new folder of tests joins the tier without anyone remembering to add it.
 */
export function stackTierFiles(root: string): string[] {
  return testFilesUnder(join(root, 'test'))
    .map((path) => relative(root, path))
    .filter((path) => !path.startsWith(UNIT_TIER_DIR + sep))
    .sort();
}

/** Whether every file named on a command line belongs to the unit tier (then no stack is needed). */
export function onlyUnitFiles(files: string[]): boolean {
  return files.length > 0 && files.every((file) => relative('.', file).startsWith(UNIT_TIER_DIR + sep));
}
