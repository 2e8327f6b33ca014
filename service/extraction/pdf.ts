// Text from uploaded PDFs. The parsing (pdfjs) and the reading-order work run in a small pool of worker threads
// (pdfWorker.ts); this module, on the event loop, only checks the size, posts the bytes and awaits pages. A
// document that takes longer than the time limit has its thread terminated, and the pool starts a fresh one.
//
// The clock starts when a worker takes the document, not when it is queued: a PDF waiting behind another
// upload has not used any of its time.
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { ExtractionFailure, ExtractionResult, ExtractionTask, ProgressMessage } from './pdfWorker.ts';

export interface PdfLimits {
  maxBytes: number;
  maxPages: number;
  timeoutMs: number;
}

export interface ExtractedPdf {
  pageCount: number;
  /** Text per page, index 0 = page 1; '' for a page without text. */
  pages: string[];
  /** The PDF's own Title (its metadata), or null: the document's title then comes from its filename. */
  title: string | null;
}

export type PdfFailureReason = ExtractionFailure | 'too_large' | 'timeout';

const numbers = new Intl.NumberFormat('en-US');

/** Sizes in binary units, written "MB" as most file managers do: a 50 MiB limit reads "50 MB". */
function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${numbers.format(bytes)} bytes`;
  const [value, unit] = bytes < 1024 ** 2 ? [bytes / 1024, 'KB'] : [bytes / 1024 ** 2, 'MB'];
  return `${numbers.format(Math.round(value * 10) / 10)} ${unit}`;
}

/** Why a PDF gave no text. The message is shown to people in the document's status, so it says what to do. */
export class PdfExtractionError extends Error {
  readonly reason: PdfFailureReason;

  constructor(reason: PdfFailureReason, message: string) {
    super(message);
    this.reason = reason;
    this.name = new.target.name;
  }

  static encrypted(): PdfExtractionError {
    return new PdfExtractionError('encrypted', 'the PDF is password-protected (encrypted); remove the password and upload it again');
  }

  static corrupt(): PdfExtractionError {
    return new PdfExtractionError('corrupt', 'the file is not a readable PDF (damaged or not a PDF)');
  }

  static noText(): PdfExtractionError {
    return new PdfExtractionError('no_text', 'scanned PDF: no text to index');
  }

  static tooLarge(bytes: number, maxBytes: number): PdfExtractionError {
    return new PdfExtractionError('too_large', `the PDF is ${formatBytes(bytes)}; the limit is ${formatBytes(maxBytes)}`);
  }

  static tooManyPages(pages: number, maxPages: number): PdfExtractionError {
    return new PdfExtractionError('too_many_pages', `the PDF has ${numbers.format(pages)} pages; the limit is ${numbers.format(maxPages)}`);
  }

  static timeout(timeoutMs: number): PdfExtractionError {
    return new PdfExtractionError('timeout', `the PDF took longer than ${numbers.format(timeoutMs / 1000)} s to read`);
  }
}

export interface PdfExtractor {
  /** Each page's text in reading order; onPage(done, total) as pages finish. Rejects with PdfExtractionError. */
  extract(bytes: Uint8Array, onPage?: (done: number, total: number) => void): Promise<ExtractedPdf>;
  /** Ends the workers; extractions still running reject. */
  close(): Promise<void>;
  /** Read-only, for metrics: null while no worker pool has been started (a lazy extractor before its first PDF). */
  stats?(): PdfPoolStats | null;
}

export interface PdfPoolStats {
  /** Threads the pool may run (PDFs read at once). */
  workers: number;
  /** PDFs a worker is reading now. */
  busy: number;
  /** PDFs waiting for a worker. */
  queued: number;
}

function failure(result: Extract<ExtractionResult, { ok: false }>, limits: PdfLimits): PdfExtractionError {
  switch (result.reason) {
    case 'encrypted':
      return PdfExtractionError.encrypted();
    case 'corrupt':
      return PdfExtractionError.corrupt();
    case 'no_text':
      return PdfExtractionError.noText();
    case 'too_many_pages':
      return PdfExtractionError.tooManyPages(result.pageCount ?? 0, limits.maxPages);
  }
}

/**
 * @param options.workers threads, i.e. PDFs read at once (default 1: pdfjs can hold several hundred MB for a large
 *   document, and uploads are rare next to questions). An idle worker ends after a minute and frees its memory.
 */
export function createPdfExtractor(limits: PdfLimits, options: { workers?: number } = {}): PdfExtractor {
  const workers = Math.max(1, options.workers ?? 1);
  const pool = new Piscina<ExtractionTask, ExtractionResult>({
    filename: new URL('./pdfWorker.ts', import.meta.url).href,
    minThreads: 0,
    maxThreads: workers,
    idleTimeout: 60_000,
    concurrentTasksPerWorker: 1,
  });
  let closed = false;
  let reading = 0;

  return {
    async extract(bytes, onPage) {
      if (closed) throw new Error('the PDF extractor is closed');
      if (bytes.byteLength > limits.maxBytes) throw PdfExtractionError.tooLarge(bytes.byteLength, limits.maxBytes);

      // A copy of exactly the view's bytes, moved to the worker: a Buffer may be a view into a larger one, and
      // the caller keeps its own.
      const copy = new Uint8Array(bytes);
      const { port1, port2 } = new MessageChannel();
      const timeLimit = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      let started = false;
      let callbackError: unknown;
      const ended = new Promise<void>((resolve) => {
        port1.on('message', (message: ProgressMessage) => {
          if (message.type === 'started') {
            started = true;
            reading += 1;
            timer = setTimeout(() => timeLimit.abort(), limits.timeoutMs);
          } else if (message.type === 'page') {
            try {
              onPage?.(message.done, message.total);
            } catch (error) {
              // Thrown in a message handler it would be uncaught; it is the extraction's error instead.
              callbackError ??= error;
            }
          } else {
            resolve();
          }
        });
      });
      try {
        // Waiting for 'end' as well means every onPage call has been made before the result is returned.
        const [result] = await Promise.all([
          pool.run({ bytes: copy, maxPages: limits.maxPages, progress: port2 }, { transferList: [port2, copy.buffer], signal: timeLimit.signal }),
          ended,
        ]);
        if (callbackError !== undefined) throw callbackError;
        if (!result.ok) throw failure(result, limits);
        return { pageCount: result.pageCount, pages: result.pages, title: result.title };
      } catch (error) {
        if (timeLimit.signal.aborted) throw PdfExtractionError.timeout(limits.timeoutMs);
        if (closed && !(error instanceof PdfExtractionError)) throw new Error('the PDF extractor is closed', { cause: error });
        throw error;
      } finally {
        clearTimeout(timer);
        port1.close();
        if (started) reading -= 1;
      }
    },
    async close() {
      closed = true;
      await pool.destroy();
    },
    stats: () => ({ workers, busy: reading, queued: pool.queueSize }),
  };
}
