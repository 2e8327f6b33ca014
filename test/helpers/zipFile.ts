// Small zips built in a test (DOCX, ODT, PPTX, XLSX are zips), including hostile ones: a part given as deflated bytes
// with the sizes it claims, so a 1 GiB part costs its ~1 MB of deflate stream and no GiB is ever held.
import { constants, crc32, deflateRawSync } from 'node:zlib';

export interface RawPart {
  /** A raw deflate stream (method 8). */
  deflated: Buffer;
  /** The inflated size the headers claim (the truth, or a lie). */
  size: number;
  crc: number;
}

/**
 * The raw deflate stream of `block` repeated `times` times, made without deflating the whole: one block compressed
 * with a full flush (byte-aligned, no reference back across it) repeats as is, then an empty final block ends it.
 */
export function repeatedDeflate(block: Buffer, times: number): Buffer {
  const once = deflateRawSync(block, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const end = deflateRawSync(Buffer.alloc(0));
  return Buffer.concat([...Array.from({ length: times }, () => once), end]);
}

function header(signature: number, fields: [number, 2 | 4][]): Buffer {
  const size = 4 + fields.reduce((sum, [, bytes]) => sum + bytes, 0);
  const out = Buffer.alloc(size);
  out.writeUInt32LE(signature, 0);
  let at = 4;
  for (const [value, bytes] of fields) {
    if (bytes === 2) out.writeUInt16LE(value, at);
    else out.writeUInt32LE(value >>> 0, at);
    at += bytes;
  }
  return out;
}

/** A zip of the parts, in order: strings and Buffers are deflated here, RawParts written as given. */
export function zipOf(parts: Record<string, string | Buffer | RawPart>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, body] of Object.entries(parts)) {
    const raw: RawPart =
      typeof body === 'string' || Buffer.isBuffer(body)
        ? { deflated: deflateRawSync(Buffer.from(body)), size: Buffer.byteLength(body), crc: crc32(body) }
        : body;
    const fileName = Buffer.from(name);
    const common: [number, 2 | 4][] = [
      [20, 2], // version needed
      [0, 2], // flags
      [8, 2], // deflate
      [0, 2], // time
      [0x21, 2], // date (1980-01-01)
      [raw.crc, 4],
      [raw.deflated.length, 4],
      [raw.size, 4],
      [fileName.length, 2],
      [0, 2], // extra length
    ];
    const local = Buffer.concat([header(0x04034b50, common), fileName, raw.deflated]);
    const central = header(0x02014b50, [[20, 2], ...common, [0, 2], [0, 2], [0, 2], [0, 4], [offset, 4]]);
    centrals.push(central, fileName);
    locals.push(local);
    offset += local.length;
  }
  const directory = Buffer.concat(centrals);
  const count = Object.keys(parts).length;
  const end = header(0x06054b50, [
    [0, 2],
    [0, 2],
    [count, 2],
    [count, 2],
    [directory.length, 4],
    [offset, 4],
    [0, 2],
  ]);
  return Buffer.concat([...locals, directory, end]);
}
