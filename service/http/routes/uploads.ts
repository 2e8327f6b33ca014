// /api/web: file uploads (multipart, streamed into GridFS: PDF, DOCX, ODT, PPTX, XLSX, CSV, HTML, images), the stored
// originals, and the upload limits. The Developer API takes text and markdown only (the contract); files come in
// through the web app. A file's kind is told by its bytes and must be the one its name says (fileSniffer.ts).
import type Router from '@koa/router';
import type { z } from 'zod';
import { getDocument } from '../../commands/documents.ts';
import { admitFileUpload, documentFile, ingestFileUpload, newDocumentId } from '../../commands/pdfDocuments.ts';
import { BadRequestError } from '../../errors.ts';
import { contentTypeOf, kindOfFilename, uploadExtensionProblem } from '../../extraction/fileKinds.ts';
import { detectFileKind } from '../../extraction/fileSniffer.ts';
import { presentDocument } from '../../presenters/documents.ts';
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import { storeFailure } from '../../store/index.ts';
import { receiveUpload } from '../uploadStream.ts';
import { filenameNameProblem } from './documents.schema.ts';
import type { limits as limitsSchema } from './webApp.schema.ts';

function uploadFilenameProblem(filename: string): string | null {
  const nameProblem = filenameNameProblem(filename);
  if (nameProblem) return `the filename ${nameProblem}`;
  return uploadExtensionProblem(filename);
}

/**
 * `filename*` (RFC 6266 / 5987): any name, safely quoted. A PDF opens inline, in the browser's viewer, which runs no
 * script of the file's and reads `#page=` (a citation opens its page); every other kind is an attachment: an
 * uploaded web page opened inline would run on the app's origin, with the session's cookie.
 */
function contentDisposition(filename: string, inline: boolean): string {
  return `${inline ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(filename)}`;
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
      const knowledgeBase = await admitFileUpload(deps, caller.user, ctx.params.id);
      const documentId = newDocumentId();
      const upload = await receiveUpload(ctx.req, {
        field: 'file',
        maxBytes: limits.maxBytes,
        filenameProblem: uploadFilenameProblem,
        open: (filename) =>
          deps.store.openFileUpload(filename, {
            document_id: documentId,
            knowledge_base_id: knowledgeBase._id,
            content_type: contentTypeOf(kindOfFilename(filename)!, filename),
          }),
        discard: (fileId) => deps.store.discardFile(fileId),
        storeFailure: storeFailure,
      });
      try {
        const detected = await detectFileKind(
          upload.filename,
          upload.head,
          async () => {
            const bytes = await deps.store.readFile(upload.fileId);
            return bytes && Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
          },
          deps.config.documents,
        );
        if ('problem' in detected) throw new BadRequestError(`file: ${detected.problem}`);
        const record = await ingestFileUpload(deps, caller.user, {
          knowledgeBaseId: knowledgeBase._id,
          documentId,
          filename: upload.filename,
          fileId: upload.fileId,
          kind: detected.kind,
          bytes: upload.bytes,
        });
        ctx.status = 202;
        ctx.set('Location', `/api/web/documents/${record._id}`);
        ctx.body = { document: presentDocument(record, 'web') };
      } catch (error) {
        // Not the kind its name says, or the KB went away (or its owner changed) while the file streamed in: nothing
        // of the upload stays.
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
      const pdf = (document.kind ?? 'pdf') === 'pdf';
      ctx.set('Content-Disposition', contentDisposition(document.filename, pdf));
      // Served as the type it was stored with, never as what a browser would guess from its bytes.
      ctx.set('X-Content-Type-Options', 'nosniff');
      // Even opened directly, nothing of it runs (no script, no frame of the app around it). Not on a PDF: a
      // sandboxed document loads no plugin, and the browser's PDF viewer is one.
      if (!pdf) ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
      // The session's own file: private cache only.
      ctx.set('Cache-Control', 'private, no-cache');
      ctx.body = stream;
    }),
  );

  return router;
}
