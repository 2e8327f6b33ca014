// The Docker image starts the API as `npm start` and the bench do (service/runtimeFlags.ts): the memory figures in
// docs/operations.md ("Memory") hold for all three only if they pass the same flags and environment.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { API_ENVIRONMENT_DEFAULTS, API_NODE_FLAGS } from '../../service/runtimeFlags.ts';

const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8').split('\n');

test("the Dockerfile's CMD passes the API's Node flags before service/main.ts", (t) => {
  const cmd = dockerfile.filter((line) => line.startsWith('CMD '));
  t.is(cmd.length, 1, cmd.join('\n'));
  const argv = JSON.parse(cmd[0].slice('CMD '.length)) as string[];
  t.deepEqual(argv, ['node', ...API_NODE_FLAGS, 'service/main.ts']);
  t.true(API_NODE_FLAGS.length > 0);
});

test("the Dockerfile's final stage sets the API's environment defaults", (t) => {
  const finalStage = dockerfile.slice(dockerfile.findLastIndex((line) => line.startsWith('FROM ')));
  const entries = Object.entries(API_ENVIRONMENT_DEFAULTS);
  t.true(entries.length > 0);
  for (const [name, value] of entries) t.true(finalStage.includes(`ENV ${name}=${value}`), `ENV ${name}=${value}`);
});
