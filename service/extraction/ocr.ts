// Text from scans, by OCR: an uploaded image (PNG, JPEG, TIFF) and a PDF page without a text layer (pdfWorker.ts).
// Runs in the reader child process only (never imported by the API's process): Tesseract is CPU-bound, ~1.4–2.6 s a
// page here, and its WebAssembly heap (~130 MB for a 1700 × 2200 page) counts against the child's memory limit.
//
// The engine is tesseract.js (Tesseract 5's LSTM compiled to WebAssembly) with the English model of
// @tesseract.js-data/eng, both exact npm dependencies: `npm ci` provisions them on a fresh machine and in the Docker
// image, with no system package. Debian's tesseract-ocr 5.3.0 read the committed scans the same (figures in
// docs/architecture.md § OCR) but would have to be provisioned into .local/ and the image by hand. The model is
// read from the package's folder and never cached or downloaded (`cacheMethod: 'none'`, `langPath`): without
// them tesseract.js fetches it from a CDN, and hangs offline.
import { createRequire } from 'node:module';
import path from 'node:path';
import { DocumentReadError } from '../errors.ts';
import type { DocumentSection } from './documents.ts';

export interface OcrLimits {
  /** Pages of one document that may be read by OCR (KBQA_OCR_MAX_PAGES): more is refused before the first. */
  maxPages: number;
  /** Pixels of one image or scanned page (KBQA_OCR_MAX_PIXELS), read from its header before it is decoded. */
  maxPixels: number;
  /** The time one page read by OCR adds to the document's budget (KBQA_OCR_PAGE_MS). */
  pageMs: number;
}

export const DEFAULT_OCR_LIMITS: OcrLimits = { maxPages: 50, maxPixels: 40_000_000, pageMs: 15_000 };

/** A page's mean word confidence (0–100) under which it is flagged for a person to check against the original. */
export const LOW_CONFIDENCE = 70;

export interface OcrPage {
  /** 1-based. */
  page: number;
  /** Tesseract's mean word confidence, 0–100. */
  confidence: number;
}

export interface ScannedImage {
  /** One section per page, labelled "Page 1, scanned" (a citation points at the page and says it was OCR). */
  sections: DocumentSection[];
  pages: OcrPage[];
}

/** Done / total pages read by OCR, as each page starts and ends. */
export type OcrProgress = (done: number, total: number) => void;

/**
 * Reads one image upload by OCR: its text as one section ("Page 1, scanned") and the page's confidence. Call it in
 * the reader child process. A multi-page TIFF gives its first page.
 */
export async function readScannedImage(
  bytes: Uint8Array,
  limits: OcrLimits,
  onProgress?: OcrProgress,
): Promise<ScannedImage> {
  const size = imageSize(bytes);
  if (size === null) throw new DocumentReadError('corrupt', 'the image is not a readable PNG, JPEG or TIFF');
  checkPixels(size.width, size.height, limits);
  onProgress?.(0, 1);
  const read = await recognize(bytes);
  onProgress?.(1, 1);
  return {
    sections: read.text ? [{ label: scannedLabel(1), text: read.text }] : [],
    pages: [{ page: 1, confidence: read.confidence }],
  };
}

export function scannedLabel(page: number): string {
  return `Page ${page}, scanned`;
}

export function checkPixels(width: number, height: number, limits: OcrLimits): void {
  if (width * height > limits.maxPixels)
    throw new DocumentReadError(
      'too_large',
      `the scan is ${width} × ${height} pixels; the limit is ${limits.maxPixels.toLocaleString('en')} pixels (KBQA_OCR_MAX_PIXELS)`,
    );
}

type Worker = Awaited<ReturnType<typeof import('tesseract.js').createWorker>>;
let worker: Promise<Worker> | undefined;

/** The process's one Tesseract (loaded at the first scan: ~1 s, the model read from its npm package). */
function engine(): Promise<Worker> {
  worker ??= (async () => {
    const { createWorker, OEM, PSM } = await import('tesseract.js');
    const require = createRequire(import.meta.url);
    const langPath = path.join(path.dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
    const created = await createWorker('eng', OEM.LSTM_ONLY, { langPath, cacheMethod: 'none', gzip: true });
    // Full page layout analysis, as the tesseract CLI does: tesseract.js's default (one uniform block) dropped the
    // rows of a table on a committed scan (bench/answers/real/scanned, the handbook's page 3).
    await created.setParameters({ tessedit_pageseg_mode: PSM.AUTO });
    return created;
  })();
  return worker;
}

/** Ends this process's Tesseract (its worker thread would keep the process alive). */
export async function closeOcr(): Promise<void> {
  const running = worker;
  worker = undefined;
  if (running) await (await running).terminate();
}

/** An image file (PNG, JPEG, TIFF, PGM/PPM) read by OCR: its text as paragraphs, and its mean word confidence. */
export async function recognize(image: Uint8Array): Promise<{ text: string; confidence: number }> {
  const tesseract = await engine();
  const { data } = await tesseract.recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength));
  return { text: paragraphs(data.text), confidence: Math.round(data.confidence) };
}

