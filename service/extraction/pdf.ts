// Text from uploaded PDFs. Each PDF is read by a child process of its own (pdfWorker.ts), at most `workers` at once,
// the others waiting in line here; this module, on the event loop, only checks the size, pipes the bytes in and
// awaits pages. The child bounds its own memory with an operating-system limit (see pdfWorker.ts): a PDF over it
// ends that process only, and fails as too large. A PDF over its time budget has its process killed.
//
// The time budget scales with what is known before any page is read: the file's size and its page count (pdfjs
// reads the count from the page tree, which is cheap). The clock starts when the PDF's reader has loaded, not when
// the PDF is queued or its process spawned: a PDF waiting behind another upload has not used any of its time.
//
// A PDF is read in steps when others wait: once a PDF has held the reader for `stepMs` and another PDF waits for it
// (in this extractor's line, or as the caller says: steps.othersWaiting), its process stops after the page in
// progress and gives the reader up; the next step starts a new process at the following page. A page still in
// progress `stepMs` after that (one page can be built to cost the whole budget: issue 31 §4) is stopped: its process
// is killed, and the next step reads that page again from its start. So a small PDF waits for at most two steps of
// a big or slow one, not for all of it. The time budget is the PDF's, shared by its steps (reading time only, a
// stopped page's included), and the text is made once all pages are read (running headers are found across pages).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DocumentReadError, PdfExtractionError } from '../errors.ts';
import { DEFAULT_DOCUMENT_LIMITS, type DocumentLimits } from './documents.ts';
import type { DocumentMessage } from './documentWorker.ts';
import type { FileKind } from './fileKinds.ts';
import { DEFAULT_OCR_LIMITS, type OcrLimits, type OcrPage } from './ocr.ts';
import type { TextLine } from './pdfLayout.ts';
import { pagesText } from './pdfReflow.ts';
import type { ExtractionMessage, ExtractionResult, ReaderCommand } from './pdfWorker.ts';

export interface PdfLimits {
  maxBytes: number;
  maxPages: number;
  /** The ceiling of a PDF's time budget (see extractionBudgetMs). */
  timeoutMs: number;
  /** Memory a PDF's reading process may take beyond what Node and pdfjs hold once loaded (MiB). */
  maxMemoryMb: number;
  /** The least time a PDF reads before it gives the reader up to another PDF waiting for it (default 1 s). */
  stepMs?: number;
  /** The bounds of the other kinds' readers (KBQA_DOC_*); the defaults when absent. */
  documents?: DocumentLimits;
  /** Pages without a text layer, read by OCR in the reader (ocr.ts); each adds `pageMs` to the budget. */
  ocr?: OcrLimits;
}

/** How a caller that queues PDFs itself (the ingestion runner) takes part in the steps. */
export interface PdfSteps {
  /** Asked as pages finish: another PDF waits for a reader, beyond those waiting in this extractor. */
  othersWaiting?(): boolean;
  /** The reader was given up after a step; the reading goes on once this resolves (it rejects to stop). */
  paused?(): Promise<void>;
  /** A step ended: how long it held the reader (ms). */
  onStep?(heldMs: number): void;
}

const DEFAULT_STEP_MS = 1_000;

export interface ExtractedPdf {
  pageCount: number;
  /** Text per page, index 0 = page 1; '' for a page without text. */
  pages: string[];
  /** The PDF's own Title (its metadata), or null: the document's title then comes from its filename. */
  title: string | null;
  /** The pages read by OCR (no text layer), with Tesseract's confidence; [] for a PDF with text on every page. */
  scanned: OcrPage[];
  /**
   * Of a kind other than PDF: each "page" is a section of the reader's (documents.ts), and this its label ("Slide
   * 2", "Sheet rows, rows 2–21", a heading path), index 0 = pages[0].
   */
  labels?: string[];
}

/** Which file a reading is of: PDF when absent. */
export interface ReadFile {
  kind: FileKind;
  filename: string;
}

