// /api/web: GET /documents/{id}/content, the document page's text and passages. Web-only: the Developer API's
// document fields are the contract's.
import type Router from '@koa/router';
import { readDocumentContent } from '../../commands/documentContent.ts';
import { presentDocumentContent } from '../../presenters/documentContent.ts';
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';

export function documentContentRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();
  router.get(
    '/documents/:id/content',
    authenticated(async (ctx, caller) => {
      ctx.body = presentDocumentContent(await readDocumentContent(deps, caller.user, ctx.params.id));
    }),
  );
  return router;
}
