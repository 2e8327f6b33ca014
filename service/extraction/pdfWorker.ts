// The program of the process that reads ONE PDF (pdf.ts starts one per document): pdfjs is imported here and
// nowhere else, so parsing a PDF never runs in the API's process. A child process, not a worker thread, because
// pdfjs keeps every decoded stream in buffers outside V8's heap, where a worker's resourceLimits do not reach: a
// 1 MB PDF inflating to 1 GiB took the API from 676 to 2,913 MB. Here the operating system bounds it: once pdfjs is
// loaded, the process limits its own address space (RLIMIT_AS, through util-linux's prlimit) to what it has
// reserved so far plus the memory budget, so a stream that inflates past it fails to allocate (or V8 aborts), and
// only this process ends. Measured on Node 24: V8 reserves ~1.5–2.7 GB of address space at start (a 512 MB code
// range, a 1 GB cppgc cage, malloc arenas), so a limit set from outside before start (`ulimit -v`) would have to
// guess that figure per machine, and too low a guess kills every start ("Failed to reserve virtual memory for
// CodeRange"); measured from inside, the budget means what it says.
//
// Protocol: argv = [memory budget in MiB, max pages, first page, OCR limits as JSON]; the PDF's bytes on stdin; messages to the parent
// over IPC ('ready', 'opened' with the page count and title, 'page' per page with its lines, 'result' last). The
// parent may send 'yield': the reading then stops after the page in progress and the result is a step (the page to
// go on from), so another PDF waiting for the reader gets its turn (pdf.ts); a later process reads on from that
// page. Each page's lines go to the parent as the page ends: a page still in progress long after a yield is
// stopped by killing this process (pdf.ts), and the pages read before it are not lost.
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
import { getDocument, VerbosityLevel, type PDFDocumentProxy, type PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { DocumentReadError } from '../errors.ts';
import { closeOcr, DEFAULT_OCR_LIMITS, type OcrLimits, type OcrPage } from './ocr.ts';
import { pageLines, type TextLine } from './pdfLayout.ts';
import { hasNoText, ocrPage } from './pdfOcr.ts';
import { pagesText } from './pdfReflow.ts';
import { structuredLines, type StructNode, type TaggedText } from './pdfStructure.ts';
import { isAllocationFailure, limitAddressSpace, readStdin, sendToParent } from './readerProcess.ts';

// pdfjs has no Web Worker in Node and runs its parser in this thread: handing it the parser module now spares the
// first document the import (~70 ms). The specifier is a variable because the module ships without types.
const PARSER_MODULE: string = 'pdfjs-dist/legacy/build/pdf.worker.mjs';
(globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = await import(PARSER_MODULE);

const CMAPS_DIR =
  path.join(path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'cmaps') + path.sep;

/** out_of_memory: an allocation failed under the memory budget (the process may also just end: pdf.ts). */
export type ExtractionFailure =
  | 'encrypted'
  | 'corrupt'
  | 'no_text'
  | 'too_many_pages'
  | 'out_of_memory'
  /** More pages without a text layer than OCR may read (pageCount: how many). */
  | 'too_many_scanned_pages'
  /** A scanned page's image over the pixel limit (detail: the message naming it). */
  | 'scan_too_large';

/** From the parent: stop after the page in progress (another PDF waits for the reader). */
export type ReaderCommand = { type: 'yield' };

/**
 * To the parent, in this order: ready (limited, reading stdin), opened (the page count is known; the title when the
 * reading starts at page 1), page… (each with its lines; `unreadable` when it broke; `reading` while one is slow),
 * result.
 */
export type ExtractionMessage =
  | { type: 'ready' }
  | { type: 'opened'; pages: number; title: string | null }
  /** confidence: the page had no text layer and was read by OCR (ocr.ts). */
  | { type: 'page'; done: number; total: number; lines: TextLine[]; unreadable: boolean; confidence?: number }
  /** Sent before the first OCR: the document's pages without a text layer (each adds to the time budget). */
  | { type: 'scanned'; pages: number }
  /** A page in progress: the characters of text it has given so far. */
  | { type: 'reading'; page: number; total: number; characters: number }
  | { type: 'result'; result: ExtractionResult };

export type ExtractionResult =
  /** title: the document information's Title, when it has one (else null). */
  | { ok: true; pageCount: number; pages: string[]; title: string | null; scanned: OcrPage[] }
  /**
   * A step that yielded, or one that began past page 1: pages firstPage … nextPage - 1 were read, their lines sent
   * with their 'page' messages (the text is made once every page is read: running headers are found across pages).
   */
  | { ok: 'step'; pageCount: number; nextPage: number }
  /** pageCount: only with too_many_pages. */
  | { ok: false; reason: ExtractionFailure; pageCount?: number; detail?: string };

/** What getTextContent returns per item: a text item, or (with no `str`) a marked-content marker. */
type ContentItem = Awaited<ReturnType<PDFPageProxy['getTextContent']>>['items'][number];

/**
 * Text items placed on the page, each with the marked content it was drawn in (its id, for the structure tree:
 * pdfStructure.ts, and whether it is an /Artifact).
 */
function placedItems(items: ContentItem[]): TaggedText[] {
  const placed: TaggedText[] = [];
  // The marked-content sequences open around the current item: their ids (undefined for one without) and tags.
  const open: Array<{ id: string | undefined; artifact: boolean }> = [];
  for (const item of items) {
    if (!('str' in item)) {
      if (item.type === 'endMarkedContent') open.pop();
      else if (item.type === 'beginMarkedContent' || item.type === 'beginMarkedContentProps')
        // pdfjs gives the tag too, though its types leave it out.
        open.push({ id: item.id ?? undefined, artifact: (item as { tag?: string }).tag === 'Artifact' });
      continue;
    }
    // Lines come from geometry (pdfLayout.ts) or the structure tree, so neither hasEOL nor the empty items pdfjs adds
    // as line-end marks are used: both follow the drawing order, which is not the reading order of a two-column page.
    if (item.str === '') continue;
    const [, , c, d, x, y] = item.transform as number[];
    // The font size is the length of the text space's vertical axis on the page (|d| when the text is upright).
    const size = Math.hypot(c, d) || item.height || 1;
    const mcid = open.findLast((mark) => mark.id !== undefined)?.id;
    const artifact = open.some((mark) => mark.artifact);
    placed.push({ text: item.str, x, y, width: item.width, size, mcid, artifact });
  }
  return placed;
}

/**
 * A buffer that could not be allocated under the address-space limit (pdfjs passes its message on, rewrapped).
 * Control-flow signal: caught in this file, which reports the PDF as out of memory to the parent.
 */
class OutOfMemory extends Error {}

/** How often a page in progress reports the characters read so far (a page can take seconds: issue 31). */
const READING_REPORT_MS = 250;

/**
 * A page's lines: from its structure tree when it has a usable one (pdfStructure.ts), else from the layout. Its
 * text items are streamed as pdfjs parses its content (what getTextContent gathers), so that a slow page says how
 * far it got: `reading(characters)` at most every READING_REPORT_MS.
 */
async function readPage(
  document: PDFDocumentProxy,
  pageNumber: number,
  reading: (characters: number) => void,
): Promise<TextLine[] | undefined> {
  try {
    const page = await document.getPage(pageNumber);
    const stream = page.streamTextContent({ includeMarkedContent: true }) as ReadableStream<{ items: ContentItem[] }>;
    const reader = stream.getReader();
    const items: ContentItem[] = [];
    let characters = 0;
    let reported = Date.now();
    for (let part = await reader.read(); !part.done; part = await reader.read()) {
      for (const item of part.value.items) {
        items.push(item);
        if ('str' in item) characters += item.str.length;
      }
      if (Date.now() - reported >= READING_REPORT_MS) {
        reported = Date.now();
        reading(characters);
      }
    }
    const tree = (await page.getStructTree()) as StructNode | null;
    page.cleanup();
    const placed = placedItems(items);
    return structuredLines(tree, placed) ?? pageLines(placed);
  } catch (error) {
    if (isAllocationFailure(error)) throw new OutOfMemory();
    // One broken page does not lose the others; a document whose every page breaks is reported as corrupt.
    return undefined;
  }
}

/** A scan over an OCR limit. Control-flow signal: caught in extractPdf below, which reports it to the parent. */
class ScanRefused extends Error {
  readonly failure: Extract<ExtractionResult, { ok: false }>;

  constructor(failure: Extract<ExtractionResult, { ok: false }>) {
    super(failure.reason);
    this.failure = failure;
  }
}

/** A reading's OCR: its limits, and the document's pages without a text layer once counted. */
interface OcrReading {
  limits: OcrLimits;
  scannedPages?: number;
}

/**
 * A page without a text layer, read by OCR (pdfOcr.ts). Before the first, the document's pages without text are
 * counted (a text-content pass, milliseconds a page): over the limit, the reading fails at once naming it; else the
 * parent hears the count and adds each page's OCR time to the budget. Null: nothing to read (a blank page, or one
 * that broke).
 */
async function readScannedPage(
  document: PDFDocumentProxy,
  pageNumber: number,
  ocr: OcrReading,
  send: (message: ExtractionMessage) => void,
): Promise<{ lines: TextLine[]; confidence: number } | null> {
  if (ocr.scannedPages === undefined) {
    let count = 0;
    for (let number = 1; number <= document.numPages; number++)
      if (await hasNoText(await document.getPage(number))) count += 1;
    ocr.scannedPages = count;
    if (count > ocr.limits.maxPages)
      throw new ScanRefused({ ok: false, reason: 'too_many_scanned_pages', pageCount: count });
    send({ type: 'scanned', pages: count });
  }
  try {
    const page = await document.getPage(pageNumber);
    const read = await ocrPage(page, ocr.limits);
    page.cleanup();
    return read;
  } catch (error) {
    if (error instanceof DocumentReadError)
      throw new ScanRefused({ ok: false, reason: 'scan_too_large', detail: error.message });
    if (isAllocationFailure(error)) throw new OutOfMemory();
    return null;
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

async function extractPdf(
  bytes: Uint8Array,
  maxPages: number,
  firstPage: number,
  ocr: OcrReading,
  yieldAsked: () => boolean,
  send: (message: ExtractionMessage) => void,
): Promise<ExtractionResult> {
  const loading = getDocument({
    data: bytes,
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
      if (isAllocationFailure(error)) throw new OutOfMemory();
      const name = (error as { name?: unknown } | null)?.name;
      return { ok: false, reason: name === 'PasswordException' ? 'encrypted' : 'corrupt' };
    }
    const total = document.numPages;
    // The title first: a step stopped inside a page (pdf.ts) has sent it already.
    const title = firstPage === 1 && total > 0 && total <= maxPages ? await documentTitle(document) : null;
    send({ type: 'opened', pages: total, title });
    if (total === 0) return { ok: false, reason: 'corrupt' };
    if (total > maxPages) return { ok: false, reason: 'too_many_pages', pageCount: total };

    const pages: TextLine[][] = [];
    const scanned: OcrPage[] = [];
    let anyText = false;
    let unreadable = 0;
    let pageNumber = firstPage;
    while (pageNumber <= total) {
      let read = await readPage(document, pageNumber, (characters) =>
        send({ type: 'reading', page: pageNumber, total, characters }),
      );
      let confidence: number | undefined;
      if (read?.length === 0) {
        const ocrRead = await readScannedPage(document, pageNumber, ocr, send);
        if (ocrRead) {
          ({ lines: read, confidence } = ocrRead);
          scanned.push({ page: pageNumber, confidence });
        }
      }
      if (read === undefined) unreadable += 1;
      const lines = read ?? [];
      anyText ||= lines.length > 0;
      pages.push(lines);
      send({ type: 'page', done: pageNumber, total, lines, unreadable: read === undefined, confidence });
      pageNumber += 1;
      if (yieldAsked()) break;
    }
    if (firstPage > 1 || pageNumber <= total) return { ok: 'step', pageCount: total, nextPage: pageNumber };
    if (unreadable === total) return { ok: false, reason: 'corrupt' };
    if (!anyText) return { ok: false, reason: 'no_text' };
    return { ok: true, pageCount: total, pages: pagesText(pages), title, scanned };
  } catch (error) {
    if (error instanceof ScanRefused) return error.failure;
    throw error;
  } finally {
    await loading.destroy();
  }
}

const send = (message: ExtractionMessage): Promise<void> => sendToParent(message);

/** pdfjs refuses a Buffer; a plain view of the same memory is no copy. */
const plainBytes = (whole: Buffer) => new Uint8Array(whole.buffer, whole.byteOffset, whole.byteLength);

const [budgetMiB, maxPages, firstPage] = process.argv.slice(2, 5).map(Number);
const ocrLimits: OcrLimits = process.argv[5] ? (JSON.parse(process.argv[5]) as OcrLimits) : DEFAULT_OCR_LIMITS;
limitAddressSpace(budgetMiB);
let yieldAsked = false;
process.on('message', (command: ReaderCommand) => {
  if (command.type === 'yield') yieldAsked = true;
});
await send({ type: 'ready' });
let result: ExtractionResult;
try {
  result = await extractPdf(
    plainBytes(await readStdin()),
    maxPages,
    firstPage || 1,
    { limits: ocrLimits },
    () => yieldAsked,
    (message) => void send(message),
  );
} catch (error) {
  if (!(error instanceof OutOfMemory) && !isAllocationFailure(error)) throw error;
  result = { ok: false, reason: 'out_of_memory' };
}
await send({ type: 'result', result });
// Tesseract's worker thread would keep this process alive.
await closeOcr();
process.disconnect();
