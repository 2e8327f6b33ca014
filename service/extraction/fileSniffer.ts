// Which kind an uploaded file is, from its bytes, checked against its name (fileKinds.ts). Runs in the API's
// process on the stored upload: it reads magic numbers and, for a zip, its central directory (the entry count is
// bounded before any entry is listed); nothing is inflated but ODF's few-byte `mimetype` part.
import { DocumentReadError } from '../errors.ts';
import { openBoundedZip, type ZipLimits } from './boundedZip.ts';
import { ACCEPTED_FILES, KIND_NAMES, kindOfFilename, uploadExtensionProblem, type FileKind } from './fileKinds.ts';

function startsWith(bytes: Buffer, ...signature: number[]): boolean {
  return bytes.length >= signature.length && signature.every((byte, index) => bytes[index] === byte);
}

/** The kinds a file's first bytes say, when they say one ('zip' for the four zip formats, 'text' for no NUL byte). */
function magicOf(bytes: Buffer): 'pdf' | 'zip' | 'image' | 'text' | null {
  // A PDF may have junk before its header (readers accept it within the first KiB).
  if (bytes.subarray(0, 1024).includes('%PDF-')) return 'pdf';
  if (startsWith(bytes, 0x50, 0x4b, 0x03, 0x04)) return 'zip';
  if (startsWith(bytes, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image';
  if (startsWith(bytes, 0xff, 0xd8, 0xff)) return 'image';
  if (startsWith(bytes, 0x49, 0x49, 0x2a, 0x00) || startsWith(bytes, 0x4d, 0x4d, 0x00, 0x2a)) return 'image';
  return bytes.subarray(0, 64 * 1024).includes(0) ? null : 'text';
}

/** Which of the zip formats a zip is, from the parts it lists (its central directory; nothing is inflated but ODF's `mimetype`). */
async function zipKind(bytes: Buffer, limits: ZipLimits): Promise<FileKind | null> {
  let zip;
  try {
    zip = await openBoundedZip(bytes, limits, 'zip');
  } catch (error) {
    if (error instanceof DocumentReadError && error.reason === 'too_large') throw error;
    return null;
  }
  try {
    if (zip.has('word/document.xml')) return 'docx';
    if (zip.has('ppt/presentation.xml')) return 'pptx';
    if (zip.has('xl/workbook.xml')) return 'xlsx';
    if (zip.has('mimetype') && zip.has('content.xml')) {
      const mimetype = (await zip.read('mimetype').catch(() => Buffer.alloc(0))).toString('latin1').trim();
      if (mimetype === 'application/vnd.oasis.opendocument.text') return 'odt';
    }
    return null;
  } finally {
    zip.close();
  }
}

/**
 * The kind of an uploaded file, from its first bytes (`head`; `whole` for a zip), when it is the kind its name says; else the refusal (a 400 naming
 * what the upload takes). Text kinds (CSV, HTML) are any file without a NUL byte in its first 64 KiB: their readers
 * say the rest.
 */
export async function detectFileKind(
  filename: string,
  head: Buffer,
  whole: () => Promise<Buffer | null>,
  limits: ZipLimits,
): Promise<{ kind: FileKind } | { problem: string }> {
  const named = kindOfFilename(filename);
  if (!named) return { problem: uploadExtensionProblem(filename)! };
  const magic = magicOf(head);
  let found: FileKind | null;
  if (magic === 'zip') {
    // Its parts are listed at its end: the whole file is needed (a zip is at most KBQA_MAX_UPLOAD_BYTES).
    const bytes = await whole();
    found = bytes ? await zipKind(bytes, limits) : null;
  } else if (magic === 'text') found = named === 'csv' || named === 'html' ? named : null;
  else found = magic;
  if (found === named) return { kind: named };
  const what = found ? KIND_NAMES[found] : 'none of the kinds it takes';
  return {
    problem: `${filename} is named as ${KIND_NAMES[named]} but its content is ${what}; the upload takes ${ACCEPTED_FILES}, each with its own extension`,
  };
}
