// The OpenAPI description (service/http/openapi/): it lists exactly the routes the API router has, it is served at
// /api/v1/openapi.json without a key and with sensible caching, its examples are valid against their own schemas,
// and the response check every test runs under (helpers/openapiCheck.ts) really refuses what it should.
import { buildApiRouter } from '../service/app.ts';
import { openApiDocument } from '../service/http/openapi/document.ts';
import { SpecChecker, type ObservedResponse } from './helpers/openapiCheck.ts';
import { testWithApp } from './helpers/app.ts';

const test = testWithApp();

type Operation = {
  operationId: string;
  summary: string;
  tags: string[];
  security?: unknown[];
  requestBody?: { content: Record<string, { schema: unknown; example?: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown; example?: unknown }> }>;
};
const { document, json } = openApiDocument();
const paths = document.paths as Record<string, Record<string, Operation>>;
const operations = Object.entries(paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
);

test('every route of the API router is in the spec, and every operation of the spec is a route', (t) => {
  const routes = new Set<string>();
  for (const layer of buildApiRouter(t.context.app.deps).stack) {
    for (const method of layer.methods)
      if (method !== 'HEAD') routes.add(`${method} ${String(layer.path).replaceAll(/:(\w+)/g, '{$1}')}`);
  }
  const specified = new Set(operations.map(({ path, method }) => `${method.toUpperCase()} ${path}`));
  t.deepEqual(
    [...routes].sort(),
    [...specified].sort(),
    "routes (left) and spec operations (right): add the route's operation to service/http/openapi/operations/",
  );
});

test('every operation has an id, a summary, a tag, its success and its failures, and needs the API key', (t) => {
  const ids = new Set<string>();
  for (const { path, method, operation } of operations) {
    const name = `${method.toUpperCase()} ${path}`;
    t.truthy(operation.operationId, name);
    t.false(ids.has(operation.operationId), `${name}: operationId ${operation.operationId} is unique`);
    ids.add(operation.operationId);
    t.truthy(operation.summary, name);
    t.is(operation.tags?.length, 1, name);
    t.is(operation.security, undefined, `${name} takes the document's bearer security`);
    const statuses = Object.keys(operation.responses);
    t.true(
      statuses.some((status) => status.startsWith('2')),
      `${name} declares a success`,
    );
    for (const status of ['401', '500', '503']) t.true(statuses.includes(status), `${name} declares ${status}`);
    if (operation.requestBody)
      for (const status of ['400', '413', '415'])
        t.true(statuses.includes(status), `${name} takes a body: declares ${status}`);
  }
  t.deepEqual(document.security, [{ apiKey: [] }]);
  t.like(document.components?.securitySchemes?.apiKey, { type: 'http', scheme: 'bearer' });
});

test('every example in the spec is valid against its schema (requests and responses)', (t) => {
  const checker = new SpecChecker(document as never);
  let checked = 0;
  for (const { path, method, operation } of operations) {
    for (const [status, response] of Object.entries(operation.responses)) {
      for (const [mediaType, media] of Object.entries(response.content ?? {})) {
        if (media.example === undefined) continue;
        const problem = checker.problem({
          method: method.toUpperCase(),
          path: path.replaceAll(/\{\w+\}/g, 'x'),
          status: Number(status),
          contentType: mediaType,
          body: media.example,
          where: 'example',
        });
        t.is(problem, null, `${method.toUpperCase()} ${path} ${status} example`);
        checked += 1;
      }
    }
    for (const media of Object.values(operation.requestBody?.content ?? {})) {
      t.not(media.example, undefined, `${method.toUpperCase()} ${path}: the request body has an example`);
      t.is(checker.schemaProblem(media.schema, media.example), null, `${method.toUpperCase()} ${path} request example`);
      checked += 1;
    }
  }
  t.true(checked > 40, `${checked} examples checked`);
});

