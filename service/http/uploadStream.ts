// Reads ONE uploaded file from a multipart/form-data request and streams it into storage as it arrives (busboy):
// never the whole file in memory, and never more than the limit. Whatever goes wrong — over the limit, the client
// gone mid-file, a malformed body, the store failing — the part stored so far is discarded and the request answered
// in the envelope; no error is left without a listener (an unhandled one would end the process).
import type { IncomingMessage } from 'node:http';
import type { Writable } from 'node:stream';
import busboy from 'busboy';
import { BadRequestError, PayloadTooLargeError } from '../errors.ts';

export interface UploadTarget {
  id: string;
  stream: Writable & { abort(): Promise<void> };
}

export interface ReceivedUpload {
  fileId: string;
  filename: string;
  bytes: number;
  /** The file's first bytes (up to HEAD_BYTES): what its kind is told by (extraction/fileSniffer.ts). */
  head: Buffer;
}

/** The bytes of a file's start kept while it streams: magic numbers, and a text file's first NUL byte if any. */
export const HEAD_BYTES = 64 * 1024;

export interface UploadOptions {
  field: string;
  maxBytes: number;
  /** Null when the name is acceptable; else the rule it breaks (answered 400 before anything is stored). */
  filenameProblem: (filename: string) => string | null;
  open: (filename: string) => UploadTarget;
  /** Removes every trace of a file that will not be kept (its record and all its stored parts). */
  discard: (fileId: string) => Promise<void>;
  /** How a failure of the store reads to the client (a 503 when it is unreachable). */
  storeFailure: (error: unknown) => Error;
}

const interrupted = () => new BadRequestError('body: the upload was interrupted before the end of the file');

export function receiveUpload(request: IncomingMessage, options: UploadOptions): Promise<ReceivedUpload> {
  const contentType = request.headers['content-type'] ?? '';
  if (!contentType.toLowerCase().startsWith('multipart/form-data')) {
    return Promise.reject(
      new BadRequestError(`body: send multipart/form-data with the file in the field "${options.field}"`),
    );
  }
  const declared = Number(request.headers['content-length'] ?? 0);
  // The multipart envelope adds a few hundred bytes around the file.
  if (declared > options.maxBytes + 64 * 1024) return Promise.reject(new PayloadTooLargeError(options.maxBytes));

  return new Promise<ReceivedUpload>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // Text fields are ignored, so each is held to 1 KiB (busboy buffers them): a body is one file, streamed.
      // defParamCharset: browsers send a filename="…" parameter as raw UTF-8; busboy's default (latin1) turned
      // résumé.pdf into rÃ©sumÃ©.pdf and refused 報告書.pdf over the C1 controls the misreading produced.
      parser = busboy({
        headers: request.headers,
        defParamCharset: 'utf8',
        limits: { files: 1, fileSize: options.maxBytes, fields: 10, fieldSize: 1024, parts: 11 },
      });
    } catch {
      reject(new BadRequestError('body: malformed multipart/form-data (no boundary)'));
      return;
    }
    let failure: Error | null = null;
    let target: UploadTarget | null = null;
    let stored: Promise<{ filename: string; bytes: number; head: Buffer }> | null = null;
    let finished = false;

    parser.on('file', (name, file, info) => {
      if (name !== options.field || target !== null || failure !== null) {
        file.resume();
        return;
      }
      const filename = info.filename ?? '';
      const problem = options.filenameProblem(filename);
      if (problem) {
        failure = new BadRequestError(`file: ${problem}`);
        file.resume();
        return;
      }
      const opened = options.open(filename);
      target = opened;
      let bytes = 0;
      const head: Buffer[] = [];
      stored = new Promise((resolveFile, rejectFile) => {
        let settled = false;
        const fail = (error: Error) => {
          if (settled) return;
          settled = true;
          file.unpipe(opened.stream);
          file.resume();
          rejectFile(error);
        };
        file.on('data', (part: Buffer) => {
          if (bytes < HEAD_BYTES) head.push(part.subarray(0, HEAD_BYTES - bytes));
          bytes += part.length;
        });
        file.on('limit', () => fail(new PayloadTooLargeError(options.maxBytes)));
        // busboy destroys the file stream when the body ends early or the parser is destroyed.
        file.on('error', () => fail(interrupted()));
        opened.stream.on('error', (error) => fail(options.storeFailure(error)));
        opened.stream.on('finish', () => {
          if (settled) return;
          settled = true;
          resolveFile({ filename, bytes, head: Buffer.concat(head) });
        });
        file.pipe(opened.stream);
      });
      // Observed at once: a failure before the parser closes must not count as an unhandled rejection.
      stored.catch(() => undefined);
    });

    const finish = async () => {
      if (finished) return;
      finished = true;
      if (target === null || stored === null) {
        reject(failure ?? new BadRequestError(`body: no file in the field "${options.field}"`));
        return;
      }
      const kept = target;
      try {
        const received = await stored;
        if (failure) throw failure;
        resolve({ fileId: kept.id, ...received });
      } catch (error) {
        // Nothing of a refused or broken upload stays: the open stream is aborted, then every stored part removed.
        await kept.stream.abort().catch(() => undefined);
        await options.discard(kept.id).catch(() => undefined);
        reject(error);
      }
    };

    parser.on('error', () => {
      failure ??= new BadRequestError('body: malformed multipart/form-data');
      void finish();
    });
    parser.on('close', () => void finish());
    request.on('error', () => {
      failure ??= interrupted();
      parser.destroy();
      void finish();
    });
    request.on('close', () => {
      if (request.complete) return;
      failure ??= interrupted();
      parser.destroy();
      void finish();
    });
    request.pipe(parser);
  });
}
