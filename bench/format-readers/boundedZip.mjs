// A bounded zip reader on yauzl 3.4.0 (the prototype of the reader's zip layer).
//
// Bounds, all checked before or while inflating, never after:
//   maxEntries      central-directory entry count, checked as entries are listed (before any inflation)
//   maxEntryBytes   one entry's inflated size: its declared size is checked before inflating it, and yauzl's
//                   validateEntrySizes (default on) errors the moment the inflated stream passes the declared
//                   size, so a header that lies cannot inflate past it; we also count the bytes ourselves and
//                   destroy the stream at the limit (belt and braces)
//   maxTotalBytes   the sum of inflated bytes over the entries read
//   maxRatio        inflated / compressed for one entry (declared sizes), checked before inflating
// yauzl also refuses file names with "..", absolute paths and backslashes (strictFileNames) and a central
// directory that points outside the file.
import yauzl from 'yauzl';

export class ZipLimitError extends Error {
  constructor(message, limit) {
    super(message);
    this.limit = limit;
  }
}

export const defaultZipLimits = {
  maxEntries: 10_000,
  maxEntryBytes: 256 * 1024 * 1024,
  maxTotalBytes: 512 * 1024 * 1024,
  maxRatio: 200,
};

function openBuffer(buffer) {
  return new Promise((resolve, reject) =>
    yauzl.fromBuffer(buffer, { lazyEntries: true, strictFileNames: true, validateEntrySizes: true }, (err, zip) =>
      err ? reject(err) : resolve(zip),
    ),
  );
}

/** Lists the entries (no inflation) and checks the count. */
export async function listEntries(buffer, limits = defaultZipLimits) {
  const zip = await openBuffer(buffer);
  if (zip.entryCount > limits.maxEntries) {
    zip.close();
    throw new ZipLimitError(
      `the file holds ${zip.entryCount} zip entries; the limit is ${limits.maxEntries}`,
      'entries',
    );
  }
  const entries = new Map();
  await new Promise((resolve, reject) => {
    zip.on('entry', (entry) => {
      entries.set(entry.fileName, entry);
      zip.readEntry();
    });
    zip.on('end', resolve);
    zip.on('error', reject);
    zip.readEntry();
  });
  return { zip, entries };
}

/** Opens a zip held in memory and gives back a reader that inflates entries under the limits. */
export async function openBoundedZip(buffer, limits = defaultZipLimits) {
  const { zip, entries } = await listEntries(buffer, limits);
  let totalBytes = 0;
  function check(entry) {
    if (entry.uncompressedSize > limits.maxEntryBytes)
      throw new ZipLimitError(
        `${entry.fileName} inflates to ${entry.uncompressedSize} bytes; the limit is ${limits.maxEntryBytes}`,
        'entryBytes',
      );
    const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
    if (ratio > limits.maxRatio)
      throw new ZipLimitError(
        `${entry.fileName} inflates ${Math.round(ratio)}:1; the limit is ${limits.maxRatio}:1`,
        'ratio',
      );
    if (totalBytes + entry.uncompressedSize > limits.maxTotalBytes)
      throw new ZipLimitError(`the zip inflates past ${limits.maxTotalBytes} bytes in all`, 'totalBytes');
  }
  /** Streams one entry's inflated chunks; stops (destroying the inflater) once the limits are passed. */
  async function* stream(name) {
    const entry = entries.get(name);
    if (!entry) throw new Error(`no ${name} in the zip`);
    check(entry);
    const rs = await new Promise((resolve, reject) =>
      zip.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s))),
    );
    let seen = 0;
    try {
      for await (const chunk of rs) {
        seen += chunk.length;
        totalBytes += chunk.length;
        if (seen > limits.maxEntryBytes || totalBytes > limits.maxTotalBytes) {
          throw new ZipLimitError(`${name} inflated past its limit`, 'entryBytes');
        }
        yield chunk;
      }
    } finally {
      rs.destroy();
    }
  }
  async function read(name) {
    const chunks = [];
    for await (const c of stream(name)) chunks.push(c);
    return Buffer.concat(chunks);
  }
  return {
    names: () => [...entries.keys()],
    has: (name) => entries.has(name),
    stream,
    read,
    readText: async (name) => (await read(name)).toString('utf8'),
    close: () => zip.close(),
    get totalBytes() {
      return totalBytes;
    },
  };
}
