// `kbqa` answers at once (issue 26, item 5): `--help` and a mistyped command load no package, `keys create` loads
// the MongoDB driver and none of the models, PDF reading or search client, and on a Node that runs the TypeScript
// itself the launcher runs it in its own process. Module lists, not timings: the bench times the commands.
import anyTest, { type TestFn } from 'ava';
import { fileURLToPath } from 'node:url';
import { COMMANDS, commandFor } from '../service/cli/commandTable.ts';
import { USAGE } from '../service/cli/usage.ts';
import { loadConfig } from '../service/config.ts';
import { openStore, type Store } from '../service/store/index.ts';
import { makeUser } from './factories/accounts.ts';
import { HEAVY_PACKAGES, packagesOf, runTraced } from './helpers/moduleTrace.ts';

const test = anyTest as TestFn<{ store: Store }>;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ENTRY = new URL('../service/cli/kbqa.ts', import.meta.url).href;

test.before(async (t) => {
  const config = loadConfig();
  t.context.store = await openStore(config.mongodb.url, config.mongodb.timeoutMs);
});

test.after.always(async (t) => {
  await t.context.store?.close();
});

const heavyAmong = (modules: string[]) =>
  packagesOf(modules).filter((name) => (HEAVY_PACKAGES as readonly string[]).includes(name));

test("kbqa --help prints the usage and loads no package, in the launcher's own process", async (t) => {
  const run = await runTraced(['bin/kbqa.mjs', '--help'], { cwd: ROOT });
  t.is(run.code, 0, run.stderr);
  t.true(run.stdout.startsWith('usage: kbqa <command>'), run.stdout);
  // The hook is in this process only: the CLI's entry among its modules means no second Node process ran it.
  t.true(run.modules.includes(ENTRY), run.modules.join('\n'));
  t.deepEqual(heavyAmong(run.modules), []);
  t.deepEqual(packagesOf(run.modules), [], 'nothing from node_modules at all');
});

test('a mistyped command is a usage error before anything is loaded', async (t) => {
  const run = await runTraced(['bin/kbqa.mjs', 'keys', 'craete', '--email', 'someone@example.test'], { cwd: ROOT });
  t.is(run.code, 2);
  t.true(run.stderr.startsWith('kbqa: unknown command: keys craete\nusage: kbqa'), run.stderr);
  t.deepEqual(packagesOf(run.modules), []);
});

test('kbqa keys create loads the MongoDB driver, not the models, PDF reading or the OpenSearch client', async (t) => {
  const user = await makeUser(t.context.store, { label: 'cli-startup' });
  const run = await runTraced(
    ['bin/kbqa.mjs', 'keys', 'create', '--email', user.email, '--name', 'startup', '--json'],
    { cwd: ROOT },
  );
  t.is(run.code, 0, run.stderr);
  const created = JSON.parse(run.stdout) as { id: string; key: string; name: string };
  t.regex(created.key, /^kbqa_live_[0-9A-Za-z]{40}$/);
  t.is(created.name, 'startup');
  t.true(run.modules.includes(ENTRY));
  t.deepEqual(heavyAmong(run.modules), ['mongodb']);
});

test('every command the usage names has an entry in the command table, and every entry loads a command', async (t) => {
  // Usage lines start with two spaces and the command's words (a word of lower-case letters and dashes).
  const named = new Set<string>();
  for (const line of USAGE.split('\n')) {
    if (!line.startsWith('  ') || line.startsWith('   ')) continue;
    const words = line.trim().split(' ');
    const isWord = (word: string | undefined) => word !== undefined && /^[a-z][a-z-]*$/.test(word);
    named.add(isWord(words[1]) ? `${words[0]} ${words[1]}` : words[0]);
  }
  t.true(named.size > 20, [...named].join(', '));
  for (const name of named) {
    const [group, action = ''] = name.split(' ');
    if (group === 'eval') continue; // eval dispatches itself (service/cli/eval.ts), before the table
    t.not(commandFor(group, action), null, name);
  }
  for (const [name, load] of Object.entries(COMMANDS)) {
    t.true(named.has(name), `${name} is in the usage`);
    t.is(typeof (await load()), 'function', name);
  }
  t.is(commandFor('keys', 'craete'), null);
  t.is(commandFor('constructor', ''), null, "only the table's own names");
});
