// The web app's credential: a session cookie. Reading it, setting it, clearing it. /api/v1 never looks at cookies.
import type { Middleware } from 'koa';
import { callerOfSession, resolveSession, type SessionSettings, type StartedSession } from '../../commands/sessions.ts';
import { ApiError, UnauthorizedError } from '../../errors.ts';
import type { Store } from '../../store/index.ts';
import type { AppContext } from '../context.ts';

export interface CookieSettings {
  /** HTTPS deployments (KBQA_PUBLIC_URL https://…): Secure, and the __Host- prefix that pins it to this origin. */
  secureCookies: boolean;
  sessionMaxMs: number;
}

export function sessionCookieName(settings: { secureCookies: boolean }): string {
  return settings.secureCookies ? '__Host-kbqa_session' : 'kbqa_session';
}

/** One cookie's value from the Cookie header: a plain split, no pattern that could backtrack on a long header. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const equals = part.indexOf('=');
    if (equals > 0 && part.slice(0, equals).trim() === name) return part.slice(equals + 1).trim();
  }
  return null;
}

function cookieAttributes(settings: CookieSettings, maxAgeSeconds: number): string {
  return `Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${settings.secureCookies ? '; Secure' : ''}`;
}

export function setSessionCookie(ctx: AppContext, settings: CookieSettings, session: StartedSession): void {
  const maxAge = Math.floor(settings.sessionMaxMs / 1000);
  ctx.append('Set-Cookie', `${sessionCookieName(settings)}=${session.id}; ${cookieAttributes(settings, maxAge)}`);
}

export function clearSessionCookie(ctx: AppContext, settings: CookieSettings): void {
  ctx.append('Set-Cookie', `${sessionCookieName(settings)}=; ${cookieAttributes(settings, 0)}`);
}

/**
 * Resolves the session cookie to the caller when it names a live session. Anonymous requests go on (sign-in and the
 * first-run endpoints need none); handlers that need a caller take it through `authenticated()`.
 */
export function authenticateSession(store: Store, settings: SessionSettings & CookieSettings): Middleware {
  return async (ctx, next) => {
    const sessionId = readCookie(ctx.get('cookie') || undefined, sessionCookieName(settings));
    if (sessionId) {
      const record = await resolveSession(store, settings, sessionId);
      if (record) ctx.state.caller = callerOfSession(record);
      // A cookie naming no live session is cleared, so the browser stops sending it.
      else clearSessionCookie(ctx as AppContext, settings);
    }
    await next();
  };
}

/**
 * The gate after the anonymous web routes: without a session nothing further runs, the body parser included. A
 * caller nobody knows gets its 401 before a byte of its body is read.
 */
export function requireSession(): Middleware {
  return async (ctx, next) => {
    if (!ctx.state.caller) throw UnauthorizedError.signedOut();
    await next();
  };
}

/** Whether a failure is the request's own (bad body, too large, wrong encoding), as opposed to a wrong password or an outage. */
export function isRefusedRequest(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 400 || error.status === 413 || error.status === 415);
}
