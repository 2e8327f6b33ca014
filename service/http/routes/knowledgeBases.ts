// /api/v1/knowledge-bases: list, create, get, delete. Their OpenAPI operations: http/openapi/operations/knowledgeBases.ts.
import {
  createKnowledgeBase,
  deleteKnowledgeBase,
  getKnowledgeBase,
  listKnowledgeBases,
} from '../../commands/knowledgeBases.ts';
import {
  presentCreatedKnowledgeBase,
  presentKnowledgeBase,
  presentKnowledgeBaseListItem,
  withPendingMark,
} from '../../presenters/knowledgeBases.ts';
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import type Router from '@koa/router';
import { pageQuery, parseInput } from '../validation.ts';
import type { z } from 'zod';
import {
  createKnowledgeBaseBody,
  deleteKnowledgeBaseQuery,
  type knowledgeBaseCreatedResponse,
  type knowledgeBaseDeletedResponse,
  type knowledgeBaseListResponse,
  type knowledgeBaseResponse,
} from './knowledgeBases.schema.ts';

export function knowledgeBaseRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();

  router.get(
    '/knowledge-bases',
    authenticated(async (ctx, caller) => {
      const page = parseInput(pageQuery, ctx.query, 'query');
      const { items, nextCursor } = await listKnowledgeBases(deps.store, caller.user, page);
      const marks = ctx.state.realm === 'web';
      ctx.body = {
        knowledge_bases: items.map((item) =>
          withPendingMark(
            presentKnowledgeBaseListItem(item.record, item.role, item.documentCount),
            item.pending,
            marks,
          ),
        ),
        ...(page.limit !== undefined ? { next_cursor: nextCursor } : {}),
      } satisfies z.input<typeof knowledgeBaseListResponse>;
    }),
  );

  router.post(
    '/knowledge-bases',
    authenticated(async (ctx, caller) => {
      const input = parseInput(createKnowledgeBaseBody, ctx.request.body, 'body');
      const record = await createKnowledgeBase(deps.store, caller.user, input, deps.config.knowledgeBases.maxPerOwner);
      ctx.status = 201;
      ctx.body = { knowledge_base: presentCreatedKnowledgeBase(record) } satisfies z.input<
        typeof knowledgeBaseCreatedResponse
      >;
    }),
  );

  router.get(
    '/knowledge-bases/:id',
    authenticated(async (ctx, caller) => {
      const { record, role, pending } = await getKnowledgeBase(deps.store, caller.user, ctx.params.id);
      const presented = withPendingMark(presentKnowledgeBase(record, role), pending, ctx.state.realm === 'web');
      ctx.body = { knowledge_base: presented } satisfies z.input<typeof knowledgeBaseResponse>;
    }),
  );

  router.delete(
    '/knowledge-bases/:id',
    authenticated(async (ctx, caller) => {
      const { permanent } = parseInput(deleteKnowledgeBaseQuery, ctx.query, 'query');
      const mode = await deleteKnowledgeBase(deps.store, deps.search, caller.user, ctx.params.id, permanent === 'true');
      ctx.body = { deleted: true, mode } satisfies z.input<typeof knowledgeBaseDeletedResponse>;
    }),
  );

  return router;
}