export interface PdfExtractor {
  /**
   * Each page's text in reading order. onPage(done, total) as the document opens (pages before the step's first
   * done) and as pages finish; onPage(done, total, characters) while page done + 1 is read, at most every 250 ms:
   * the characters of text it has given so far. Rejects with PdfExtractionError, or with an Error once `stop` is
   * aborted (the reader is killed).
   */
  extract(
    bytes: Uint8Array,
    onPage?: OnPage,
    stop?: AbortSignal,
    steps?: PdfSteps,
    file?: ReadFile,
  ): Promise<ExtractedPdf>;
  /** Ends the workers; extractions still running reject. */
  close(): Promise<void>;
  /** Read-only, for metrics: null while no worker pool has been started (a lazy extractor before its first PDF). */
  stats?(): PdfPoolStats | null;
}

/** See PdfExtractor.extract. */
export type OnPage = (done: number, total: number, characters?: number) => void;

export interface PdfPoolStats {
  /** PDFs read at once (one process each). */
  workers: number;
  /** PDFs being read now. */
  busy: number;
  /** PDFs waiting their turn. */
  queued: number;
}

function failure(result: Extract<ExtractionResult, { ok: false }>, limits: PdfLimits): PdfExtractionError {
  switch (result.reason) {
    case 'encrypted':
      return PdfExtractionError.encrypted();
    case 'corrupt':
      return PdfExtractionError.corrupt();
    case 'no_text':
      return PdfExtractionError.noText();
    case 'too_many_pages':
      return PdfExtractionError.tooManyPages(result.pageCount ?? 0, limits.maxPages);
    case 'out_of_memory':
      return PdfExtractionError.outOfMemory(limits.maxMemoryMb);
    case 'too_many_scanned_pages':
      return PdfExtractionError.tooManyScannedPages(result.pageCount ?? 0, ocrLimits(limits).maxPages);
    case 'scan_too_large':
      return PdfExtractionError.scanTooLarge(result.detail ?? 'a scanned page is too large to read');
  }
}

/**
 * The time a PDF may take: 5 s, plus 10 ms a page, plus 2 s a MiB of file, at most `timeoutMs`. Measured on this
 * 2-core machine, real pages take 1–10 ms each and a dense 1 MiB file under 2 s; a file whose pages cost far more
 * than that is built to: 2,000 page references to one 2 MB stream (17.7 KB) held a reader for the whole flat 120 s,
 * and now gets 25 s. Before the page count is known (the document is still opening), the budget of 0 pages.
 */
export function extractionBudgetMs(fileBytes: number, pages: number, timeoutMs: number): number {
  const budget = 5_000 + 10 * pages + (2_000 * fileBytes) / 1024 ** 2;
  // In whole seconds: the figure is shown to people ("took longer than 26 s").
  return Math.min(timeoutMs, Math.ceil(budget / 1_000) * 1_000);
}

function ocrLimits(limits: PdfLimits): OcrLimits {
  return limits.ocr ?? DEFAULT_OCR_LIMITS;
}

/** Loading Tesseract in a reader (its wasm and model): 1–3 s here, far more on a loaded machine. */
const OCR_START_MS = 15_000;

const WORKER_PROGRAM = fileURLToPath(new URL('./pdfWorker.ts', import.meta.url));
const DOCUMENT_PROGRAM = fileURLToPath(new URL('./documentWorker.ts', import.meta.url));
/**
 * The reader's Node flags. Without the WebAssembly trap handler, a Wasm memory reserves only what it uses, not
 * 8–10 GB of address space, which the limit would refuse (pdfjs's image decoders are Wasm).
 */
const WORKER_FLAGS = ['--disable-wasm-trap-handler'];
/** A reader loads in ~0.3 s (Node, pdfjs); one that has not after this is broken, whatever the PDF. */
const READER_START_MS = 30_000;
/** Enough of the reader's stderr to tell an out-of-memory end from another. */
const STDERR_KEPT = 4_096;

