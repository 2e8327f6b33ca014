// Issue 8 §2: paths are case-sensitive, and no handler runs without an authenticated caller. Every /api/v1 route
// (read from the router itself, so a new route is covered the day it is added) × case variants × with and without
// a key: a variant is a 404 in the envelope, never a 500, and never reaches a handler.
import { buildApiRouter, buildWebApiRouter } from '../service/app.ts';
import { UnauthorizedError } from '../service/errors.ts';
import { authenticated, type AppContext } from '../service/http/context.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { createKb } from './helpers/documentsApi.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';

const test = testWithApp<{ user: TestUser; kbId: string }>();

test.before(async (t) => {
  t.context.user = await makeUser(t.context.app.deps.store, { label: 'routecase' });
  t.context.kbId = await createKb(t.context.app, t.context.user.key, 'route case');
});

interface Route {
  method: string;
  path: string;
}

function apiRoutes(app: TestApp, kbId: string, router: 'api' | 'web' = 'api'): Route[] {
  const routes: Route[] = [];
  for (const layer of (router === 'api' ? buildApiRouter : buildWebApiRouter)(app.deps).stack) {
    for (const method of layer.methods) {
      if (method === 'HEAD') continue;
      routes.push({ method, path: String(layer.path).replace(':id', kbId).replace(':userId', kbId) });
    }
  }
  return routes;
}

/** Spellings of a lower-case path that differ only in letter case: the prefix, the resource, the whole path. */
function caseVariants(path: string): string[] {
  const [, api, version, ...rest] = path.split('/');
  const resource = rest.join('/');
  const capitalised = resource.replace(
    /(^|[/-])([a-z])/g,
    (_match, sep: string, letter: string) => `${sep}${letter.toUpperCase()}`,
  );
  return [
    path.toUpperCase(),
    `/${api.toUpperCase()}/${version.toUpperCase()}/${resource}`,
    `/Api/${version}/${resource}`,
    `/${api}/${version.toUpperCase()}/${resource}`,
    `/${api}/${version}/${capitalised}`,
  ].filter((variant) => variant !== path);
}

test('the route table is what the contract lists, plus the document lifecycle, the models list, search, membership and conversations', (t) => {
  const listed = apiRoutes(t.context.app, ':id')
    .map((route) => `${route.method} ${route.path}`)
    .sort();
  t.deepEqual(listed, [
    'DELETE /api/v1/conversations/:id',
    'DELETE /api/v1/conversations/:id/messages/:message_id/feedback',
    'DELETE /api/v1/documents/:id',
    'DELETE /api/v1/knowledge-bases/:id',
    'DELETE /api/v1/knowledge-bases/:id/membership',
    'GET /api/v1/conversations',
    'GET /api/v1/conversations/:id',
    'GET /api/v1/documents/:id',
    'GET /api/v1/knowledge-bases',
    'GET /api/v1/knowledge-bases/:id',
    'GET /api/v1/knowledge-bases/:id/documents',
    'GET /api/v1/knowledge-bases/:id/membership',
    'GET /api/v1/me',
    'GET /api/v1/models',
    'PATCH /api/v1/conversations/:id',
    'POST /api/v1/conversations',
    'POST /api/v1/conversations/:id/messages',
    'POST /api/v1/documents',
    'POST /api/v1/documents/:id/retry',
    'POST /api/v1/knowledge-bases',
    'POST /api/v1/knowledge-bases/:id/membership/accept',
    'POST /api/v1/query',
    'POST /api/v1/search',
    'PUT /api/v1/conversations/:id/messages/:message_id/feedback',
    'PUT /api/v1/documents/:id',
  ]);
});

test('every route in its contract spelling: 401 without a key, never a 5xx with one', async (t) => {
  for (const route of apiRoutes(t.context.app, t.context.kbId)) {
    const body = route.method === 'POST' || route.method === 'PUT' ? {} : undefined;
    const anonymous = await t.context.app.call(route.method, route.path, { body });
    t.is(anonymous.status, 401, `${route.method} ${route.path}`);
    t.is(anonymous.body?.error?.code, 'unauthorized');
    // Reads only: a DELETE with a key would delete the KB the other routes use.
    if (route.method === 'DELETE') continue;
    const keyed = await t.context.app.call(route.method, route.path, { key: t.context.user.key, body });
    t.true(keyed.status < 500, `${route.method} ${route.path} → ${keyed.status}`);
  }
});

test('case variants of every route are 404 in the envelope, with or without a key, and touch nothing', async (t) => {
  let checked = 0;
  for (const route of apiRoutes(t.context.app, t.context.kbId)) {
    for (const variant of caseVariants(route.path)) {
      for (const key of [null, t.context.user.key]) {
        const query = route.method === 'DELETE' ? '?permanent=true' : '';
        const response = await t.context.app.call(route.method, `${variant}${query}`, {
          key,
          body: route.method === 'POST' ? { name: 'x' } : undefined,
        });
        t.is(response.status, 404, `${route.method} ${variant} (key: ${key ? 'yes' : 'no'})`);
        t.is(response.body?.error?.code, 'not_found');
        checked += 1;
      }
    }
  }
  t.true(checked >= 60, `${checked} requests`);
  // The DELETE …?permanent=true variants reached no handler: the KB is still there.
  const kb = await t.context.app.call('GET', `/api/v1/knowledge-bases/${t.context.kbId}`, { key: t.context.user.key });
  t.is(kb.status, 200);
});

test('a handler never runs without a caller, whatever ran before it', async (t) => {
  let ran = false;
  const guarded = authenticated(() => {
    ran = true;
  });
  for (const state of [{}, { caller: undefined }, { caller: {} }, { caller: { user: {} } }]) {
    const ctx = { state: { requestId: 'r', ...state } } as unknown as AppContext;
    await t.throwsAsync(guarded(ctx), { instanceOf: UnauthorizedError });
  }
  t.false(ran);
});

/** The web app's routes a visitor without a session may call: the first run, sign-up, sign-in, set-password links. */
const PUBLIC_WEB_ROUTES = new Set([
  'GET /api/web/setup',
  'POST /api/web/setup/first-account',
  'POST /api/web/sign-up',
  'POST /api/web/session',
  'POST /api/web/password-links/inspect',
  'POST /api/web/password-links/use',
]);

test("the web app's routes: case variants are 404; without a session every other route is 401, and an API key is no session", async (t) => {
  const routes = apiRoutes(t.context.app, t.context.kbId, 'web');
  t.true(routes.length >= 30, `${routes.length} routes`);
  let checked = 0;
  for (const route of routes) {
    for (const variant of caseVariants(route.path)) {
      const response = await t.context.app.call(route.method, variant, {
        headers: { 'x-csrf-token': 'anonymous' },
        body: route.method === 'GET' ? undefined : {},
      });
      t.is(response.status, 404, `${route.method} ${variant}`);
      checked += 1;
    }
    if (PUBLIC_WEB_ROUTES.has(`${route.method} ${route.path}`)) continue;
    const body = route.method === 'GET' ? undefined : {};
    const anonymous = await t.context.app.call(route.method, route.path, {
      key: t.context.user.key,
      headers: { 'x-csrf-token': 'anonymous' },
      body,
    });
    t.is(anonymous.status, 401, `${route.method} ${route.path}`);
    t.is(anonymous.body?.error?.code, 'unauthorized');
  }
  t.true(checked >= 100, `${checked} requests`);
});
