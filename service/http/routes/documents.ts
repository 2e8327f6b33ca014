// POST /api/v1/documents (ingest) and GET /api/v1/knowledge-bases/{id}/documents (list).
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import type Router from '@koa/router';
import { ingestDocument, listDocuments } from '../../commands/documents.ts';
import { presentDocumentListItem, presentIngestedDocument } from '../../presenters/documents.ts';
import { pageQuery, parseInput } from '../validation.ts';
import { ingestDocumentBody } from './documents.schema.ts';

export function documentRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();
  const bodySchema = ingestDocumentBody(deps.config.limits.maxContentBytes);

  router.post('/documents', authenticated(async (ctx, caller) => {
    const input = parseInput(bodySchema, ctx.request.body, 'body');
    const record = await ingestDocument(deps, caller.user, input);
    ctx.status = 201;
    ctx.body = { document: presentIngestedDocument(record) };
  }));

  router.get('/knowledge-bases/:id/documents', authenticated(async (ctx, caller) => {
    const page = parseInput(pageQuery, ctx.query, 'query');
    const { items, nextCursor } = await listDocuments(deps.store, caller.user, ctx.params.id, page);
    ctx.body = {
      documents: items.map(presentDocumentListItem),
      ...(page.limit !== undefined ? { next_cursor: nextCursor } : {}),
    };
  }));

  return router;
}
