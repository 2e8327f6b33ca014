// /api/web: what owners and admins do to KBs beyond the Developer API: recently deleted and restore, sharing, library.
import type Router from '@koa/router';
import type { z } from 'zod';
import {
  curateLibraryKnowledgeBase,
  getKnowledgeBaseSharing,
  listRecentlyDeletedKnowledgeBases,
  restoreOwnKnowledgeBase,
  setKnowledgeBaseOrganisationSharing,
  shareKnowledgeBaseWithUser,
  unshareKnowledgeBaseWithUser,
} from '../../commands/knowledgeBases.ts';
import { roleOf } from '../../policies/knowledgeBases.ts';
import { presentDeletedKnowledgeBase, presentKnowledgeBase, presentSharing } from '../../presenters/knowledgeBases.ts';
import { presentUserReference } from '../../presenters/users.ts';
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import { parseInput } from '../validation.ts';
import type { knowledgeBaseResponse } from './knowledgeBases.schema.ts';
import type {
  deletedKnowledgeBaseListResponse,
  organisationSharedResponse,
  sharedUserResponse,
  unsharedResponse,
} from './webApp.schema.ts';
import { libraryFlagBody, sharedFlagBody, shareWithUserBody } from './webSession.schema.ts';

export function knowledgeBaseSharingRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();
  const retentionMs = deps.config.deletedRetentionMs;

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
      const user = await shareKnowledgeBaseWithUser(deps.store, caller.user, ctx.params.id, email);
      ctx.status = 201;
      ctx.body = { user: presentUserReference(user) } satisfies z.input<typeof sharedUserResponse>;
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
