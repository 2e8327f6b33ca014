// POST /api/v1/search: ranked chunks from the KBs the key can reach (hybrid, BM25 or dense), optionally filtered
// by document metadata. Retrieval only: no answer, no relevance floor. Bounded per user with /query
// (commands/queryAdmission.ts). Its OpenAPI operation: http/openapi/operations/search.ts.
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import type Router from '@koa/router';
import type { QueryAdmission } from '../../commands/queryAdmission.ts';
import { searchChunks } from '../../commands/searchChunks.ts';
import { presentSearchResult } from '../../presenters/query.ts';
import { parseInput } from '../validation.ts';
import { searchBody } from './search.schema.ts';

export function searchRoutes(deps: AppDeps, queries: QueryAdmission): Router<AppState> {
  const router = newRouter();
  const searchDeps = {
    store: deps.store,
    search: deps.search,
    rag: deps.rag,
    maxSearchedKnowledgeBases: deps.config.knowledgeBases.maxSearchedPerQuery,
  };

  router.post(
    '/search',
    authenticated(async (ctx, caller) => {
      const input = parseInput(searchBody, ctx.request.body, 'body');
      const release = await queries.admit(caller.user._id, input.query);
      try {
        ctx.body = presentSearchResult(await searchChunks(searchDeps, caller.user, input));
      } finally {
        release();
      }
    }),
  );

  return router;
}
