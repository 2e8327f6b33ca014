// The web app's types (web/src/api/generated.ts) are what `npm run web:generate` makes from the zod schemas of
// /api/web now, so the app cannot drift from what the server sends. A pure test: no stack.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { generateWebTypes, TYPES_FILE, webTypesCurrent } from '../clients/web/generate.ts';
import { buildWebOpenApiDocument } from '../service/http/openapi/webDocument.ts';

test('the description of /api/web covers the web client and names its schemas', (t) => {
  const document = buildWebOpenApiDocument();
  const paths = Object.keys(document.paths ?? {});
  t.true(paths.length >= 30, `${paths.length} paths`);
  t.true(
    paths.every((path) => path.startsWith('/api/web/')),
    paths.join(', '),
  );
  for (const name of ['WebDocument', 'WebKnowledgeBase', 'SessionResponse', 'DocumentContent', 'Error']) {
    t.truthy(document.components?.schemas?.[name], name);
  }
  // Every call of the web client is an operation here (its `api.<name>` is the operationId).
  const client = readFileSync(new URL('../web/src/api/client.ts', import.meta.url), 'utf8');
  const calls = [...client.slice(client.indexOf('export const api = {')).matchAll(/^ {2}(\w+)[:,]/gm)].map(
    (match) => match[1],
  );
  t.true(calls.length >= 30, `${calls.length} calls`);
  const operations = new Set(
    Object.values(document.paths ?? {}).flatMap((item) =>
      Object.values(item ?? {}).map((operation) => (operation as { operationId?: string }).operationId),
    ),
  );
  // Not JSON operations: the streamed answers (the SSE forms of `ask` and `askInConversation`) and a file's bytes.
  const notJson = new Set(['askStreaming', 'askInConversationStreaming', 'getDocumentFile']);
  t.deepEqual(
    calls.filter((call) => !operations.has(call) && !notJson.has(call)),
    [],
  );
});

test('the committed web/src/api/generated.ts is a fresh generation from the schemas', async (t) => {
  t.true(await webTypesCurrent(), `run \`npm run web:generate\` and commit ${TYPES_FILE}`);
  const generated = await generateWebTypes();
  // The aliases the app imports, and the one status → code table, are in it.
  for (const line of [
    'export type KbDocument = ',
    'export type KnowledgeBase = ',
    'export type Credentials = ',
    'export const CODE_FOR_STATUS',
  ]) {
    t.true(generated.includes(line), line);
  }
});
