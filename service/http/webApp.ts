// The built web app (config.web.distDir, `web/dist` by default) served by the API process itself: one origin for
// the app and its API, so the session cookie, CORS and the CSP stay simple. Three kinds of answer:
// - /assets/*: Vite's content-hashed files, cached for a year (a new build gives them new names);
// - other top-level files of the build (favicon.ico, robots.txt …), cached briefly;
// - any other GET/HEAD outside /api/, /docs, /healthz and /readyz: index.html, revalidated every time, so the React
//   router can take the path and a deploy is seen at the next navigation.
// Request paths are mapped onto the disk segment by segment: a segment that decodes to "." or "..", or contains a
// slash, a backslash or NUL, ends the request with a 404, and the resolved file must still lie inside the build
// after symbolic links are followed.
import { existsSync } from 'node:fs';
import { open, realpath, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { extname, join, resolve, sep } from 'node:path';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { NotFoundError, WebAppNotBuiltError } from '../errors.ts';

/**
 * Nothing inline, nothing from another origin: the build emits only files (`<script type="module" src>`, `<link
 * rel=stylesheet>`), so a script injected into the page through some bug has nowhere to run from. `data:` images are
 * allowed for small icons Vite inlines into CSS.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * `same-origin`, not `no-referrer`: both send nothing to other sites (the app's paths carry KB and document ids),
 * but under `no-referrer` a same-origin form POST carries `Origin: null` (Fetch standard, "append a request Origin
 * header"; checked in Chromium, whose fetch() POSTs keep the origin), so a CSRF check that compares Origin with the
 * service's own origin would refuse the app's own forms.
 */
export const REFERRER_POLICY = 'same-origin';

const APP_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';
export const SHORT_CACHE = 'public, max-age=3600';
export const REVALIDATE = 'no-cache';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
};

/**
 * First path segments the app never answers, in any letter case: /API/V1/me stays the API's 404, not index.html.
 * /metrics too: it is served on its own port (KBQA_METRICS_PORT), so a scraper pointed at this one gets a 404.
 * /docs is the API reference (http/openapi/routes.ts): a path under it that names nothing is a 404, not the app.
 */
const RESERVED_FIRST_SEGMENTS = new Set(['api', 'healthz', 'readyz', 'metrics', 'docs']);

/** On every response (API, health, app): no MIME sniffing of a JSON body into HTML, no Referer to other sites. */
export function securityHeaders(): Middleware {
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', REFERRER_POLICY);
    await next();
  };
}

/**
 * The decoded segments of a request path (`/a/b%20c` → ['a', 'b c']), or null when one cannot name a file inside a
 * directory: malformed percent-encoding, ".", "..", or a slash, backslash or NUL inside a segment (`..%2f`, `%00`).
 */
export function pathSegments(rawPath: string): string[] | null {
  const segments: string[] = [];
  for (const raw of rawPath.split('/').slice(1)) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (
      segment === '.' ||
      segment === '..' ||
      segment.includes('/') ||
      segment.includes('\\') ||
      segment.includes('\0')
    ) {
      return null;
    }
    segments.push(segment);
  }
  return segments;
}

interface OpenFile {
  handle: FileHandle;
  stats: Stats;
  path: string;
}

const MISSING = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'ELOOP', 'ENAMETOOLONG']);

/** Opens root/segments… when it is a regular file that lies inside root once symbolic links are followed. */
async function openInside(root: string, segments: string[]): Promise<OpenFile | null> {
  if (segments.length === 0 || segments.some((segment) => segment === '')) return null;
  const candidate = resolve(root, ...segments);
  if (!candidate.startsWith(root + sep)) return null;
  let handle: FileHandle;
  let path: string;
  try {
    const [realRoot, realCandidate] = await Promise.all([realpath(root), realpath(candidate)]);
    if (!realCandidate.startsWith(realRoot + sep)) return null;
    path = realCandidate;
    handle = await open(realCandidate, 'r');
  } catch (error) {
    if (MISSING.has((error as NodeJS.ErrnoException).code ?? '')) return null;
    throw error;
  }
  const stats = await handle.stat();
  if (!stats.isFile()) {
    await handle.close();
    return null;
  }
  return { handle, stats, path };
}

type WebContext = Parameters<Middleware>[0];

/** Answers with the file (streamed), or 304 when the client's copy is current. Takes ownership of the handle. */
async function sendFile(ctx: WebContext, file: OpenFile, cacheControl: string): Promise<void> {
  ctx.set('Cache-Control', cacheControl);
  ctx.set('Last-Modified', file.stats.mtime.toUTCString());
  ctx.etag = `W/"${file.stats.size.toString(16)}-${Math.floor(file.stats.mtimeMs).toString(16)}"`;
  ctx.status = 200;
  if (ctx.fresh) {
    await file.handle.close();
    ctx.status = 304;
    return;
  }
  ctx.set('Content-Type', CONTENT_TYPES[extname(file.path).toLowerCase()] ?? 'application/octet-stream');
  ctx.length = file.stats.size;
  // Koa destroys a body stream when the response finishes (HEAD included), which closes the handle.
  ctx.body = file.handle.createReadStream();
}

export function webApp(deps: { config: Config; logger: Logger }): Middleware {
  const root = resolve(deps.config.web.distDir);
  const assets = join(root, 'assets');
  if (!existsSync(join(root, 'index.html'))) {
    deps.logger.warn(
      { distDir: root },
      'web app not built: pages answer 503 until it is (npm start or npm run build:web)',
    );
  }

  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const segments = pathSegments(ctx.path);
    // The API and the health routes answer for themselves, even for paths that could not name a file.
    const first = segments?.[0] ?? ctx.path.split('/')[1] ?? '';
    if (RESERVED_FIRST_SEGMENTS.has(first.toLowerCase())) return next();

    for (const [name, value] of Object.entries(APP_HEADERS)) ctx.set(name, value);
    if (segments === null) throw new NotFoundError(`no such page: ${ctx.path}`);

    if (segments[0] === 'assets' && segments.length > 1) {
      const asset = await openInside(assets, segments.slice(1));
      if (asset === null) throw new NotFoundError(`no asset ${ctx.path}`);
      return sendFile(ctx, asset, IMMUTABLE_CACHE);
    }
    // Top-level files of the build; index.html itself is the fallback below (never cached), dotfiles
    // (.build-hash) are not served.
    if (segments.length === 1 && segments[0] !== 'index.html' && !segments[0].startsWith('.')) {
      const file = await openInside(root, segments);
      if (file !== null) return sendFile(ctx, file, SHORT_CACHE);
    }
    const index = await openInside(root, ['index.html']);
    if (index === null) throw new WebAppNotBuiltError();
    return sendFile(ctx, index, REVALIDATE);
  };
}
