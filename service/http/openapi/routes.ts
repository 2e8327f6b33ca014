// GET /api/v1/openapi.json (the description, no key needed; /openapi.json redirects there) and GET /docs (it
// rendered by Redoc). Both come from this process: Redoc's standalone bundle is read from node_modules and served
// from this origin, so the reference works offline and no request of the page leaves the origin (Redoc's telemetry
// is switched off and its CSP forbids it).
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type Router from '@koa/router';
import { newRouter, type AppContext, type AppState } from '../context.ts';
import { IMMUTABLE_CACHE } from '../webApp.ts';
import { openApiDocument } from './document.ts';

export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PATH = '/docs';
export const GUESSED_OPENAPI_PATH = '/openapi.json';

/**
 * The reference page's policy: nothing but this origin, and inline styles only with the response's nonce. Redoc's
 * components are styled-components, which write their rules into a <style> element at run time; it takes the nonce
 * from <meta property="csp-nonce">, so styles need no 'unsafe-inline'. Scripts are 'self' only (the page has no
 * inline script), nothing connects elsewhere, and the page cannot be framed.
 * (Checked in Chromium by test/web/apiReference.test.ts: no CSP report, no request off the origin.)
 */
export function docsContentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The spec changes with a deploy, not between requests: a few minutes of caching, then a cheap revalidation. */
export const OPENAPI_CACHE = 'public, max-age=300, must-revalidate';

interface Asset {
  body: Buffer;
  gzipped: Buffer | null;
  etag: string;
}

function asset(body: Buffer): Asset {
  return { body, gzipped: null, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/**
 * Redoc's standalone bundle, read (and its logo made local) on first use. Its name carries a hash of what is served,
 * so it is cached for a year and a new Redoc, or a change to what is served, gets a new name.
 */
function redocBundle(): () => Asset & { name: string } {
  let loaded: (Asset & { name: string }) | null = null;
  return () => {
    if (loaded === null) {
      const source = readFileSync(fileURLToPath(import.meta.resolve('redoc/bundles/redoc.standalone.js')), 'utf8');
      const served = asset(Buffer.from(withoutRemoteImages(source), 'utf8'));
      loaded = { ...served, name: `redoc.standalone.${served.etag.slice(1, 13)}.js` };
    }
    return loaded;
  };
}

/**
 * Redoc's sidebar shows its maker's logo as an <img> from cdn.redoc.ly (no option turns it off): the one request the
 * page would make off the origin. The logo becomes an inline SVG saying the same ("Redocly"), so the attribution
 * stays and nothing leaves the origin.
 */
const REDOCLY_LOGO = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" width="54" height="14" viewBox="0 0 54 14"><text x="0" y="11" font-family="sans-serif" font-size="11" font-weight="600" fill="#0044d4">Redocly</text></svg>',
)}`;
const REMOTE_IMAGES = ['https://cdn.redoc.ly/redoc/logo-mini-full.svg', 'https://cdn.redoc.ly/redoc/logo-mini.svg'];

function withoutRemoteImages(bundle: string): string {
  let local = bundle;
  for (const url of REMOTE_IMAGES) local = local.replaceAll(url, REDOCLY_LOGO);
  return local;
}

function referencePage(scriptPath: string, nonce: string): string {
  // Redoc reads its options from the <redoc> element's attributes: no inline script needed.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta property="csp-nonce" nonce="${nonce}">
<title>kbqa Developer API reference</title>
<style nonce="${nonce}">
body { margin: 0; padding: 0; }
.app-bar { display: flex; align-items: center; gap: 1rem; padding: 0.5rem 1rem; border-bottom: 1px solid #d8dde6;
  font: 15px/1.5 system-ui, sans-serif; }
.app-bar a { display: inline-block; padding: 0.25rem 0; color: #0044d4; font-weight: 600; }
</style>
</head>
<body>
<header class="app-bar"><a href="/">← Back to the kbqa app</a><span>Developer API reference</span></header>
<redoc spec-url="${OPENAPI_PATH}" disable-telemetry="true" path-in-middle-panel="true"></redoc>
<script type="module" src="${scriptPath}"></script>
</body>
</html>
`;
}

/** 200 with the body (gzipped when the client takes it), or 304 when its copy is current. */
function send(ctx: AppContext, content: Asset, type: string, cacheControl: string): void {
  ctx.set('Cache-Control', cacheControl);
  ctx.set('Vary', 'Accept-Encoding');
  ctx.etag = content.etag;
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.type = type;
  if (content.body.length > 8192 && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    content.gzipped ??= gzipSync(content.body, { level: 9 });
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = content.gzipped;
    return;
  }
  ctx.body = content.body;
}

export function apiReferenceRoutes(): Router<AppState> {
  const router = newRouter();
  const redoc = redocBundle();
  let spec: Asset | null = null;

  router.get(OPENAPI_PATH, (ctx) => {
    spec ??= asset(Buffer.from(openApiDocument().json, 'utf8'));
    // A public description: any origin may read it (a spec viewer, a code generator in a browser); no credentials.
    ctx.set('Access-Control-Allow-Origin', '*');
    send(ctx, spec, 'application/json; charset=utf-8', OPENAPI_CACHE);
  });

  // Where people (and tools) guess the spec is: sent on to it rather than to the web app's "Page not found".
  router.get(GUESSED_OPENAPI_PATH, (ctx) => {
    ctx.status = 301;
    ctx.redirect(OPENAPI_PATH);
  });

  router.get(DOCS_PATH, (ctx) => {
    // A fresh nonce per response: the page is never cached (it is a few hundred bytes; the bundle is what is cached).
    const nonce = randomBytes(16).toString('base64');
    ctx.set('Content-Security-Policy', docsContentSecurityPolicy(nonce));
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = referencePage(`${DOCS_PATH}/assets/${redoc().name}`, nonce);
  });

  router.get(`${DOCS_PATH}/assets/:name`, (ctx, next) => {
    const bundle = redoc();
    // Any other name under /docs is no page (the web app reserves /docs, so it ends in the API's 404).
    if (ctx.params.name !== bundle.name) return next();
    send(ctx, bundle, 'text/javascript; charset=utf-8', IMMUTABLE_CACHE);
  });

  return router;
}
