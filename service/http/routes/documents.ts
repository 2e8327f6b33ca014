// The document lifecycle: POST /api/v1/documents (ingest), GET / PUT / DELETE /api/v1/documents/{id},
// POST /api/v1/documents/{id}/retry, and GET /api/v1/knowledge-bases/{id}/documents (list).
// Their OpenAPI operations: http/openapi/operations/documents.ts.
import { authenticated, newRouter, type AppContext, type AppDeps, type AppState } from '../context.ts';
import type Router from '@koa/router';
import {
  deleteDocument,
  getDocument,
  ingestDocument,
  listDocuments,
  replaceDocument,
  retryDocument,
  type IngestMode,
} from '../../commands/documents.ts';
import { documentsAhead } from '../../commands/ingestQueue.ts';
import type { DocumentOrigin, DocumentRecord } from '../../store/index.ts';
import { presentDocument, presentDocumentListItem, presentIngestedDocument } from '../../presenters/documents.ts';
import { parseInput } from '../validation.ts';
import type { z } from 'zod';
import {
  documentListQuery,
  ingestDocumentBody,
  prefersRespondAsync,
  replaceDocumentBody,
  type documentDeletedResponse,
  type documentListResponse,
  type documentResponse,
  type ingestedDocumentResponse,
} from './documents.schema.ts';

/** `Prefer: respond-async` (RFC 7240): answer 202 at once; otherwise wait until the document is searchable. */
function ingestMode(ctx: AppContext): IngestMode {
  return prefersRespondAsync(ctx.get('Prefer') || undefined) ? 'queue' : 'wait';
}

function realmOf(ctx: AppContext): 'api' | 'web' {
  return ctx.state.realm === 'web' ? 'web' : 'api';
}

/** The web app's queued documents' places in line (none on /api/v1). */
function placesInLine(
  deps: AppDeps,
  ctx: AppContext,
  records: DocumentRecord[],
): Promise<ReadonlyMap<string, number> | undefined> {
  return realmOf(ctx) === 'web' ? documentsAhead(deps, records) : Promise.resolve(undefined);
}

/**
 * Where a new text document comes from: the Developer API, or in the web app a file, or the paste form, which says
 * so with `X-KBQA-Origin: paste` (a header the app sends, read in the web realm only: the API's body stays the
 * contract's).
 */
function documentOrigin(ctx: AppContext): DocumentOrigin {
  if (ctx.state.realm !== 'web') return 'api';
  return ctx.get('X-KBQA-Origin') === 'paste' ? 'paste' : 'file';
}

/** 201 with the contract's fields once searchable; 202 with the status to follow when queued. */
async function answerIngest(deps: AppDeps, ctx: AppContext, mode: IngestMode, record: DocumentRecord): Promise<void> {
  if (mode === 'wait') {
    ctx.status = 201;
    ctx.body = { document: presentIngestedDocument(record) } satisfies z.input<typeof ingestedDocumentResponse>;
    return;
  }
  ctx.status = 202;
  ctx.set('Preference-Applied', 'respond-async');
  ctx.set('Location', `/api/v1/documents/${record._id}`);
  ctx.body = {
    document: presentDocument(record, realmOf(ctx), await placesInLine(deps, ctx, [record])),
  } satisfies z.input<typeof documentResponse>;
}

export function documentRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();
  const ingestSchema = ingestDocumentBody(deps.config.limits.maxContentBytes);
  const replaceSchema = replaceDocumentBody(deps.config.limits.maxContentBytes);

  router.post(
    '/documents',
    authenticated(async (ctx, caller) => {
      const input = parseInput(ingestSchema, ctx.request.body, 'body');
      const mode = ingestMode(ctx);
      await answerIngest(deps, ctx, mode, await ingestDocument(deps, caller.user, input, mode, documentOrigin(ctx)));
    }),
  );

  router.get(
    '/documents/:id',
    authenticated(async (ctx, caller) => {
      const record = await getDocument(deps.store, caller.user, ctx.params.id);
      ctx.body = {
        document: presentDocument(record, realmOf(ctx), await placesInLine(deps, ctx, [record])),
      } satisfies z.input<typeof documentResponse>;
    }),
  );

  router.put(
    '/documents/:id',
    authenticated(async (ctx, caller) => {
      const input = parseInput(replaceSchema, ctx.request.body, 'body');
      const mode = ingestMode(ctx);
      await answerIngest(deps, ctx, mode, await replaceDocument(deps, caller.user, ctx.params.id, input, mode));
    }),
  );

  router.post(
    '/documents/:id/retry',
    authenticated(async (ctx, caller) => {
      const mode = ingestMode(ctx);
      await answerIngest(deps, ctx, mode, await retryDocument(deps, caller.user, ctx.params.id, mode));
    }),
  );

  router.delete(
    '/documents/:id',
    authenticated(async (ctx, caller) => {
      await deleteDocument(deps, caller.user, ctx.params.id);
      ctx.body = { deleted: true } satisfies z.input<typeof documentDeletedResponse>;
    }),
  );

  router.get(
    '/knowledge-bases/:id/documents',
    authenticated(async (ctx, caller) => {
      const { include, ...page } = parseInput(documentListQuery, ctx.query, 'query');
      const which = include === 'status' ? 'all' : 'live';
      const { items, nextCursor } = await listDocuments(deps.store, caller.user, ctx.params.id, page, which);
      const ahead = include === 'status' ? await placesInLine(deps, ctx, items) : undefined;
      ctx.body = {
        documents: items.map((record) =>
          include === 'status' ? presentDocument(record, realmOf(ctx), ahead) : presentDocumentListItem(record),
        ),
        ...(page.limit !== undefined ? { next_cursor: nextCursor } : {}),
      } satisfies z.input<typeof documentListResponse>;
    }),
  );

  return router;
}
