// The readers of the kinds beyond text, markdown and PDF, behind one call: the file's kind from its name, and its
// sections (documents.ts). Each reader is a pure function of the bytes and the limits; the caller runs it where its
// memory and time are bounded (the reader child process, as PDFs are read: pdfWorker.ts).
import { readCsv } from './csv.ts';
import type { DocumentLimits, ExtractedDocument } from './documents.ts';
import { readDocx } from './docx.ts';
import { readHtml } from './html.ts';
import { readOdt } from './odt.ts';
import { readPptx } from './pptx.ts';
import { readXlsx } from './xlsx.ts';

export const DOCUMENT_KINDS = ['docx', 'odt', 'pptx', 'xlsx', 'csv', 'html'] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

/** The kind a file name says (".htm" is HTML); null for any other name. */
export function documentKindOf(filename: string): DocumentKind | null {
  const dot = filename.lastIndexOf('.');
  const extension = dot < 0 ? '' : filename.slice(dot + 1).toLowerCase();
  if (extension === 'htm') return 'html';
  return (DOCUMENT_KINDS as readonly string[]).includes(extension) ? (extension as DocumentKind) : null;
}

/** Reads one file of a kind; rejects with DocumentReadError when the file is unreadable or passes a limit. */
export async function readDocument(
  kind: DocumentKind,
  bytes: Buffer,
  filename: string,
  limits: DocumentLimits,
): Promise<ExtractedDocument> {
  switch (kind) {
    case 'docx':
      return readDocx(bytes, limits);
    case 'odt':
      return readOdt(bytes, limits);
    case 'pptx':
      return readPptx(bytes, limits);
    case 'xlsx':
      return readXlsx(bytes, limits);
    case 'csv':
      return readCsv(bytes, filename.replace(/\.csv$/i, ''), limits);
    case 'html':
      return readHtml(bytes, limits);
  }
}
