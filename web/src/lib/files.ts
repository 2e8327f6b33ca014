// What the server accepts, checked before a file is read or sent, so a refusal names the file at once. Text files
// go in as JSON content (POST /documents); PDFs and the other file kinds (Word, OpenDocument, PowerPoint, Excel, CSV,
// web pages, images) as a file upload (POST /knowledge-bases/:id/uploads), where the server tells the kind by its bytes.
import type { Limits } from '../api/generated.ts';
import { formatSizeOverLimit } from './format.ts';

export const TEXT_EXTENSIONS = ['.txt', '.text', '.md', '.markdown'] as const;
/** Sent as files: the server's extraction/fileKinds.ts UPLOAD_EXTENSIONS. */
export const FILE_EXTENSIONS = [
  '.pdf',
  '.docx',
  '.odt',
  '.pptx',
  '.xlsx',
  '.csv',
  '.html',
  '.htm',
  '.png',
  '.jpg',
  '.jpeg',
  '.tif',
  '.tiff',
] as const;
/** The replace input and the paste form: text only (a PDF is not replaced in place). */
export const TEXT_ACCEPT_ATTRIBUTE = TEXT_EXTENSIONS.join(',');
/** The upload area: text and every file kind. */
export const UPLOAD_ACCEPT_ATTRIBUTE = [...TEXT_EXTENSIONS, ...FILE_EXTENSIONS].join(',');
/** The server's default limit on `content` (5 MiB), used while GET /limits has not answered. */
export const MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;

function endsWithExtension(filename: string, extension: string): boolean {
  const lower = filename.toLowerCase();
  return lower.endsWith(extension) && lower.length > extension.length;
}

export function hasTextExtension(filename: string): boolean {
  return TEXT_EXTENSIONS.some((extension) => endsWithExtension(filename, extension));
}

/** A file sent as a file upload (a PDF, a Word document, a deck …), not as text. */
export function isUploadFilename(filename: string): boolean {
  return FILE_EXTENSIONS.some((extension) => endsWithExtension(filename, extension));
}

export interface TooLargeFile {
  file: File;
  limit: number;
}

export interface FileCheck {
  text: File[];
  /** Files sent as a file upload (PDFs and the other file kinds). */
  pdf: File[];
  wrongType: File[];
  tooLarge: TooLargeFile[];
  /** Whether file uploads were acceptable, for the refusal's wording. */
  pdfAllowed: boolean;
}

export interface CheckOptions {
  /** From GET /limits; null when unknown: text files get the default limit, PDFs are left to the server. */
  limits: Limits | null;
  allowPdf: boolean;
}

export function checkFiles(files: Iterable<File>, { limits, allowPdf }: CheckOptions): FileCheck {
  const check: FileCheck = { text: [], pdf: [], wrongType: [], tooLarge: [], pdfAllowed: allowPdf };
  const textLimit = limits?.max_content_bytes ?? MAX_DOCUMENT_BYTES;
  const pdfLimit = limits?.max_upload_bytes ?? null;
  for (const file of files) {
    if (allowPdf && isUploadFilename(file.name)) {
      if (pdfLimit !== null && file.size > pdfLimit) check.tooLarge.push({ file, limit: pdfLimit });
      else check.pdf.push(file);
    } else if (hasTextExtension(file.name)) {
      if (file.size > textLimit) check.tooLarge.push({ file, limit: textLimit });
      else check.text.push(file);
    } else {
      check.wrongType.push(file);
    }
  }
  return check;
}

/** Refusals as sentences that name every refused file, or [] when nothing was refused. */
export function refusalMessages(check: FileCheck): string[] {
  const messages: string[] = [];
  if (check.wrongType.length > 0) {
    const kinds = check.pdfAllowed
      ? '.txt, .text, .md, .markdown, .pdf, .docx, .odt, .pptx, .xlsx, .csv, .html, .htm, .png, .jpg, .jpeg, .tif and .tiff'
      : '.txt, .text, .md and .markdown';
    messages.push(`Not uploaded: ${names(check.wrongType)}. Only ${kinds} files are accepted.`);
  }
  for (const { file, limit } of check.tooLarge) {
    const sizes = formatSizeOverLimit(file.size, limit);
    messages.push(`Not uploaded: ${file.name} is ${sizes.size}; the limit is ${sizes.limit}.`);
  }
  return messages;
}

function names(files: File[]): string {
  return files.map((file) => file.name).join(', ');
}
