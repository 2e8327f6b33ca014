// /api/web: the invitations a person has received (KBs shared with them, not accepted: left out of their list of
// KBs), and the senders they block. Accepting and declining are …/membership (routes/knowledgeBaseMembership.ts).
import type Router from '@koa/router';
import type { z } from 'zod';
import {
  blockSender,
  listBlockedSenders,
  listReceivedInvitations,
  unblockSender,
} from '../../commands/shareInvitations.ts';
import { presentBlockedSender, presentReceivedInvitation } from '../../presenters/shareInvitations.ts';
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import type {
  blockedSenderResponse,
  blockedSendersResponse,
  receivedInvitationsResponse,
  unblockedResponse,
} from './webApp.schema.ts';

export function shareInvitationRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();

  router.get(
    '/invitations',
    authenticated(async (ctx, caller) => {
      const invitations = await listReceivedInvitations(deps.store, caller.user);
      ctx.body = { invitations: invitations.map(presentReceivedInvitation) } satisfies z.input<
        typeof receivedInvitationsResponse
      >;
    }),
  );

  router.get(
    '/blocked-senders',
    authenticated(async (ctx, caller) => {
      const blocked = await listBlockedSenders(deps.store, caller.user);
      ctx.body = {
        blocked_senders: blocked.map(({ sender, blockedAt }) => presentBlockedSender(sender, blockedAt)),
      } satisfies z.input<typeof blockedSendersResponse>;
    }),
  );

  router.put(
    '/blocked-senders/:userId',
    authenticated(async (ctx, caller) => {
      const sender = await blockSender(deps.store, caller.user, ctx.params.userId);
      ctx.body = { blocked_sender: presentBlockedSender(sender, new Date()) } satisfies z.input<
        typeof blockedSenderResponse
      >;
    }),
  );

  router.delete(
    '/blocked-senders/:userId',
    authenticated(async (ctx, caller) => {
      await unblockSender(deps.store, caller.user, ctx.params.userId);
      ctx.body = { unblocked: true } satisfies z.input<typeof unblockedResponse>;
    }),
  );

  return router;
}
