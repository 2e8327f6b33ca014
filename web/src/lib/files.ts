// What the server accepts, checked before a file is read or sent, so a refusal names the file at once. Text files
// go in as JSON content (POST /documents); PDFs as a file upload (POST /knowledge-bases/:id/uploads).
import type { Limits } from '../api/generated.ts';
import { formatSizeOverLimit } from './format.ts';

export const TEXT_EXTENSIONS = ['.txt', '.text', '.md', '.markdown'] as const;
export const PDF_EXTENSION = '.pdf';
/** The replace input and the paste form: text only (a PDF is not replaced in place). */
export const TEXT_ACCEPT_ATTRIBUTE = TEXT_EXTENSIONS.join(',');
/** The upload area: text and PDFs. */
export const UPLOAD_ACCEPT_ATTRIBUTE = [...TEXT_EXTENSIONS, PDF_EXTENSION].join(',');
/** The server's default limit on `content` (5 MiB), used while GET /limits has not answered. */
export const MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;

function endsWithExtension(filename: string, extension: string): boolean {
  const lower = filename.toLowerCase();
  return lower.endsWith(extension) && lower.length > extension.length;
}

export function hasTextExtension(filename: string): boolean {
  return TEXT_EXTENSIONS.some((extension) => endsWithExtension(filename, extension));
}

export function isPdfFilename(filename: string): boolean {
  return endsWithExtension(filename, PDF_EXTENSION);
}

export interface TooLargeFile {
  file: File;
  limit: number;
}

export interface FileCheck {
  text: File[];
  pdf: File[];
  wrongType: File[];
  tooLarge: TooLargeFile[];
  /** Whether PDFs were acceptable, for the refusal's wording. */
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
    if (allowPdf && isPdfFilename(file.name)) {
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
    const kinds = check.pdfAllowed ? '.pdf, .txt, .text, .md and .markdown' : '.txt, .text, .md and .markdown';
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
