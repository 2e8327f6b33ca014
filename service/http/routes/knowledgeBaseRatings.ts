// /api/web/knowledge-bases/:id/ratings: the owner's view of how the answers that searched their KB were rated.
// Web only: a person reads it on the KB's page; `kbqa feedback export` is the way out for evaluation.
import type Router from '@koa/router';
import { knowledgeBaseRatings } from '../../commands/answerRatings.ts';
import { presentKnowledgeBaseRatings } from '../../presenters/answerRatings.ts';
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';

export function knowledgeBaseRatingRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();
  router.get(
    '/knowledge-bases/:id/ratings',
    authenticated(async (ctx, caller) => {
      ctx.body = presentKnowledgeBaseRatings(await knowledgeBaseRatings(deps.store, caller.user, ctx.params.id));
    }),
  );
  return router;
}
