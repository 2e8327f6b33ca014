// /knowledge-bases/{id}/membership, in both realms: the caller's relation to a KB (GET), accepting a KB shared with
// them (POST …/accept), leaving it or declining the invitation (DELETE). Their OpenAPI operations:
// http/openapi/operations/knowledgeBaseMembership.ts.
import type Router from '@koa/router';
import type { z } from 'zod';
import { acceptKnowledgeBaseShare, getMembership, leaveKnowledgeBase } from '../../commands/knowledgeBases.ts';
import { presentMembership } from '../../presenters/knowledgeBases.ts';
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import type { leftResponse, membershipResponse } from './knowledgeBaseMembership.schema.ts';

export function knowledgeBaseMembershipRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();

  router.get(
    '/knowledge-bases/:id/membership',
    authenticated(async (ctx, caller) => {
      const membership = await getMembership(deps.store, caller.user, ctx.params.id);
      ctx.body = { membership: presentMembership(membership) } satisfies z.input<typeof membershipResponse>;
    }),
  );

  router.post(
    '/knowledge-bases/:id/membership/accept',
    authenticated(async (ctx, caller) => {
      const membership = await acceptKnowledgeBaseShare(deps.store, caller.user, ctx.params.id);
      ctx.body = { membership: presentMembership(membership) } satisfies z.input<typeof membershipResponse>;
    }),
  );

  router.delete(
    '/knowledge-bases/:id/membership',
    authenticated(async (ctx, caller) => {
      await leaveKnowledgeBase(deps.store, caller.user, ctx.params.id);
      ctx.body = { left: true } satisfies z.input<typeof leftResponse>;
    }),
  );

  return router;
}
