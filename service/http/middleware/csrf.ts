// Cross-site request forgery defence for the web app's endpoints, beyond the cookie's SameSite=Lax:
//  1. A browser's own word on where a request comes from: Sec-Fetch-Site must be same-origin (or none: typed,
//     bookmarked), and an Origin header must be this origin.
//  2. A token: every state-changing request carries X-CSRF-Token. With a session it must equal the session's token
//     (handed to the app in the session response, never in a cookie). Without one (sign-in, first account) it must
//     be present: a custom header cannot be sent cross-site without a CORS preflight, which this server never grants.
import type { Middleware } from 'koa';
import { csrfTokenMatches } from '../../commands/sessions.ts';
import { ForbiddenError } from '../../errors.ts';
import type { AppState } from '../context.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
export const CSRF_HEADER = 'X-CSRF-Token';

/** Hosts a browser reaches this machine by: the dev server (localhost:5173) and local runs send these. */
const LOOPBACK_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The origins a state-changing request may come from: the configured public one, and the one the request names in
 * Host, but only for loopback or the public hostname. Trusting any Host would let a DNS-rebinding page (evil.example
 * resolved to 127.0.0.1) pass as same-origin and, say, create the first account of a fresh install.
 */
function allowedOrigin(
  origin: string,
  publicOrigin: string,
  publicHostname: string,
  requestOrigin: string,
  requestHostname: string,
): boolean {
  if (origin === publicOrigin) return true;
  return origin === requestOrigin && (LOOPBACK_HOSTNAMES.has(requestHostname) || requestHostname === publicHostname);
}

export function requireCsrfDefence(publicUrl: string): Middleware<AppState> {
  const { origin: publicOrigin, hostname: publicHostname } = new URL(publicUrl);
  return async (ctx, next) => {
    if (SAFE_METHODS.has(ctx.method)) return next();
    const fetchSite = ctx.get('sec-fetch-site');
    if (fetchSite && fetchSite !== 'same-origin' && fetchSite !== 'none') {
      throw new ForbiddenError(`cross-site request refused (Sec-Fetch-Site: ${fetchSite.slice(0, 40)})`);
    }
    const origin = ctx.get('origin');
    if (origin && !allowedOrigin(origin, publicOrigin, publicHostname, `${ctx.protocol}://${ctx.host}`, ctx.hostname)) {
      throw new ForbiddenError('cross-origin request refused: the Origin is not this site');
    }
    const token = ctx.get(CSRF_HEADER);
    const caller = ctx.state.caller;
    if (caller ? !csrfTokenMatches(caller, token) : token.length === 0) {
      throw new ForbiddenError(`missing or wrong ${CSRF_HEADER} header (reload the page and try again)`);
    }
    await next();
  };
}
