// PLACEHOLDER of the docs-kinds branch, to be replaced at merge by the docs-ocr branch's module (Tesseract): images
// (PNG, JPEG, TIFF) are uploaded, sniffed and handed to the reader child (documentWorker.ts), which calls this; here
// it refuses every image, so an image document fails with a message saying why, and nothing else depends on it.
import { DocumentReadError } from '../errors.ts';
import type { DocumentLimits, ExtractedDocument } from './documents.ts';

/**
 * An image's text by OCR, one section per page (a TIFF may hold several), reported as pages are read:
 * onProgress(done, total). Rejects with DocumentReadError.
 */
export async function readScannedImage(
  bytes: Buffer,
  limits: DocumentLimits,
  onProgress?: (done: number, total: number) => void,
): Promise<ExtractedDocument> {
  void bytes;
  void limits;
  void onProgress;
  throw new DocumentReadError('corrupt', 'images are read by OCR, and OCR is not available in this build');
}
