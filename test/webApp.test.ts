// The built web app served by the API (service/http/webApp.ts), against a tiny build made here: index.html for the
// app's paths (never for /api/), hashed assets cached for a year, no file outside the build reachable by any
// spelling of "..", the security headers, 503 when nothing is built; then the real Chromium through the browser
// harness (test/helpers/browser.ts) loads it under the CSP. Also the Chromium provisioning's branches.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CONTENT_SECURITY_POLICY,
  IMMUTABLE_CACHE,
  REFERRER_POLICY,
  SHORT_CACHE,
  pathSegments,
} from '../service/http/webApp.ts';
import { DEFAULT_CHROMIUM, ProvisionError, provisionBrowser } from '../stack/provision.ts';
import { startTestApp, testWithApp } from './helpers/app.ts';
import { chromiumExecutable, launchBrowser, newPage, screenshot } from './helpers/browser.ts';

const test = testWithApp<{ tmp: string; dist: string }>({
  env: (t) => {
    t.context.tmp = mkdtempSync(join(tmpdir(), 'kbqa-web-'));
    t.context.dist = makeDist(t.context.tmp);
    return { KBQA_WEB_DIST: t.context.dist };
  },
});

const TITLE = 'kbqa web app test page';
const SENTINEL = 'SENTINEL-OUTSIDE-THE-BUILD';
const INDEX_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${TITLE}</title>
    <link rel="stylesheet" href="/assets/app-abc123.css" />
    <script type="module" src="/assets/app-abc123.js"></script>
  </head>
  <body><div id="root"></div></body>
