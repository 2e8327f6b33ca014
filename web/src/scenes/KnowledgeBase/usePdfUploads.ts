// The PDFs being sent to a knowledge base: a small queue, two at a time, so a batch of big files neither opens
// a connection each (the browser allows six per host, and the documents list polls on one) nor waits in one line.
// Each upload is an XMLHttpRequest with its own AbortController; leaving the page aborts whatever is still going.
// (No beforeunload prompt: it would block scripted reloads too; an interrupted upload is simply chosen again.)
import { useCallback, useEffect, useRef, useState } from 'react';
import { api, isAbortError, messageOf } from '../../api/client.ts';
import type { KbDocument } from '../../api/generated.ts';

const PARALLEL_UPLOADS = 2;

export type PdfUploadState = 'waiting' | 'uploading' | 'failed';

export interface PdfUpload {
  key: number;
  /** The knowledge base it was chosen for (kept with it: the page may show another by the time it starts). */
  kbId: string;
  file: File;
  state: PdfUploadState;
  /** Bytes of the request sent, of its total; the file's size until the first progress event. */
  sent: number;
  total: number;
  error: string | null;
}

export interface PdfUploads {
  uploads: PdfUpload[];
  /** The last upload cancelled, for the status line (the scene's summary follows the uploaded ones). */
  announcement: string;
  add: (files: File[]) => void;
  /** Aborts a running upload, or drops a waiting one. */
  cancel: (key: number) => void;
  retry: (key: number) => void;
  dismiss: (key: number) => void;
  clearAnnouncement: () => void;
}

/** `onUploaded`: a document was created (or may have been: an upload cancelled after its last byte, with none). */
export function usePdfUploads(kbId: string, onUploaded: (added: KbDocument[]) => void): PdfUploads {
  const [uploads, setUploads] = useState<PdfUpload[]>([]);
  const [announcement, setAnnouncement] = useState('');
  const controllers = useRef(new Map<number, AbortController>());
  const nextKey = useRef(1);
  const onUploadedRef = useRef(onUploaded);
  useEffect(() => {
    onUploadedRef.current = onUploaded;
  }, [onUploaded]);

  const update = useCallback((key: number, change: Partial<PdfUpload>) => {
    setUploads((current) => current.map((upload) => (upload.key === key ? { ...upload, ...change } : upload)));
  }, []);
  const drop = useCallback((key: number) => {
    setUploads((current) => current.filter((upload) => upload.key !== key));
  }, []);

  // Starts waiting uploads while fewer than PARALLEL_UPLOADS run. The controller map, not the state, says whether
  // an upload was started, so running this twice for the same state (React's strict mode) starts nothing twice.
  useEffect(() => {
    const running = uploads.filter((upload) => upload.state === 'uploading').length;
    const toStart = uploads
      .filter((upload) => upload.state === 'waiting' && !controllers.current.has(upload.key))
      .slice(0, Math.max(0, PARALLEL_UPLOADS - running));
    for (const { key, kbId: knowledgeBaseId, file } of toStart) {
      const controller = new AbortController();
      controllers.current.set(key, controller);
      update(key, { state: 'uploading', sent: 0, total: file.size, error: null });
      api
        .uploadPdf(knowledgeBaseId, file, {
          signal: controller.signal,
          onProgress: (sent, total) => update(key, { sent, total }),
        })
        .then(
          (document) => {
            drop(key);
            onUploadedRef.current([document]);
          },
          (error: unknown) => {
            // Cancelled: `cancel` has already removed the row and said so.
            if (!isAbortError(error)) update(key, { state: 'failed', error: messageOf(error) });
          },
        )
        .finally(() => controllers.current.delete(key));
    }
  }, [uploads, update, drop]);

  // Leaving the page (another route) stops what is still being sent.
  useEffect(() => {
    const running = controllers.current;
    return () => {
      for (const controller of running.values()) controller.abort();
    };
  }, []);

  const add = useCallback(
    (files: File[]) => {
      const added = files.map((file): PdfUpload => {
        const key = nextKey.current;
        nextKey.current += 1;
        return { key, kbId, file, state: 'waiting', sent: 0, total: file.size, error: null };
      });
      setAnnouncement('');
      setUploads((current) => [...current, ...added]);
    },
    [kbId],
  );

  const cancel = useCallback(
    (key: number) => {
      const upload = uploads.find((candidate) => candidate.key === key);
      const controller = controllers.current.get(key);
      drop(key);
      if (upload) setAnnouncement(`Cancelled the upload of ${upload.file.name}.`);
      if (controller) {
        controller.abort();
        // The last bytes may already have reached the server, which then made the document: show the list as it is.
        onUploadedRef.current([]);
      }
    },
    [uploads, drop],
  );

  const retry = useCallback((key: number) => update(key, { state: 'waiting', sent: 0, error: null }), [update]);
  const clearAnnouncement = useCallback(() => setAnnouncement(''), []);

  return { uploads, announcement, add, cancel, retry, dismiss: drop, clearAnnouncement };
}