test("the streamed answer's example is valid: each event's data against the schema its event names", (t) => {
  const checker = new SpecChecker(document as never);
  const media = paths['/api/v1/query'].post.responses['200'].content?.['text/event-stream'] as {
    schema: { anyOf: Array<{ properties: { event: { const: string }; data: { contentSchema: unknown } } }> };
    example: string;
  };
  const dataSchema = new Map(
    media.schema.anyOf.map((variant) => [variant.properties.event.const, variant.properties.data.contentSchema]),
  );
  t.deepEqual([...dataSchema.keys()], ['retrieval', 'delta', 'done', 'error']);
  const events = media.example
    .split('\n\n')
    .filter((block) => !block.startsWith(':'))
    .map((block) =>
      Object.fromEntries(
        block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
      ),
    );
  t.deepEqual(
    events.map((event) => event.event),
    ['retrieval', 'delta', 'done'],
  );
  for (const event of events)
    t.is(checker.schemaProblem(dataSchema.get(event.event), JSON.parse(event.data)), null, event.event);
});

test('the response check refuses an undeclared status, an undeclared field, a wrong type and a wrong content type', (t) => {
  const checker = new SpecChecker(document as never);
  const me = (change: Partial<ObservedResponse>): ObservedResponse => ({
    method: 'GET',
    path: '/api/v1/me',
    status: 200,
    contentType: 'application/json; charset=utf-8',
    body: { id: '9b2e7c1a-4f3d-4e8b-a6c5-0d1f2e3a4b5c', email: 'ada@example.com' },
    where: 'test',
    ...change,
  });
  t.is(checker.problem(me({})), null);
  t.is(checker.problem(me({ method: 'HEAD' })), null, 'HEAD is GET without a body');
  t.is(checker.problem(me({ path: '/api/v1/me/' })), null, 'a trailing slash is the same route');
  t.regex(checker.problem(me({ status: 409 })) ?? '', /status 409 is not declared/);
  t.regex(
    checker.problem(me({ body: { id: '9b2e7c1a-4f3d-4e8b-a6c5-0d1f2e3a4b5c', email: 'a@b.c', admin: true } })) ?? '',
    /additional properties/,
  );
  t.regex(checker.problem(me({ body: { id: 'not-a-uuid', email: 'a@b.c' } })) ?? '', /format/);
  t.regex(checker.problem(me({ contentType: 'text/html' })) ?? '', /Content-Type text\/html is not declared/);
  t.regex(
    checker.problem(me({ status: 401, body: { error: { code: 'nope', message: 'x' } } })) ?? '',
    /allowed values/,
  );
  t.is(
    checker.problem(
      me({ status: 401, body: { error: { code: 'unauthorized', message: 'API key is missing or invalid' } } }),
    ),
    null,
  );
  // Paths the spec does not have: the router's 404 and 405, in the envelope.
  const envelope = { error: { code: 'not_found', message: 'no route for GET /api/v1/nothing' } };
  t.is(checker.problem(me({ path: '/api/v1/nothing', status: 404, body: envelope })), null);
  t.regex(checker.problem(me({ path: '/api/v1/nothing', status: 200, body: {} })) ?? '', /no operation/);
  t.is(
    checker.problem(
      me({ method: 'PATCH', status: 405, body: { error: { code: 'bad_request', message: 'method not allowed' } } }),
    ),
    null,
  );
});

test('GET /api/v1/openapi.json: the description, without a key, cacheable and revalidated by ETag', async (t) => {
  const { app } = t.context;
  const response = await fetch(`${app.baseUrl}/api/v1/openapi.json`);
  const text = await response.text();
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /^application\/json/);
  t.is(response.headers.get('cache-control'), 'public, max-age=300, must-revalidate');
  t.is(response.headers.get('access-control-allow-origin'), '*');
  t.is(text, json, 'the document the code builds (and clients/typescript/openapi.json holds)');
  const parsed = JSON.parse(text) as { openapi: string; info: { title: string } };
  t.is(parsed.openapi, '3.1.0');
  const etag = response.headers.get('etag');
  t.truthy(etag);
  // (fetch() adds Cache-Control: no-cache to a conditional request unless it carries its own, as a browser revalidating does.)
  const again = await fetch(`${app.baseUrl}/api/v1/openapi.json`, {
    headers: { 'if-none-match': etag ?? '', 'cache-control': 'max-age=0' },
  });
  t.is(again.status, 304);
  // A key is not needed, and a bad one changes nothing.
  const withBadKey = await fetch(`${app.baseUrl}/api/v1/openapi.json`, { headers: { authorization: 'Bearer nope' } });
  await withBadKey.arrayBuffer();
  t.is(withBadKey.status, 200);
  const post = await app.call('POST', '/api/v1/openapi.json', { body: {} });
  t.true([404, 405].includes(post.status));
});
