// Runs in a worker thread of the PDF extractor (pdf.ts): pdfjs is imported here and nowhere else, so parsing a
// PDF never runs on the API's event loop, and a document that hangs pdfjs can be stopped by ending the thread.
//
// DOMMatrix: no shim, and no import of @napi-rs/canvas of ours. Text extraction needs neither DOMMatrix nor
// Path2D or ImageData: with the canvas package blocked and no polyfill, pdfjs 6.5 returned identical text items
// for every fixture. A shim would save nothing either, because pdfjs's Node build requires @napi-rs/canvas at
// import whenever it is installed (≈15 MB and 50–90 ms per worker start, outside the time limit) and only warns
// where it is missing.
//
// Options: the font-face and system-font paths are off (no DOM to load fonts into, and no reading of the host's
// fonts). cMapUrl is given because text needs it: a CJK font with a predefined CMap (UniJIS-UCS2-H …) yields no
// text at all without it. standardFontDataUrl is not: those files are glyph outlines for rendering, and text from
// the 14 standard fonts was the same without them. (pdfjs 6 has no isEvalSupported option left: it no longer
// compiles font programs with eval.)
import { createRequire } from 'node:module';
import path from 'node:path';
import type { MessagePort } from 'node:worker_threads';
import { getDocument, VerbosityLevel, type PDFDocumentProxy, type PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { pageLines, type PlacedText, type TextLine } from './pdfLayout.ts';
import { pagesText } from './pdfReflow.ts';

// pdfjs has no Web Worker in Node and runs its parser in this thread: handing it the parser module now spares the
// first document the import (~70 ms). The specifier is a variable because the module ships without types.
const PARSER_MODULE: string = 'pdfjs-dist/legacy/build/pdf.worker.mjs';
(globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = await import(PARSER_MODULE);

const CMAPS_DIR = path.join(path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'cmaps') + path.sep;

export type ExtractionFailure = 'encrypted' | 'corrupt' | 'no_text' | 'too_many_pages';

export interface ExtractionTask {
  bytes: Uint8Array;
  maxPages: number;
  /** Progress back to the caller: 'started' when this thread takes the task, 'page' per page, 'end' last. */
  progress: MessagePort;
}

export type ProgressMessage = { type: 'started' } | { type: 'page'; done: number; total: number } | { type: 'end' };

export type ExtractionResult =
  /** title: the document information's Title, when it has one (else null). */
  | { ok: true; pageCount: number; pages: string[]; title: string | null }
  /** pageCount: only with too_many_pages. */
  | { ok: false; reason: ExtractionFailure; pageCount?: number };

/** What getTextContent returns per item: a text item, or (with no `str`) a marked-content marker. */
type ContentItem = Awaited<ReturnType<PDFPageProxy['getTextContent']>>['items'][number];

function placedItems(items: ContentItem[]): PlacedText[] {
  const placed: PlacedText[] = [];
  for (const item of items) {
    // Lines come from geometry (pdfLayout.ts), so neither hasEOL nor the empty items pdfjs adds as line-end marks
    // are used: both follow the drawing order, which is not the reading order of a two-column page.
    if (!('str' in item) || item.str === '') continue;
    const [, , c, d, x, y] = item.transform as number[];
    // The font size is the length of the text space's vertical axis on the page (|d| when the text is upright).
    const size = Math.hypot(c, d) || item.height || 1;
    placed.push({ text: item.str, x, y, width: item.width, size });
  }
  return placed;
}

async function readPage(document: PDFDocumentProxy, pageNumber: number): Promise<PlacedText[] | undefined> {
  try {
    const page = await document.getPage(pageNumber);
    const content = await page.getTextContent();
    page.cleanup();
    return placedItems(content.items);
  } catch {
    // One broken page does not lose the others; a document whose every page breaks is reported as corrupt.
    return undefined;
  }
}

/** Longer than this, a Title is not a title (some tools put a paragraph there). */
const MAX_TITLE_LENGTH = 300;

/** The PDF's Title (document information dictionary), whitespace collapsed; null when absent, blank or too long. */
async function documentTitle(document: PDFDocumentProxy): Promise<string | null> {
  try {
    const { info } = await document.getMetadata();
    const title = (info as { Title?: unknown } | null)?.Title;
    if (typeof title !== 'string') return null;
    const collapsed = title.split(/\s+/).filter(Boolean).join(' ');
    return collapsed !== '' && collapsed.length <= MAX_TITLE_LENGTH ? collapsed : null;
  } catch {
    return null;
  }
}

export default async function extractPdf(task: ExtractionTask): Promise<ExtractionResult> {
  const { progress } = task;
  progress.postMessage({ type: 'started' } satisfies ProgressMessage);
  const loading = getDocument({
    data: task.bytes,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: VerbosityLevel.ERRORS,
    cMapUrl: CMAPS_DIR,
    cMapPacked: true,
  });
  try {
    let document: PDFDocumentProxy;
    try {
      document = await loading.promise;
    } catch (error) {
      const name = (error as { name?: unknown } | null)?.name;
      return { ok: false, reason: name === 'PasswordException' ? 'encrypted' : 'corrupt' };
    }
    const total = document.numPages;
    if (total === 0) return { ok: false, reason: 'corrupt' };
    if (total > task.maxPages) return { ok: false, reason: 'too_many_pages', pageCount: total };

    const pages: TextLine[][] = [];
    let anyText = false;
    let unreadable = 0;
    for (let pageNumber = 1; pageNumber <= total; pageNumber += 1) {
      const items = await readPage(document, pageNumber);
      if (items === undefined) unreadable += 1;
      const lines = pageLines(items ?? []);
      anyText ||= lines.length > 0;
      pages.push(lines);
      progress.postMessage({ type: 'page', done: pageNumber, total } satisfies ProgressMessage);
    }
    if (unreadable === total) return { ok: false, reason: 'corrupt' };
    if (!anyText) return { ok: false, reason: 'no_text' };
    return { ok: true, pageCount: total, pages: pagesText(pages), title: await documentTitle(document) };
  } finally {
    await loading.destroy();
    progress.postMessage({ type: 'end' } satisfies ProgressMessage);
    progress.close();
  }
}