/** Thrown when the reader's process ends without a result, saying how. */
function ended(
  code: number | null,
  signal: NodeJS.Signals | null,
  stderr: string,
  limits: PdfLimits,
  ready: boolean,
): Error {
  // V8 aborts when its heap cannot grow under the limit ("Fatal process out of memory", "heap out of memory").
  if (ready && /out of memory|allocation failed/i.test(stderr))
    return PdfExtractionError.outOfMemory(limits.maxMemoryMb);
  const how = signal ? `signal ${signal}` : `code ${code}`;
  return new Error(
    `the PDF reader ${ready ? 'ended' : 'could not start'} (${how}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`,
  );
}

/** Where a step starts, what earlier steps used of the budget, and whether to stop early for another PDF. */
interface StepPlan {
  firstPage: number;
  spentMs: number;
  shouldYield: () => boolean;
  /**
   * How long a page may go on after the reader was asked to give way: `stepMs`, doubled each time the same page was
   * stopped in a row. So a page is never stopped for ever (two PDFs with pages slower than a step, on a loaded machine, would
   * otherwise stop each other's pages in turn until both ran out of time), and the reading thrown away is at most
   * about what the page costs.
   */
  graceMs: number;
}

/**
 * A step that stopped before the last page, or began past the first: its pages' lines (from firstPage on), those
 * that broke, the title (read by a step from page 1), and its reading time. pageCount is unknown (Infinity) for a
 * step stopped before the document was open.
 */
interface StepResult {
  ok: 'step';
  pageCount: number;
  nextPage: number;
  lines: TextLine[][];
  unreadable: number;
  title: string | null;
  scanned: OcrPage[];
  readMs: number;
  /** Ended by stopping the page in progress (its process killed). */
  stopped?: true;
}

/**
 * A page goes on at least this long after the reader was asked to give way, whatever `stepMs`: a new reader's
 * first page also pays pdfjs's warm-up, and with 300 ms steps on a loaded machine (load average 26) an 8-page PDF
 * whose reader was always asked to give way had its first page stopped in every step until its budget ran out.
 */
const MIN_GRACE_MS = 1_000;

/** How often a step past `stepMs` looks whether another PDF waits, while its page is in progress. */
const YIELD_CHECK_MS = 100;

/**
 * A reader child. No inherited environment: the reader parses hostile input and needs no secret of the service's.
 * Two malloc arenas: each reserves 64 MB of address space, which counts against the limit though it holds nothing.
 */
function spawnReader(program: string, args: string[]) {
  return spawn(process.execPath, [...WORKER_FLAGS, program, ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', MALLOC_ARENA_MAX: '2' },
    stdio: ['pipe', 'ignore', 'pipe', 'ipc'],
  });
}

/**
 * The time a file of another kind may take: 10 s, plus 4 s a MiB, at most `timeoutMs`. Its readers stream and
 * count (rows, slides, inflated bytes), so a hostile file ends at a bound well before; the clock ends one that
 * would not (a page of deeply nested HTML).
 */
export function documentBudgetMs(fileBytes: number, timeoutMs: number): number {
  return Math.min(timeoutMs, Math.ceil((10_000 + (4_000 * fileBytes) / 1024 ** 2) / 1_000) * 1_000);
}

/**
 * Reads one file of a kind other than PDF in a process of its own (documentWorker.ts), in one go: its readers are
 * fast next to a PDF's pages (docs/format-readers-research.md), so it takes no steps. Rejects with
 * DocumentReadError, or with an Error when the reader broke or `stop` was aborted.
 */
