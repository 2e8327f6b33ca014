// The JSON body parser of both realms. It runs only where a route may read a body: on /api/v1 after the API key is
// checked, on /api/web after the session is (and, for the few anonymous routes, with a small limit of their own), so
// an anonymous caller never makes the server read, inflate or parse a body it will refuse anyway.
//
// Three bounds, each before the work it bounds:
//  - bytes: Content-Length over the limit is refused unread; a body that grows past it stops being read;
//  - Content-Encoding: refused (415) where `encodings` is 'refused'; elsewhere gzip, deflate and br are inflated as
//    a stream and stopped at the same limit of INFLATED bytes, so a 10 KB bomb costs at most the limit;
//  - nesting: one linear scan of the text (jsonText.ts) before JSON.parse, which has no depth limit of its own.
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Middleware } from 'koa';
import { BadRequestError, PayloadTooLargeError, UnsupportedContentEncodingError } from '../../errors.ts';
import { hasProtoKey, jsonNestingDepth } from '../jsonText.ts';

declare module 'koa' {
  interface Request {
    /** The parsed JSON body, for parseInput to validate; undefined where none was read. */
    body?: unknown;
  }
}

export interface JsonBodyLimits {
  /** Bytes of JSON text, after any Content-Encoding is undone. */
  maxBytes: number;
  /** Objects and arrays inside one another, the body itself counting as one. */
  maxDepth: number;
  /** 'inflate': gzip, deflate and br are read up to maxBytes of output; 'refuse': any Content-Encoding is 415. */
  encodings: 'inflate' | 'refuse';
}

/** The media types taken for JSON (the ones koa-body, the parser before this one, took): clients send these. */
const JSON_TYPES = [
  'application/json',
  'application/json-patch+json',
  'application/vnd.api+json',
  'application/csp-report',
  'application/reports+json',
];
/** Methods whose body has meaning; a body on GET or DELETE is never read (as koa-body did before it). */
const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);
const DECODERS: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** Control-flow signal: the body ran over its limit while read; caught below, which answers PayloadTooLargeError. */
class BodyTooLarge extends Error {}

/**
 * The body's bytes, at most `maxBytes` of them. Over the limit it stops listening and lets Node drop the rest
 * (the connection closes after the 413), without holding what was read.
 */
function readAtMost(source: Readable, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        stop();
        chunks.length = 0;
        // Drained and discarded: nothing more is kept, and the client's write does not hang before it reads the 413.
        source.resume();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    // Closed without 'end' or 'error': the client went away mid-body.
    const onClose = () => {
      stop();
      reject(new BadRequestError('body: the connection closed before the whole body arrived'));
    };
    source.on('data', onData);
    source.on('end', onEnd);
    source.on('error', onError);
    source.on('close', onClose);
  });
}

function contentEncoding(header: string): string {
  return header.trim().toLowerCase() || 'identity';
}

export function jsonBody(limits: JsonBodyLimits): Middleware {
  return async (ctx, next) => {
    if (!METHODS_WITH_BODY.has(ctx.method) || !ctx.is(JSON_TYPES)) return next();
    const encoding = contentEncoding(ctx.get('content-encoding'));
    if (encoding !== 'identity' && (limits.encodings === 'refuse' || !Object.hasOwn(DECODERS, encoding))) {
      ctx.set('Connection', 'close');
      throw new UnsupportedContentEncodingError(encoding, limits.encodings === 'refuse' ? [] : Object.keys(DECODERS));
    }
    const declaredLength = Number(ctx.get('content-length') || 0);
    if (declaredLength > limits.maxBytes) {
      ctx.set('Connection', 'close');
      throw new PayloadTooLargeError(limits.maxBytes);
    }

    let source: Readable = ctx.req;
    if (encoding !== 'identity') {
      // Piped, not pipeline(): pipeline would destroy the request on a decoding error, and with it the socket the
      // 400 is to be written to. A client that goes away ends the decoder instead.
      const decoder = DECODERS[encoding]() as unknown as Readable;
      ctx.req.once('error', (error) => decoder.destroy(error));
      ctx.req.pipe(decoder as unknown as NodeJS.WritableStream);
      source = decoder;
    }
    let bytes: Buffer;
    try {
      bytes = await readAtMost(source, limits.maxBytes);
    } catch (error) {
      ctx.set('Connection', 'close');
      if (source !== ctx.req) {
        // What is left of the request is read and dropped, never inflated.
        ctx.req.unpipe();
        ctx.req.resume();
        source.destroy();
      }
      if (error instanceof BodyTooLarge) throw new PayloadTooLargeError(limits.maxBytes);
      throw error;
    }

    const text = bytes.toString('utf8');
    const first = text.trimStart()[0];
    if (first !== '{' && first !== '[') throw new BadRequestError('body: malformed JSON');
    if (jsonNestingDepth(text, limits.maxDepth) > limits.maxDepth) {
      throw new BadRequestError(`body: nests objects and arrays more than ${limits.maxDepth} levels deep`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new BadRequestError('body: malformed JSON');
    }
    if (hasProtoKey(parsed)) throw new BadRequestError('body: a "__proto__" key is not allowed');
    ctx.request.body = parsed;
    return next();
  };
}