/**
 * Tesseract's text as paragraphs: a printed line that fills the width (at least WRAPPED_LINE of the page's longest)
 * runs on into the next one (a scan's printed line breaks fall inside sentences), a word hyphenated across two such
 * lines is joined; a short line (a heading, a table row, a list item's end) stays a line of its own, and blank lines
 * stay paragraph breaks. (Tesseract's own paragraphs, `blocks`, dropped a table's rows on a committed scan.)
 */
export function paragraphs(text: string): string {
  const lines = text.split('\n').map((line) => line.trim());
  const longest = Math.max(0, ...lines.map((line) => line.length));
  const out: string[] = [];
  let runsOn = false;
  for (const line of lines) {
    if (line === '') {
      if (out.length && out.at(-1) !== '') out.push('');
      runsOn = false;
      continue;
    }
    if (runsOn) {
      const previous = out.pop()!;
      const hyphenated = previous.endsWith('-') && /^[a-z]/.test(line) && /[a-z]-$/.test(previous);
      out.push(hyphenated ? previous.slice(0, -1) + line : `${previous} ${line}`);
    } else {
      out.push(line);
    }
    runsOn = line.length >= WRAPPED_LINE * longest;
  }
  return out.join('\n').replace(/\n\n+/g, '\n\n').trim();
}

/** A line at least this share of the page's longest line is taken as wrapped by the printer. */
const WRAPPED_LINE = 0.8;

/**
 * Pixels as a PGM (grey) file, which Tesseract's image reader (Leptonica) takes as it takes a PNG: how a PDF page's
 * image, decoded by pdfjs without a canvas, reaches OCR. `channels` 1 (grey), 3 (RGB) or 4 (RGBA).
 */
export function greyPgm(width: number, height: number, pixels: Uint8Array | Uint8ClampedArray, channels: number) {
  const header = Buffer.from(`P5\n${width} ${height}\n255\n`, 'ascii');
  const out = new Uint8Array(header.length + width * height);
  out.set(header);
  for (let i = 0, o = header.length; i < width * height; i++, o++) {
    const p = i * channels;
    out[o] = channels === 1 ? pixels[p] : (pixels[p] * 77 + pixels[p + 1] * 150 + pixels[p + 2] * 29) >> 8;
  }
  return out;
}

/** Width and height from a PNG, JPEG or TIFF header (before anything is decoded); null when it is none of them. */
export function imageSize(bytes: Uint8Array): { width: number; height: number } | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 24 && view.getUint32(0) === 0x89504e47 && view.getUint32(12) === 0x49484452)
    return { width: view.getUint32(16), height: view.getUint32(20) };
  if (bytes.length >= 4 && view.getUint16(0) === 0xffd8) return jpegSize(view);
  if (bytes.length >= 8 && (view.getUint32(0) === 0x49492a00 || view.getUint32(0) === 0x4d4d002a))
    return tiffSize(view, view.getUint16(0) === 0x4949);
  return null;
}

function jpegSize(view: DataView): { width: number; height: number } | null {
  let at = 2;
  while (at + 9 < view.byteLength) {
    if (view.getUint8(at) !== 0xff) return null;
    const marker = view.getUint8(at + 1);
    // Start of frame (SOF0–SOF15, not DHT C4, JPG C8, DAC CC): its height and width.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return { height: view.getUint16(at + 5), width: view.getUint16(at + 7) };
    at += 2 + view.getUint16(at + 2);
  }
  return null;
}

function tiffSize(view: DataView, little: boolean): { width: number; height: number } | null {
  const ifd = view.getUint32(4, little);
  if (ifd + 2 > view.byteLength) return null;
  const entries = view.getUint16(ifd, little);
  let width = 0;
  let height = 0;
  for (let i = 0; i < entries && ifd + 2 + i * 12 + 12 <= view.byteLength; i++) {
    const entry = ifd + 2 + i * 12;
    const tag = view.getUint16(entry, little);
    // SHORT (3) or LONG (4), as TIFF allows for both.
    const value =
      view.getUint16(entry + 2, little) === 3 ? view.getUint16(entry + 8, little) : view.getUint32(entry + 8, little);
    if (tag === 256) width = value;
    else if (tag === 257) height = value;
  }
  return width > 0 && height > 0 ? { width, height } : null;
}