function readDocumentInChildProcess(
  bytes: Uint8Array,
  file: ReadFile,
  limits: PdfLimits,
  onPage: OnPage | undefined,
  stop: AbortSignal,
): Promise<ExtractedPdf> {
  return new Promise((resolve, reject) => {
    const documentLimits = limits.documents ?? DEFAULT_DOCUMENT_LIMITS;
    const child = spawnReader(DOCUMENT_PROGRAM, [
      String(limits.maxMemoryMb),
      file.kind,
      file.filename,
      JSON.stringify({ ...documentLimits, ocr: ocrLimits(limits) }),
    ]);
    let outcome: Error | ExtractedPdf | null = null;
    let stderr = '';
    let started = false;
    let timer = setTimeout(
      () => finish(new Error(`the reader did not start within ${READER_START_MS / 1000} s`)),
      READER_START_MS,
    );
    const finish = (value: Error | ExtractedPdf) => {
      outcome ??= value;
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    const onStop = () => finish(new Error('the reading was stopped (the extractor closed, or its job stopped)'));
    stop.addEventListener('abort', onStop, { once: true });
    child.stderr!.on('data', (part: Buffer) => (stderr = (stderr + part.toString('utf8')).slice(-STDERR_KEPT)));
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(bytes);
    child.on('message', (message: DocumentMessage) => {
      if (outcome) return;
      if (message.type === 'ready') {
        started = true;
        // An image is one page read by OCR: the engine's start and that page's budget on top (as a scanned PDF's).
        const ocrMs = file.kind === 'image' ? OCR_START_MS + ocrLimits(limits).pageMs : 0;
        const budgetMs = documentBudgetMs(bytes.byteLength, limits.timeoutMs) + ocrMs;
        clearTimeout(timer);
        timer = setTimeout(() => finish(DocumentReadError.timeout(budgetMs)), budgetMs);
      } else if (message.type === 'progress') {
        onPage?.(message.done, message.total);
      } else {
        const { result } = message;
        if (result.ok) {
          const { sections } = result;
          finish({
            pageCount: sections.length,
            pages: sections.map((section) => section.text),
            labels: sections.map((section) => section.label),
            title: null,
            scanned: result.scanned ?? [],
          });
        } else if (result.reason === 'out_of_memory') finish(DocumentReadError.outOfMemory(limits.maxMemoryMb));
        else finish(new DocumentReadError(result.reason, result.message));
      }
    });
    child.on('error', (error) => finish(error));
    child.on('close', (code, signal) => {
      stop.removeEventListener('abort', onStop);
      if (started && /out of memory|allocation failed/i.test(stderr))
        finish(DocumentReadError.outOfMemory(limits.maxMemoryMb));
      finish(ended(code, signal, stderr, limits, started));
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome!);
    });
  });
}

