// /api/web: PDF uploads (multipart, streamed into GridFS), the stored originals, and the upload limits. The
// Developer API takes text and markdown only (the contract); PDFs come in through the web app.
import type Router from '@koa/router';
import type { z } from 'zod';
import { getDocument } from '../../commands/documents.ts';
import {
  admitPdfUpload,
  documentFile,
  ingestPdfUpload,
  newDocumentId,
  PDF_CONTENT_TYPE,
} from '../../commands/pdfDocuments.ts';
import { presentDocument } from '../../presenters/documents.ts';
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import { storeFailure } from '../../store/index.ts';
import { receiveUpload } from '../uploadStream.ts';
import { filenameNameProblem } from './documents.schema.ts';
import type { limits as limitsSchema } from './webApp.schema.ts';

function pdfFilenameProblem(filename: string): string | null {
  const nameProblem = filenameNameProblem(filename);
  if (nameProblem) return `the filename ${nameProblem}`;
  if (!filename.toLowerCase().endsWith('.pdf'))
    return 'this endpoint takes PDFs (.pdf); send text and markdown as JSON to POST /api/web/documents';
  return null;
}

/** `filename*` (RFC 6266 / 5987): any name, safely quoted. */
function contentDisposition(filename: string): string {
  return `inline; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

export function uploadRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();
  const limits = deps.config.pdf;

  router.get(
    '/limits',
    authenticated((ctx) => {
      ctx.body = {
        max_upload_bytes: limits.maxBytes,
        max_content_bytes: deps.config.limits.maxContentBytes,
      } satisfies z.input<typeof limitsSchema>;
    }),
  );

  router.post(
    '/knowledge-bases/:id/uploads',
    authenticated(async (ctx, caller) => {
      // Owner only, with room in their ingestion queue, checked before a byte of the file is read.
      const knowledgeBase = await admitPdfUpload(deps, caller.user, ctx.params.id);
      const documentId = newDocumentId();
      const upload = await receiveUpload(ctx.req, {
        field: 'file',
        maxBytes: limits.maxBytes,
        filenameProblem: pdfFilenameProblem,
        open: (filename) =>
          deps.store.openFileUpload(filename, {
            document_id: documentId,
            knowledge_base_id: knowledgeBase._id,
            content_type: PDF_CONTENT_TYPE,
          }),
        discard: (fileId) => deps.store.discardFile(fileId),
        storeFailure: storeFailure,
      });
      try {
        const record = await ingestPdfUpload(deps, caller.user, {
          knowledgeBaseId: knowledgeBase._id,
          documentId,
          filename: upload.filename,
          fileId: upload.fileId,
          bytes: upload.bytes,
        });
        ctx.status = 202;
        ctx.set('Location', `/api/web/documents/${record._id}`);
        ctx.body = { document: presentDocument(record, 'web') };
      } catch (error) {
        // The KB went away (or its owner changed) while the file streamed in: nothing of the upload stays.
        await deps.store.discardFile(upload.fileId).catch(() => undefined);
        throw error;
      }
    }),
  );

  router.get(
    '/documents/:id/file',
    authenticated(async (ctx, caller) => {
      const document = await getDocument(deps.store, caller.user, ctx.params.id);
      const { file, stream } = await documentFile(deps.store, document);
      ctx.type = file.metadata.content_type;
      ctx.length = file.length;
      ctx.set('Content-Disposition', contentDisposition(document.filename));
      // The session's own file: private cache only.
      ctx.set('Cache-Control', 'private, no-cache');
      ctx.body = stream;
    }),
  );

  return router;
}
