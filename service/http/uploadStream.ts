// Reads ONE uploaded file from a multipart/form-data request and streams it into storage as it arrives (busboy):
// never the whole file in memory, and never more than the limit — an upload over it is aborted, its stored part
// removed, and the request answered 413.
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
}

export function receiveUpload(
  request: IncomingMessage,
  options: {
    field: string;
    maxBytes: number;
    /** Null when the name is acceptable; else the rule it breaks (answered 400 before anything is stored). */
    filenameProblem: (filename: string) => string | null;
    open: (filename: string) => UploadTarget;
  },
): Promise<ReceivedUpload> {
  const contentType = request.headers['content-type'] ?? '';
  if (!contentType.toLowerCase().startsWith('multipart/form-data')) {
    return Promise.reject(new BadRequestError(`body: send multipart/form-data with the file in the field "${options.field}"`));
  }
  const declared = Number(request.headers['content-length'] ?? 0);
  // The multipart envelope adds a few hundred bytes around the file.
  if (declared > options.maxBytes + 64 * 1024) return Promise.reject(new PayloadTooLargeError(options.maxBytes));

  return new Promise<ReceivedUpload>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: request.headers, limits: { files: 1, fileSize: options.maxBytes, fields: 10, parts: 11 } });
    } catch {
      reject(new BadRequestError('body: malformed multipart/form-data (no boundary)'));
      return;
    }
    let failure: Error | null = null;
    let stored: Promise<ReceivedUpload> | null = null;

    parser.on('file', (name, file, info) => {
      if (name !== options.field || stored !== null) {
        file.resume();
        return;
      }
      const problem = options.filenameProblem(info.filename ?? '');
      if (problem) {
        failure = new BadRequestError(`file: ${problem}`);
        file.resume();
        return;
      }
      const filename = info.filename ?? '';
      const target = options.open(filename);
      let bytes = 0;
      file.on('data', (part: Buffer) => (bytes += part.length));
      stored = new Promise<ReceivedUpload>((resolveFile, rejectFile) => {
        let settled = false;
        const settle = (outcome: () => void) => {
          if (settled) return;
          settled = true;
          outcome();
        };
        // Over the limit: stop writing at once and drop what was stored, then drain the rest of the request.
        file.on('limit', () => {
          file.unpipe(target.stream);
          file.resume();
          void target.stream.abort().catch(() => undefined);
          settle(() => rejectFile(new PayloadTooLargeError(options.maxBytes)));
        });
        target.stream.on('error', (error) => settle(() => rejectFile(error)));
        target.stream.on('finish', () => settle(() => resolveFile({ fileId: target.id, filename, bytes })));
        file.pipe(target.stream);
      }).catch(async (error: unknown) => {
        // Whatever was stored of it goes.
        await target.stream.abort().catch(() => undefined);
        throw error;
      });
    });
    parser.on('error', () => {
      failure ??= new BadRequestError('body: malformed multipart/form-data');
    });
    parser.on('close', () => {
      if (stored === null) {
        reject(failure ?? new BadRequestError(`body: no file in the field "${options.field}"`));
        return;
      }
      stored.then(
        (upload) => (failure ? reject(failure) : resolve(upload)),
        (error: unknown) => reject(error),
      );
    });
    request.on('aborted', () => {
      failure ??= new BadRequestError('body: the upload was interrupted');
      parser.destroy();
    });
    request.pipe(parser);
  });
}