/** Reads (part of) one PDF in a process of its own; rejects with PdfExtractionError (or Error when the reader broke). */
function readInChildProcess(
  bytes: Uint8Array,
  limits: PdfLimits,
  onPage: OnPage | undefined,
  stop: AbortSignal,
  plan: StepPlan,
): Promise<ExtractedPdf | StepResult> {
  return new Promise((resolve, reject) => {
    const child = spawnReader(WORKER_PROGRAM, [
      String(limits.maxMemoryMb),
      String(limits.maxPages),
      String(plan.firstPage),
      JSON.stringify(ocrLimits(limits)),
    ]);
    // Until the reader has loaded, a guard against a start that hangs; then the PDF's own budget from that moment.
    let started = 0;
    let timer = setTimeout(
      () => finish(new Error(`the PDF reader did not start within ${READER_START_MS / 1000} s`)),
      READER_START_MS,
    );
    let outcome: Error | ExtractedPdf | StepResult | null = null;
    const stepMs = limits.stepMs ?? DEFAULT_STEP_MS;
    let stderr = '';
    // What this step has read so far: a step stopped inside a page keeps them, and reads on from the page after.
    const step: StepResult = {
      ok: 'step',
      pageCount: Number.POSITIVE_INFINITY,
      nextPage: plan.firstPage,
      lines: [],
      unreadable: 0,
      title: null,
      scanned: [],
      readMs: 0,
    };
    // Pages without a text layer (the reader says before its first OCR): each adds its OCR time to the budget.
    let scannedPages = 0;
    const readSoFar = (): StepResult => ({ ...step, readMs: Date.now() - started });
    let yielding: NodeJS.Timeout | undefined;
    let stopping: NodeJS.Timeout | undefined;
    const finish = (value: Error | ExtractedPdf | StepResult) => {
      outcome ??= value;
      clearTimeout(timer);
      clearInterval(yielding);
      clearTimeout(stopping);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    // Past stepMs, while another PDF waits: stop after the page in progress, and stepMs later stop that page too.
    const giveWay = () => {
      if (outcome || stopping || Date.now() - started < stepMs || !plan.shouldYield()) return;
      clearInterval(yielding);
      child.send({ type: 'yield' } satisfies ReaderCommand, (error) => void error);
      stopping = setTimeout(() => finish({ ...readSoFar(), stopped: true }), Math.max(plan.graceMs, MIN_GRACE_MS));
    };
    const budget = (pages: number) => {
      const budgetMs =
        extractionBudgetMs(bytes.byteLength, pages, limits.timeoutMs) +
        (scannedPages > 0 ? OCR_START_MS + scannedPages * ocrLimits(limits).pageMs : 0);
      clearTimeout(timer);
      // What earlier steps read counts: the budget is the whole PDF's.
      timer = setTimeout(
        () => finish(PdfExtractionError.timeout(budgetMs)),
        Math.max(0, started + budgetMs - plan.spentMs - Date.now()),
      );
    };
    const report = (done: number, total: number, characters?: number) => {
      try {
        onPage?.(done, total, characters);
      } catch (error) {
        finish(error as Error);
      }
    };
    const onStop = () => finish(new Error('the PDF reading was stopped (the extractor closed, or its job stopped)'));
    stop.addEventListener('abort', onStop, { once: true });
    child.stderr!.on('data', (part: Buffer) => (stderr = (stderr + part.toString('utf8')).slice(-STDERR_KEPT)));
    // A reader that ended early closes its stdin: the write fails, and the exit says why.
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(bytes);
    child.on('message', (message: ExtractionMessage) => {
      if (outcome) return;
      if (message.type === 'ready') {
        started = Date.now();
        budget(0);
        yielding = setInterval(giveWay, YIELD_CHECK_MS);
      } else if (message.type === 'opened') {
        step.pageCount = message.pages;
        step.title = message.title;
        budget(message.pages);
        // The pages are known (and none too many): "page 1 of m" while the first is read.
        if (message.pages > 0 && message.pages <= limits.maxPages) report(plan.firstPage - 1, message.pages);
      } else if (message.type === 'scanned') {
        scannedPages = message.pages;
        budget(step.pageCount);
      } else if (message.type === 'page') {
        step.lines.push(message.lines);
        if (message.confidence !== undefined) step.scanned.push({ page: message.done, confidence: message.confidence });
        if (message.unreadable) step.unreadable += 1;
        step.nextPage = message.done + 1;
        report(message.done, message.total);
      } else if (message.type === 'reading') {
        report(message.page - 1, message.total, message.characters);
      } else {
        const { result } = message;
        if (result.ok === 'step') finish({ ...readSoFar(), pageCount: result.pageCount, nextPage: result.nextPage });
        else
          finish(
            result.ok
              ? { pageCount: result.pageCount, pages: result.pages, title: result.title, scanned: result.scanned }
              : failure(result, limits),
          );
      }
    });
    child.on('error', (error) => finish(error));
    // 'close', not 'exit': every message and all of stderr have arrived by then.
    child.on('close', (code, signal) => {
      stop.removeEventListener('abort', onStop);
      finish(ended(code, signal, stderr, limits, started > 0));
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome!);
    });
  });
}

/** A PDF read in several steps: what the reader does at the end of a whole reading, on every page's lines. */
function assembled(lines: TextLine[][], unreadable: number, title: string | null, scanned: OcrPage[]): ExtractedPdf {
  if (unreadable === lines.length) throw PdfExtractionError.corrupt();
  if (lines.every((page) => page.length === 0)) throw PdfExtractionError.noText();
  return { pageCount: lines.length, pages: pagesText(lines), title, scanned };
}

/**
 * @param options.workers PDFs read at once (default 1: a reader may take its whole memory budget, and uploads are
 *   rare next to questions).
 */
