// A zip (DOCX, ODT, PPTX, XLSX) read under bounds that are checked before or while inflating, never after: a zip bomb
// (1 MB that inflates to 1 GiB) is refused at the cost of its central directory, or of one 16 KiB chunk when its
// header lies. yauzl 3.4.0, because it is the one zip reader measured that stops at a byte limit
// (docs/format-readers-research.md: jszip and fflate inflate the whole GiB first, 1–2 GB of memory).
//   entries        the end record's count, before any entry is listed
//   part bytes     an entry's declared size before inflating; its real output while inflating (yauzl's
//                  validateEntrySizes fails the stream once it passes the declared size; we count as well)
//   total bytes    the parts read, declared before each and counted per chunk
//   ratio          declared inflated over compressed size of one entry, before inflating
// yauzl also refuses names with "..", absolute paths and backslashes (strictFileNames). Inflated data lives in
// Buffers outside V8's heap, so the heap cap bounds none of this; the reader child's address-space limit is the
// backstop.
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import type { Readable } from 'node:stream';
import { DocumentReadError } from '../errors.ts';
import type { DocumentLimits } from './documents.ts';

const PART_SETTING = 'KBQA_DOC_MAX_PART_MB';
const TOTAL_SETTING = 'KBQA_DOC_MAX_INFLATED_MB';

export type ZipLimits = Pick<DocumentLimits, 'maxZipEntries' | 'maxPartBytes' | 'maxInflatedBytes' | 'maxZipRatio'>;

export interface BoundedZip {
  has(name: string): boolean;
  /** Every entry's name, folders excluded. */
  names(): string[];
  /** One part's inflated chunks, under the bounds; stopping the loop early stops the inflation. */
  stream(name: string): AsyncGenerator<Buffer>;
  read(name: string): Promise<Buffer>;
  close(): void;
}

function open(buffer: Buffer, kind: string): Promise<ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.fromBuffer(buffer, { lazyEntries: true, strictFileNames: true, validateEntrySizes: true }, (error, zip) =>
      error ? reject(DocumentReadError.corrupt(kind, error.message)) : resolve(zip),
    ),
  );
}

function listEntries(zip: ZipFile, kind: string): Promise<Map<string, Entry>> {
  const entries = new Map<string, Entry>();
  return new Promise((resolve, reject) => {
    zip.on('entry', (entry: Entry) => {
      if (!entry.fileName.endsWith('/')) entries.set(entry.fileName, entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.on('error', (error: Error) => reject(DocumentReadError.corrupt(kind, error.message)));
    zip.readEntry();
  });
}

/** Opens a zip held in memory; `kind` ("DOCX") names the file in errors. */
export async function openBoundedZip(buffer: Buffer, limits: ZipLimits, kind: string): Promise<BoundedZip> {
  const zip = await open(buffer, kind);
  if (zip.entryCount > limits.maxZipEntries) {
    zip.close();
    throw DocumentReadError.tooManyEntries(zip.entryCount, limits.maxZipEntries);
  }
  const entries = await listEntries(zip, kind);
  let total = 0;

  function check(entry: Entry): void {
    if (entry.uncompressedSize > limits.maxPartBytes)
      throw DocumentReadError.inflates(entry.fileName, entry.uncompressedSize, limits.maxPartBytes, PART_SETTING);
    const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
    if (ratio > limits.maxZipRatio) throw DocumentReadError.ratio(entry.fileName, ratio, limits.maxZipRatio);
    if (total + entry.uncompressedSize > limits.maxInflatedBytes)
      throw DocumentReadError.inflates(
        'the zip',
        total + entry.uncompressedSize,
        limits.maxInflatedBytes,
        TOTAL_SETTING,
      );
  }

  async function* stream(name: string): AsyncGenerator<Buffer> {
    const entry = entries.get(name);
    if (!entry) throw DocumentReadError.corrupt(kind, `it has no ${name}`);
    check(entry);
    const readable = await new Promise<Readable>((resolve, reject) =>
      zip.openReadStream(entry, (error, opened) =>
        error ? reject(DocumentReadError.corrupt(kind, error.message)) : resolve(opened),
      ),
    );
    let seen = 0;
    try {
      for await (const chunk of readable as AsyncIterable<Buffer>) {
        seen += chunk.length;
        total += chunk.length;
        if (seen > limits.maxPartBytes) throw DocumentReadError.inflates(name, null, limits.maxPartBytes, PART_SETTING);
        if (total > limits.maxInflatedBytes)
          throw DocumentReadError.inflates('the zip', null, limits.maxInflatedBytes, TOTAL_SETTING);
        yield chunk;
      }
    } catch (error) {
      if (error instanceof DocumentReadError) throw error;
      // yauzl's own checks (a header that lies about the size, a bad checksum) land here.
      throw DocumentReadError.corrupt(kind, `${name}: ${(error as Error).message}`);
    } finally {
      readable.destroy();
    }
  }

  return {
    has: (name) => entries.has(name),
    names: () => [...entries.keys()],
    stream,
    async read(name) {
      const chunks: Buffer[] = [];
      for await (const chunk of stream(name)) chunks.push(chunk);
      return Buffer.concat(chunks);
    },
    close: () => zip.close(),
  };
}
