// /api/web/admin: users and invitations (admins only).
import type Router from '@koa/router';
import type { z } from 'zod';
import { createPasswordResetLinkForUser, deleteAccountById, inviteUser, listUsers } from '../../commands/accounts.ts';
import { authorizeAccountDeletion, authorizeAdministration } from '../../policies/accounts.ts';
import { presentAdminUser, presentPasswordLink } from '../../presenters/users.ts';
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import { parseInput } from '../validation.ts';
import type { accountDeletedResponse, adminUsersResponse, passwordResetResponse } from './webApp.schema.ts';
import { inviteBody } from './webSession.schema.ts';

export function adminRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();

  router.get(
    '/admin/users',
    authenticated(async (ctx, caller) => {
      authorizeAdministration(caller);
      ctx.body = { users: (await listUsers(deps.store)).map(presentAdminUser) } satisfies z.input<
        typeof adminUsersResponse
      >;
    }),
  );

  router.post(
    '/admin/invitations',
    authenticated(async (ctx, caller) => {
      authorizeAdministration(caller);
      const input = parseInput(inviteBody, ctx.request.body, 'body');
      const { user, link } = await inviteUser(deps.store, deps.config.web, {
        email: input.email,
        isAdmin: input.is_admin,
      });
      ctx.status = 201;
      ctx.body = presentPasswordLink(user, link);
    }),
  );

  // A reset link for someone locked out or who forgot their password: shown to the admin once, passed on by hand.
  router.post(
    '/admin/users/:id/password-reset',
    authenticated(async (ctx, caller) => {
      authorizeAdministration(caller);
      const { user, link } = await createPasswordResetLinkForUser(deps.store, deps.config.web, ctx.params.id);
      ctx.status = 201;
      ctx.body = presentPasswordLink(user, link) satisfies z.input<typeof passwordResetResponse>;
    }),
  );

  // Deleting an account: it can no longer sign in or use a key, and its conversations and KBs go with it.
  router.delete(
    '/admin/users/:id',
    authenticated(async (ctx, caller) => {
      authorizeAccountDeletion(caller, ctx.params.id);
      const deleted = await deleteAccountById(deps.store, ctx.params.id);
      ctx.body = { deleted: true, ...deleted } satisfies z.input<typeof accountDeletedResponse>;
    }),
  );

  return router;
}
