// The slice of yauzl 3.4.0's API boundedZip.ts uses (the package ships no types).
declare module 'yauzl' {
  import type { EventEmitter } from 'node:events';
  import type { Readable } from 'node:stream';

  export interface Entry {
    fileName: string;
    compressedSize: number;
    uncompressedSize: number;
  }

  export interface ZipFile extends EventEmitter {
    entryCount: number;
    readEntry(): void;
    openReadStream(entry: Entry, callback: (error: Error | null, stream: Readable) => void): void;
    close(): void;
  }

  export interface Options {
    lazyEntries?: boolean;
    strictFileNames?: boolean;
    validateEntrySizes?: boolean;
    decodeStrings?: boolean;
  }

  const yauzl: {
    fromBuffer(buffer: Buffer, options: Options, callback: (error: Error | null, zip: ZipFile) => void): void;
  };
  export default yauzl;
}
