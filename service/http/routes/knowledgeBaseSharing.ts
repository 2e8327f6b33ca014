// /api/web: what owners and admins do to KBs beyond the Developer API: recently deleted and restore, sharing (by
// invitation: commands/shareInvitations.ts), library.
import type Router from '@koa/router';
import type { z } from 'zod';
import {
  curateLibraryKnowledgeBase,
  listRecentlyDeletedKnowledgeBases,
  restoreOwnKnowledgeBase,
  setKnowledgeBaseOrganisationSharing,
} from '../../commands/knowledgeBases.ts';
import {
  getKnowledgeBaseSharing,
  inviteToKnowledgeBase,
  unshareKnowledgeBaseWithUser,
  withdrawShareInvitation,
  type SharingSettings,
} from '../../commands/shareInvitations.ts';
import { roleOf } from '../../policies/knowledgeBases.ts';
import { presentDeletedKnowledgeBase, presentKnowledgeBase } from '../../presenters/knowledgeBases.ts';
import { presentSharing } from '../../presenters/shareInvitations.ts';
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import { parseInput } from '../validation.ts';
import type { knowledgeBaseResponse } from './knowledgeBases.schema.ts';
import type {
  deletedKnowledgeBaseListResponse,
  invitationSentResponse,
  invitationWithdrawnResponse,
  organisationSharedResponse,
  unsharedResponse,
} from './webApp.schema.ts';
import { libraryFlagBody, sharedFlagBody, shareWithUserBody } from './webSession.schema.ts';

export function knowledgeBaseSharingRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();
  const retentionMs = deps.config.deletedRetentionMs;
  const sharingSettings: SharingSettings = {
    ...deps.config.knowledgeBases.sharing,
    windowMs: deps.config.web.signIn.windowMs,
  };

  router.get(
    '/deleted-knowledge-bases',
    authenticated(async (ctx, caller) => {
      const records = await listRecentlyDeletedKnowledgeBases(deps.store, caller.user, retentionMs);
      ctx.body = {
        knowledge_bases: records.map((record) => presentDeletedKnowledgeBase(record, retentionMs)),
      } satisfies z.input<typeof deletedKnowledgeBaseListResponse>;
    }),
  );

  router.post(
    '/deleted-knowledge-bases/:id/restore',
    authenticated(async (ctx, caller) => {
      const record = await restoreOwnKnowledgeBase(deps.store, caller.user, ctx.params.id, retentionMs);
      ctx.body = { knowledge_base: presentKnowledgeBase(record, 'owner') } satisfies z.input<
        typeof knowledgeBaseResponse
      >;
    }),
  );

  router.get(
    '/knowledge-bases/:id/sharing',
    authenticated(async (ctx, caller) => {
      ctx.body = presentSharing(await getKnowledgeBaseSharing(deps.store, caller.user, ctx.params.id));
    }),
  );

  router.post(
    '/knowledge-bases/:id/sharing/users',
    authenticated(async (ctx, caller) => {
      const { email } = parseInput(shareWithUserBody, ctx.request.body, 'body');
      const invitation = await inviteToKnowledgeBase(deps.store, sharingSettings, caller.user, ctx.params.id, email);
      // 202 whatever the address: whether an account has it, and what it does with the invitation, is not said.
      ctx.status = 202;
      ctx.body = { invitation } satisfies z.input<typeof invitationSentResponse>;
    }),
  );

  router.delete(
    '/knowledge-bases/:id/sharing/invitations/:invitationId',
    authenticated(async (ctx, caller) => {
      await withdrawShareInvitation(deps.store, caller.user, ctx.params.id, ctx.params.invitationId);
      ctx.body = { withdrawn: true } satisfies z.input<typeof invitationWithdrawnResponse>;
    }),
  );

  router.delete(
    '/knowledge-bases/:id/sharing/users/:userId',
    authenticated(async (ctx, caller) => {
      await unshareKnowledgeBaseWithUser(deps.store, caller.user, ctx.params.id, ctx.params.userId);
      ctx.body = { unshared: true } satisfies z.input<typeof unsharedResponse>;
    }),
  );

  router.put(
    '/knowledge-bases/:id/sharing/organisation',
    authenticated(async (ctx, caller) => {
      const { shared } = parseInput(sharedFlagBody, ctx.request.body, 'body');
      await setKnowledgeBaseOrganisationSharing(deps.store, caller.user, ctx.params.id, shared);
      ctx.body = { shared } satisfies z.input<typeof organisationSharedResponse>;
    }),
  );

  router.put(
    '/knowledge-bases/:id/library',
    authenticated(async (ctx, caller) => {
      const { library } = parseInput(libraryFlagBody, ctx.request.body, 'body');
      const record = await curateLibraryKnowledgeBase(deps.store, caller, ctx.params.id, library);
      ctx.body = {
        knowledge_base: presentKnowledgeBase(record, roleOf(caller.user, record) ?? 'library'),
      } satisfies z.input<typeof knowledgeBaseResponse>;
    }),
  );

  return router;
}