export function createPdfExtractor(limits: PdfLimits, options: { workers?: number } = {}): PdfExtractor {
  const workers = Math.max(1, options.workers ?? 1);
  const closing = new AbortController();
  /** Those waiting for a reader, first come first served. */
  const waiting: (() => void)[] = [];
  let reading = 0;
  const inFlight = new Set<Promise<unknown>>();

  const turn = () =>
    new Promise<void>((resolve) => {
      if (reading < workers) {
        reading += 1;
        resolve();
      } else {
        waiting.push(resolve);
      }
    });
  const done = () => {
    const next = waiting.shift();
    if (next) next();
    else reading -= 1;
  };

  /** One step of a PDF: waits for a reader, reads from plan.firstPage until the end or a yield. */
  async function readStep(
    bytes: Uint8Array,
    onPage: OnPage | undefined,
    stop: AbortSignal | undefined,
    plan: StepPlan,
    steps?: PdfSteps,
  ) {
    await turn();
    const heldSince = Date.now();
    try {
      if (closing.signal.aborted) throw new Error('the PDF extractor is closed');
      stop?.throwIfAborted();
      const read = readInChildProcess(
        bytes,
        limits,
        onPage,
        stop ? AbortSignal.any([closing.signal, stop]) : closing.signal,
        plan,
      );
      inFlight.add(read);
      return await read.finally(() => inFlight.delete(read));
    } finally {
      done();
      steps?.onStep?.(Date.now() - heldSince);
    }
  }

  /** A file of another kind: one reading, in its turn. */
  async function readDocument(bytes: Uint8Array, file: ReadFile, onPage?: OnPage, stop?: AbortSignal) {
    if (bytes.byteLength > limits.maxBytes) throw DocumentReadError.tooLarge(bytes.byteLength, limits.maxBytes);
    await turn();
    try {
      if (closing.signal.aborted) throw new Error('the extractor is closed');
      stop?.throwIfAborted();
      const signal = stop ? AbortSignal.any([closing.signal, stop]) : closing.signal;
      const read = readDocumentInChildProcess(bytes, file, limits, onPage, signal);
      inFlight.add(read);
      return await read.finally(() => inFlight.delete(read));
    } finally {
      done();
    }
  }

  return {
    async extract(bytes, onPage, stop, steps, file) {
      if (closing.signal.aborted) throw new Error('the PDF extractor is closed');
      if (file && file.kind !== 'pdf') return readDocument(bytes, file, onPage, stop);
      if (bytes.byteLength > limits.maxBytes) throw PdfExtractionError.tooLarge(bytes.byteLength, limits.maxBytes);
      const shouldYield = () => waiting.length > 0 || (steps?.othersWaiting?.() ?? false);
      const read: TextLine[][] = [];
      let unreadable = 0;
      let title: string | null = null;
      const scanned: OcrPage[] = [];
      const stepMs = limits.stepMs ?? DEFAULT_STEP_MS;
      const plan: StepPlan = { firstPage: 1, spentMs: 0, shouldYield, graceMs: stepMs };
      let stops = 0;
      let stoppedPage = 0;
      for (;;) {
        const step = await readStep(bytes, onPage, stop, plan, steps);
        if (!('ok' in step)) return step;
        read.push(...step.lines);
        unreadable += step.unreadable;
        scanned.push(...step.scanned);
        title ??= step.title;
        plan.firstPage = step.nextPage;
        plan.spentMs += step.readMs;
        // A page stopped n times in a row gets 2^n steps the next time (the budget ends it long before 2^16).
        if (step.stopped) stops = step.nextPage === stoppedPage ? stops + 1 : 1;
        else stops = 0;
        stoppedPage = step.stopped ? step.nextPage : 0;
        plan.graceMs = stepMs * 2 ** Math.min(stops, 16);
        if (plan.firstPage > step.pageCount) return assembled(read, unreadable, title, scanned);
        await steps?.paused?.();
      }
    },
    async close() {
      closing.abort();
      // Those still waiting take a turn, see the extractor closed and reject; the readers are killed, and awaited.
      for (let next = waiting.shift(); next; next = waiting.shift()) {
        reading += 1;
        next();
      }
      await Promise.allSettled([...inFlight]);
    },
    stats: () => ({ workers, busy: reading, queued: waiting.length }),
  };
}
