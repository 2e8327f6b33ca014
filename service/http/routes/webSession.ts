// /api/web: the web app's first run, sign-up, sign-in and sign-out, password changes and set-password links.
// Two routers: the anonymous routes, mounted before the session gate with a small body limit of their own, and the
// routes of a signed-in person, behind it (service/app.ts).
import type Router from '@koa/router';
import type { z } from 'zod';
import {
  changePassword,
  countRejectedSignIn,
  createFirstAccount,
  endAllSessions,
  endSession,
  liftSignInPause,
  signIn,
  signUp,
  startSession,
} from '../../commands/sessions.ts';
import { inspectPasswordLink, usePasswordLink } from '../../commands/passwords.ts';
import { presentCallerSession, presentSession } from '../../presenters/users.ts';
import type { UserRecord } from '../../store/index.ts';
import { authenticated, newRouter, type AppContext, type AppDeps, type AppState } from '../context.ts';
import { jsonBody } from '../middleware/jsonBody.ts';
import { clearSessionCookie, isRefusedRequest, setSessionCookie } from '../middleware/session.ts';
import { parseInput } from '../validation.ts';
import type {
  passwordChangedResponse,
  passwordLinkInfo,
  setupStatus,
  signedOutEverywhereResponse,
  signedOutResponse,
} from './webApp.schema.ts';
import {
  changePasswordBody,
  credentialsBody,
  passwordLinkBody,
  signOutEverywhereQuery,
  usePasswordLinkBody,
} from './webSession.schema.ts';

/** A new session for `user`: the cookie, and the user with the CSRF token in the body. */
async function signedIn(deps: AppDeps, ctx: AppContext, user: UserRecord, status: number): Promise<void> {
  const session = await startSession(deps.store, deps.config.web, user);
  setSessionCookie(ctx, deps.config.web, session);
  ctx.status = status;
  ctx.body = presentSession(
    { id: user._id, email: user.email, isAdmin: user.is_admin === true },
    session.record.csrf_token,
  );
}

/**
 * What a person without a session may do: first run, sign-up, sign-in, set-password links. Bodies of at most
 * KBQA_MAX_ANONYMOUS_BODY_BYTES, never compressed.
 */
export function anonymousWebRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();
  const settings = deps.config.web;
  const smallBody = jsonBody({
    maxBytes: deps.config.limits.maxAnonymousBodyBytes,
    maxDepth: deps.config.limits.maxJsonDepth,
    encodings: 'refuse',
  });

  router.get('/setup', async (ctx) => {
    ctx.body = {
      first_account_needed: !(await deps.store.hasAnyUser()),
      sign_up_open: settings.signUpOpen,
    } satisfies z.input<typeof setupStatus>;
  });

  router.post('/setup/first-account', smallBody, async (ctx) => {
    const input = parseInput(credentialsBody, ctx.request.body, 'body');
    await signedIn(deps, ctx, await createFirstAccount(deps.store, input), 201);
  });

  router.post('/sign-up', smallBody, async (ctx) => {
    const input = parseInput(credentialsBody, ctx.request.body, 'body');
    await signedIn(deps, ctx, await signUp(deps.store, settings, input, ctx.ip), 201);
  });

  router.post(
    '/session',
    // A refused body counts against the address like a wrong password: refusals are not free to repeat.
    async (ctx, next) => {
      try {
        await next();
      } catch (error) {
        if (isRefusedRequest(error)) await countRejectedSignIn(deps.store, settings, ctx.ip);
        throw error;
      }
    },
    smallBody,
    async (ctx) => {
      const input = parseInput(credentialsBody, ctx.request.body, 'body');
      const user = await signIn(deps.store, settings, input, ctx.ip);
      // A sign-in replaces whatever session this browser had (only once it succeeded: a typo keeps you signed in).
      if (ctx.state.caller) await endSession(deps.store, ctx.state.caller);
      await signedIn(deps, ctx, user, 200);
    },
  );

  router.post('/password-links/inspect', smallBody, async (ctx) => {
    const { token } = parseInput(passwordLinkBody, ctx.request.body, 'body');
    const link = await inspectPasswordLink(deps.store, token);
    // The purpose sets the page's default: a reset offers to revoke every API key, ticked.
    ctx.body = { email: link.user.email, purpose: link.purpose } satisfies z.input<typeof passwordLinkInfo>;
  });

  router.post('/password-links/use', smallBody, async (ctx) => {
    const { token, password, revoke_api_keys } = parseInput(usePasswordLinkBody, ctx.request.body, 'body');
    const user = await usePasswordLink(deps.store, token, password, { revokeApiKeys: revoke_api_keys });
    await liftSignInPause(deps.store, user.email, ctx.ip);
    await signedIn(deps, ctx, user, 200);
  });

  return router;
}

/** A signed-in person's session and password (behind the session gate and the full body parser). */
export function webSessionRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();
  const settings = deps.config.web;

  router.get(
    '/session',
    authenticated((ctx, caller) => {
      ctx.body = presentCallerSession(caller);
    }),
  );

  router.delete(
    '/session',
    authenticated(async (ctx, caller) => {
      await endSession(deps.store, caller);
      clearSessionCookie(ctx, settings);
      ctx.body = { signed_out: true } satisfies z.input<typeof signedOutResponse>;
    }),
  );

  router.delete(
    '/sessions',
    authenticated(async (ctx, caller) => {
      const { revoke_api_keys } = parseInput(signOutEverywhereQuery, ctx.query, 'query');
      const ended = await endAllSessions(deps.store, caller, { revokeApiKeys: revoke_api_keys });
      clearSessionCookie(ctx, settings);
      ctx.body = { signed_out: ended.signedOut, api_keys_revoked: ended.apiKeysRevoked } satisfies z.input<
        typeof signedOutEverywhereResponse
      >;
    }),
  );

  router.put(
    '/account/password',
    authenticated(async (ctx, caller) => {
      const input = parseInput(changePasswordBody, ctx.request.body, 'body');
      const { apiKeysRevoked } = await changePassword(deps.store, settings, caller, input, ctx.ip);
      ctx.body = { changed: true, api_keys_revoked: apiKeysRevoked } satisfies z.input<typeof passwordChangedResponse>;
    }),
  );

  return router;
}
