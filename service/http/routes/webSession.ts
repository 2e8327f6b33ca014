// /api/web: the web app's first run, sign-up, sign-in and sign-out, password changes and set-password links.
import type Router from '@koa/router';
import { createFirstAccount, changePassword, endAllSessions, endSession, signIn, signUp, startSession } from '../../commands/sessions.ts';
import { inspectPasswordLink, usePasswordLink } from '../../commands/passwords.ts';
import { presentCallerSession, presentSession } from '../../presenters/users.ts';
import type { UserRecord } from '../../store/index.ts';
import { authenticated, newRouter, type AppContext, type AppDeps, type AppState } from '../context.ts';
import { clearSessionCookie, setSessionCookie } from '../middleware/session.ts';
import { parseInput } from '../validation.ts';
import { changePasswordBody, credentialsBody, passwordLinkBody, signOutEverywhereQuery, usePasswordLinkBody } from './webSession.schema.ts';

export function webSessionRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();
  const settings = deps.config.web;

  /** A new session for `user`: the cookie, and the user with the CSRF token in the body. */
  async function signedIn(ctx: AppContext, user: UserRecord, status: number): Promise<void> {
    const session = await startSession(deps.store, settings, user);
    setSessionCookie(ctx, settings, session);
    ctx.status = status;
    ctx.body = presentSession({ id: user._id, email: user.email, isAdmin: user.is_admin === true }, session.record.csrf_token);
  }

  router.get('/setup', async (ctx) => {
    ctx.body = { first_account_needed: !(await deps.store.hasAnyUser()), sign_up_open: settings.signUpOpen };
  });

  router.post('/setup/first-account', async (ctx) => {
    const input = parseInput(credentialsBody, ctx.request.body, 'body');
    await signedIn(ctx, await createFirstAccount(deps.store, input), 201);
  });

  router.post('/sign-up', async (ctx) => {
    const input = parseInput(credentialsBody, ctx.request.body, 'body');
    await signedIn(ctx, await signUp(deps.store, settings, input, ctx.ip), 201);
  });

  router.post('/session', async (ctx) => {
    const input = parseInput(credentialsBody, ctx.request.body, 'body');
    const user = await signIn(deps.store, settings, input, ctx.ip);
    // A sign-in replaces whatever session this browser had (only once it succeeded: a typo keeps you signed in).
    if (ctx.state.caller) await endSession(deps.store, ctx.state.caller);
    await signedIn(ctx, user, 200);
  });

  router.get('/session', authenticated((ctx, caller) => {
    ctx.body = presentCallerSession(caller);
  }));

  router.delete('/session', authenticated(async (ctx, caller) => {
    await endSession(deps.store, caller);
    clearSessionCookie(ctx, settings);
    ctx.body = { signed_out: true };
  }));

  router.delete('/sessions', authenticated(async (ctx, caller) => {
    const { revoke_api_keys } = parseInput(signOutEverywhereQuery, ctx.query, 'query');
    const ended = await endAllSessions(deps.store, caller, { revokeApiKeys: revoke_api_keys });
    clearSessionCookie(ctx, settings);
    ctx.body = { signed_out: ended.signedOut, api_keys_revoked: ended.apiKeysRevoked };
  }));

  router.put('/account/password', authenticated(async (ctx, caller) => {
    const input = parseInput(changePasswordBody, ctx.request.body, 'body');
    const { apiKeysRevoked } = await changePassword(deps.store, settings, caller, input, ctx.ip);
    ctx.body = { changed: true, api_keys_revoked: apiKeysRevoked };
  }));

  router.post('/password-links/inspect', async (ctx) => {
    const { token } = parseInput(passwordLinkBody, ctx.request.body, 'body');
    const link = await inspectPasswordLink(deps.store, token);
    // The purpose sets the page's default: a reset offers to revoke every API key, ticked.
    ctx.body = { email: link.user.email, purpose: link.purpose };
  });

  router.post('/password-links/use', async (ctx) => {
    const { token, password, revoke_api_keys } = parseInput(usePasswordLinkBody, ctx.request.body, 'body');
    await signedIn(ctx, await usePasswordLink(deps.store, token, password, { revokeApiKeys: revoke_api_keys }), 200);
  });

  return router;
}