</html>
`;
const APP_JS =
  "document.getElementById('root').textContent = 'app loaded';\ndocument.documentElement.dataset.loaded = 'yes';\n";
// A page the CSP must refuse: the browser test's negative control (it proves violations are seen).
const INLINE_HTML = `<!doctype html><html><head><title>inline</title><script>document.title = 'inline ran';</script></head><body></body></html>`;

/** The other asset kinds Vite emits, by the Content-Type each must carry. */
const ASSET_TYPES: Record<string, string> = {
  'app-abc123.css': 'text/css; charset=utf-8',
  'logo-abc123.svg': 'image/svg+xml',
  'logo-abc123.png': 'image/png',
  'font-abc123.woff2': 'font/woff2',
  'icon-abc123.ico': 'image/x-icon',
  'data-abc123.json': 'application/json; charset=utf-8',
  'app-abc123.js.map': 'application/json; charset=utf-8',
};

function makeDist(tmp: string): string {
  const dist = join(tmp, 'dist');
  mkdirSync(join(dist, 'assets'), { recursive: true });
  writeFileSync(join(dist, 'index.html'), INDEX_HTML);
  writeFileSync(join(dist, 'inline.html'), INLINE_HTML);
  writeFileSync(join(dist, 'assets', 'app-abc123.js'), APP_JS);
  for (const name of Object.keys(ASSET_TYPES))
    writeFileSync(join(dist, 'assets', name), name.endsWith('.css') ? 'body { margin: 0; }\n' : `x ${name}`);
  writeFileSync(join(dist, 'favicon.ico'), Buffer.from([0, 0, 1, 0]));
  writeFileSync(join(dist, 'robots.txt'), 'User-agent: *\nDisallow:\n');
  writeFileSync(join(dist, '.build-hash'), 'not for the public\n');
  // Files outside the build, and a link from inside it to one of them: none may ever be served.
  writeFileSync(join(tmp, 'package.json'), `{"name":"${SENTINEL}"}`);
  writeFileSync(join(tmp, 'secret.txt'), SENTINEL);
  symlinkSync(join(tmp, 'secret.txt'), join(dist, 'assets', 'leak-abc123.js'));
  return dist;
}

test.after.always(async (t) => {
  if (t.context.tmp) rmSync(t.context.tmp, { recursive: true, force: true });
});

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** node:http, not fetch: fetch resolves "..", "%2e%2e" and friends before sending, which would test nothing. */
function raw(
  baseUrl: string,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method: options.method ?? 'GET', path, headers: options.headers },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function assertAppHeaders(t: any, response: RawResponse, label: string) {
  t.is(response.headers['content-security-policy'], CONTENT_SECURITY_POLICY, label);
  t.is(response.headers['x-frame-options'], 'DENY', label);
  t.is(response.headers['cross-origin-opener-policy'], 'same-origin', label);
  t.is(response.headers['x-content-type-options'], 'nosniff', label);
  t.is(response.headers['referrer-policy'], REFERRER_POLICY, label);
}

function assertIndex(t: any, response: RawResponse, label: string) {
  t.is(response.status, 200, label);
  t.is(response.headers['content-type'], 'text/html; charset=utf-8', label);
  t.is(response.headers['cache-control'], 'no-cache', label);
  t.is(response.text, INDEX_HTML, label);
  assertAppHeaders(t, response, label);
}

function assertJsonNotFound(t: any, response: RawResponse, label: string) {
  t.is(response.status, 404, label);
  t.regex(String(response.headers['content-type']), /^application\/json/, label);
  t.is(JSON.parse(response.text).error.code, 'not_found', label);
  t.false(response.text.includes(SENTINEL), label);
  t.false(response.text.includes('<!doctype'), label);
}

test('GET / is index.html, revalidated every time, under the CSP and the other security headers', async (t) => {
  const response = await raw(t.context.app.baseUrl, '/');
  assertIndex(t, response, '/');
  const csp = String(response.headers['content-security-policy']);
  const scriptSrc = csp.split('; ').find((directive) => directive.startsWith('script-src '));
  t.is(scriptSrc, "script-src 'self'");
  t.false(csp.includes('unsafe-inline'));
  t.false(csp.includes('unsafe-eval'));
  t.true(csp.split('; ').includes("frame-ancestors 'none'"));
});

test('app routes fall back to index.html (the React router takes the path), /index.html too', async (t) => {
  for (const path of [
    '/knowledge-bases/x',
    '/knowledge-bases/x/documents?page=2',
    '/settings/api-keys',
    '/index.html',
    '/.build-hash',
    '/missing.js',
  ]) {
    assertIndex(t, await raw(t.context.app.baseUrl, path), path);
  }
});

test('a hashed asset is streamed with a year-long immutable cache, its JS type and a validator', async (t) => {
  const response = await raw(t.context.app.baseUrl, '/assets/app-abc123.js');
  t.is(response.status, 200);
  t.is(response.text, APP_JS);
  t.is(response.headers['content-type'], 'text/javascript; charset=utf-8');
  t.is(response.headers['cache-control'], IMMUTABLE_CACHE);
  t.is(response.headers['content-length'], String(Buffer.byteLength(APP_JS)));
  assertAppHeaders(t, response, 'asset');
  const etag = String(response.headers.etag);
  t.truthy(response.headers.etag);
  const again = await raw(t.context.app.baseUrl, '/assets/app-abc123.js', { headers: { 'if-none-match': etag } });
  t.is(again.status, 304);
  t.is(again.text, '');
});

test('each asset kind carries its Content-Type', async (t) => {
  for (const [name, type] of Object.entries(ASSET_TYPES)) {
    const response = await raw(t.context.app.baseUrl, `/assets/${name}`);
    t.is(response.status, 200, name);
    t.is(response.headers['content-type'], type, name);
    t.is(response.headers['cache-control'], IMMUTABLE_CACHE, name);
  }
});

test('top-level files of the build are served with a short cache', async (t) => {
  const favicon = await raw(t.context.app.baseUrl, '/favicon.ico');
  t.is(favicon.status, 200);
  t.is(favicon.headers['content-type'], 'image/x-icon');
  t.is(favicon.headers['cache-control'], SHORT_CACHE);
  const robots = await raw(t.context.app.baseUrl, '/robots.txt');
  t.is(robots.text, 'User-agent: *\nDisallow:\n');
  t.is(robots.headers['content-type'], 'text/plain; charset=utf-8');
  t.is(robots.headers['cache-control'], SHORT_CACHE);
});

test('an unknown asset is a 404 in the envelope, never index.html', async (t) => {
  for (const path of ['/assets/app-000000.js', '/assets/', '/assets/nested/app-abc123.js']) {
    const response = await raw(t.context.app.baseUrl, path);
    assertJsonNotFound(t, response, path);
    t.is(response.headers['x-content-type-options'], 'nosniff', path);
  }
});

test('no spelling of ".." (plain, encoded, encoded slash or backslash, NUL) and no link reaches a file outside the build', async (t) => {
  for (const path of [
    '/assets/../package.json',
    '/assets/../../package.json',
    '/assets/%2e%2e/package.json',
    '/assets/%2E%2E/%2e%2e/package.json',
    '/assets/..%2fpackage.json',
    '/assets/..%2f..%2fpackage.json',
    '/assets/%2e%2e%2f%2e%2e%2fsecret.txt',
    '/assets/..%5c..%5cpackage.json',
    '/assets/..\\..\\package.json',
    '/assets/app-abc123.js%00.png',
    '/assets/%zz',
    '/assets/leak-abc123.js',
    '/..%2fpackage.json',
    '/%2e%2e/secret.txt',
    '/knowledge-bases/../../secret.txt',
  ]) {
    const response = await raw(t.context.app.baseUrl, path);
    assertJsonNotFound(t, response, path);
  }
  t.deepEqual(pathSegments('/assets/a%20b.js'), ['assets', 'a b.js']);
  t.is(pathSegments('/assets/%2e%2e/x'), null);
});

test('unknown /api/ paths, in any case, stay the JSON 404; health answers JSON; the API carries nosniff and Referrer-Policy', async (t) => {
  for (const path of [
    '/api/v1/nope',
    '/api/web/nope',
    '/api/nope',
    '/api',
    '/API/V1/me',
    '/Api/web/session',
    '/api/../index.html',
    '/HEALTHZ',
  ]) {
    const response = await raw(t.context.app.baseUrl, path);
    assertJsonNotFound(t, response, path);
    t.is(response.headers['x-content-type-options'], 'nosniff', path);
    t.is(response.headers['referrer-policy'], REFERRER_POLICY, path);
    t.is(response.headers['content-security-policy'], undefined, path);
  }
  const me = await raw(t.context.app.baseUrl, '/api/v1/me');
  t.is(me.status, 401);
  t.is(me.headers['x-content-type-options'], 'nosniff');
  t.is(me.headers['referrer-policy'], REFERRER_POLICY);
  const health = await raw(t.context.app.baseUrl, '/healthz');
  t.is(health.status, 200);
  t.deepEqual(JSON.parse(health.text), { status: 'ok' });
  t.is(health.headers['x-content-type-options'], 'nosniff');
});

test('HEAD answers the headers of GET without a body; other methods are not the app', async (t) => {
  const index = await raw(t.context.app.baseUrl, '/knowledge-bases/x', { method: 'HEAD' });
  t.is(index.status, 200);
  t.is(index.text, '');
  t.is(index.headers['content-length'], String(Buffer.byteLength(INDEX_HTML)));
  t.is(index.headers['content-type'], 'text/html; charset=utf-8');
  t.is(index.headers['cache-control'], 'no-cache');
  const asset = await raw(t.context.app.baseUrl, '/assets/app-abc123.js', { method: 'HEAD' });
  t.is(asset.status, 200);
  t.is(asset.text, '');
  t.is(asset.headers['cache-control'], IMMUTABLE_CACHE);
  const post = await raw(t.context.app.baseUrl, '/knowledge-bases/x', { method: 'POST' });
  assertJsonNotFound(t, post, 'POST');
  // Many HEADs in a row: each response's file handle is closed (a leak would surface as EMFILE long before 300).
  for (let index = 0; index < 300; index += 1) {
    t.is((await raw(t.context.app.baseUrl, '/assets/app-abc123.js', { method: 'HEAD' })).status, 200);
  }
});

test('without a build the API starts, and pages answer 503 saying how to build; health and the API are unaffected', async (t) => {
  const app = await startTestApp({ KBQA_WEB_DIST: join(t.context.tmp, 'never-built') });
  try {
    for (const path of ['/', '/knowledge-bases/x']) {
      const response = await raw(app.baseUrl, path);
      t.is(response.status, 503, path);
      const body = JSON.parse(response.text);
      t.deepEqual(Object.keys(body), ['error']);
      t.is(body.error.code, 'server_error');
      t.true(body.error.message.includes('npm start'), body.error.message);
      t.true(body.error.message.includes('npm run build:web'), body.error.message);
    }
    assertJsonNotFound(t, await raw(app.baseUrl, '/assets/app-abc123.js'), 'asset without a build');
    t.is((await raw(app.baseUrl, '/healthz')).status, 200);
    assertJsonNotFound(t, await raw(app.baseUrl, '/api/v1/nope'), 'api without a build');
  } finally {
    await app.close();
  }
});

test('the real Chromium loads the app under its CSP without a violation; an inline script is refused and seen', async (t) => {
  t.is(chromiumExecutable(), process.env.KBQA_CHROMIUM ?? DEFAULT_CHROMIUM);
  const browser = await launchBrowser();
  try {
    for (const viewport of ['desktop', 'phone'] as const) {
      const page = await newPage(browser, t.context.app.baseUrl, { viewport });
      const messages: string[] = [];
      page.on('console', (message) => messages.push(`${message.type()}: ${message.text()}`));
      page.on('pageerror', (error) => messages.push(`pageerror: ${error.message}`));
      // Reported by the page itself too, in case a Chromium version stops logging violations to the console.
      await page.addInitScript(() => {
        document.addEventListener('securitypolicyviolation', (event) =>
          console.error(`CSP violation: ${event.violatedDirective}`),
        );
      });

      const response = await page.goto('/knowledge-bases/x');
      t.is(response?.status(), 200);
      await page.waitForSelector('html[data-loaded="yes"]');
      t.is(await page.title(), TITLE);
      t.is(await page.textContent('#root'), 'app loaded');
      t.is(await page.evaluate(() => getComputedStyle(document.body).marginTop), '0px', 'the stylesheet applied');
      t.is(page.viewportSize()?.width, viewport === 'desktop' ? 1280 : 375);
      t.deepEqual(messages, [], `no console output on the app page (${viewport})`);
      if (viewport === 'desktop') t.true((await screenshot(page, 'web-app-test')).endsWith('web-app-test-desktop.png'));

      // The negative control: the same listeners see the CSP refuse an inline script.
      await page.goto('/inline.html');
      await page.waitForLoadState('load');
      t.is(await page.title(), 'inline', 'the inline script did not run');
      t.true(
        messages.some((message) => message.includes('Content Security Policy') || message.includes('CSP violation')),
        messages.join('\n'),
      );
      await page.context().close();
    }
  } finally {
    await browser.close();
  }
});

test('provisionBrowser: KBQA_CHROMIUM wins; a missing browser names what to install; apt-get runs only as root', (t) => {
  t.is(provisionBrowser({ env: { KBQA_CHROMIUM: process.execPath } }), process.execPath);

  const missing = t.throws(() => provisionBrowser({ env: { KBQA_CHROMIUM: '/nonexistent/chromium' } }), {
    instanceOf: ProvisionError,
  });
  t.true(missing.message.includes('KBQA_CHROMIUM=/nonexistent/chromium'));
  t.true(missing.message.includes('sudo apt-get install chromium'));

  const commands: string[] = [];
  const record = (command: string, args: string[]) => {
    commands.push([command, ...args].join(' '));
  };
  const notRoot = t.throws(
    () => provisionBrowser({ env: {}, exists: () => false, isRoot: false, hasAptGet: true, run: record }),
    {
      instanceOf: ProvisionError,
    },
  );
  t.true(notRoot.message.includes('sudo apt-get install chromium'));
  t.true(notRoot.message.includes('KBQA_CHROMIUM'));
  t.deepEqual(commands, [], 'no apt-get without root');

  // Root with apt-get: install; when that fails, update and install once more.
  let installed = false;
  let installs = 0;
  const chosen = provisionBrowser({
    env: {},
    exists: () => installed,
    isRoot: true,
    hasAptGet: true,
    log: () => {},
    run: (command, args, options) => {
      record(command, args);
      t.is(options.env.DEBIAN_FRONTEND, 'noninteractive');
      if (args[0] === 'install' && (installs += 1) === 1) throw new Error('E: Unable to locate package chromium');
      if (args[0] === 'install') installed = true;
    },
  });
  t.is(chosen, DEFAULT_CHROMIUM);
  t.deepEqual(commands, [
    'apt-get install -y --no-install-recommends chromium',
    'apt-get update',
    'apt-get install -y --no-install-recommends chromium',
  ]);
});
