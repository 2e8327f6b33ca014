// The program of the process that reads ONE file of a kind other than PDF (pdf.ts starts one per document, as it does
// pdfWorker.ts for a PDF): the readers (officeDocuments.ts; OCR for images: ocr.ts) and their libraries are imported
// here and nowhere else, so parsing a DOCX, a workbook or a web page never runs in the API's process. The process
// limits its own address space as a PDF's reader does (readerProcess.ts): the readers' own bounds (zip sizes and
// ratio, rows, slides, no DTD: documents.ts) stop a hostile file first, and the limit is the backstop for what they
// do not count (a DOM, a parser's buffers).
//
// Protocol: argv = [memory budget in MiB, kind, filename, the limits as JSON]; the file's bytes on stdin; messages to
// the parent over IPC: 'ready', 'progress' (pages of an image read by OCR), 'result' last.
import { DocumentReadError, type DocumentFailureReason } from '../errors.ts';
import type { DocumentLimits, DocumentSection } from './documents.ts';
import type { FileKind } from './fileKinds.ts';
import { closeOcr, DEFAULT_OCR_LIMITS, readScannedImage, type OcrLimits, type OcrPage } from './ocr.ts';
import { readDocument, type DocumentKind } from './officeDocuments.ts';
import { isAllocationFailure, limitAddressSpace, readStdin, sendToParent } from './readerProcess.ts';

export type DocumentReading =
  | { ok: true; sections: DocumentSection[]; scanned?: OcrPage[] }
  | { ok: false; reason: DocumentFailureReason; message: string }
  | { ok: false; reason: 'out_of_memory' };

export type DocumentMessage =
  { type: 'ready' } | { type: 'progress'; done: number; total: number } | { type: 'result'; result: DocumentReading };

const send = (message: DocumentMessage): Promise<void> => sendToParent(message);

/** The readers' bounds, and OCR's for an image (ocr.ts). */
export type ReaderLimits = DocumentLimits & { ocr?: OcrLimits };

async function read(kind: Exclude<FileKind, 'pdf'>, filename: string, limits: ReaderLimits): Promise<DocumentReading> {
  const bytes = await readStdin();
  try {
    if (kind === 'image') {
      const progress = (done: number, total: number) => void send({ type: 'progress', done, total });
      const image = await readScannedImage(bytes, limits.ocr ?? DEFAULT_OCR_LIMITS, progress);
      return {
        ok: true,
        sections: image.sections.filter((section) => section.text.trim() !== ''),
        scanned: image.pages,
      };
    }
    const document = await readDocument(kind satisfies DocumentKind, bytes, filename, limits);
    return { ok: true, sections: document.sections.filter((section) => section.text.trim() !== '') };
  } catch (error) {
    if (error instanceof DocumentReadError) return { ok: false, reason: error.reason, message: error.message };
    if (error instanceof RangeError || isAllocationFailure(error)) return { ok: false, reason: 'out_of_memory' };
    throw error;
  }
}

const [budgetMiB, kind, filename, limitsJson] = process.argv.slice(2);
// The readers' modules load before the limit is set: their code is not what the budget is for.
limitAddressSpace(Number(budgetMiB));
await send({ type: 'ready' });
const result = await read(kind as Exclude<FileKind, 'pdf'>, filename, JSON.parse(limitsJson) as ReaderLimits);
await send({ type: 'result', result });
// Tesseract's worker thread would keep the process alive.
if (kind === 'image') await closeOcr();
process.disconnect();
