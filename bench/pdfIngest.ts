// Ingest speed of a 100-page text PDF (extraction + embedding) against the same text ingested as plain text (issue 11).
//
// The PDF goes in the only way PDFs enter: the web app's upload (`POST /api/web/knowledge-bases/{kbId}/uploads`,
// multipart, session cookie + X-CSRF-Token), answered 202; the text through `POST /api/v1/documents` with
// `Prefer: respond-async`, answered 202. Both are then followed the same way, polling GET …/documents/{id} every
// POLL_MS until `ready` (`failed` fails the phase). Each ingest goes into a fresh KB, PDF and text alternate (the
// first of each pair alternating too), after one warm-up of each.
//
// Time "request → ready" is the document's `updated_at` when it went ready (the server's clock, stamped once its
// chunks are searchable) minus the moment the bench sent the request (same machine, same clock): it does not
// depend on the polling interval. The polled time (when the bench first SAW `ready`) is kept beside it. The time
// until embedding started is polled: the first poll that shows `processing` with `progress.total` > 0 (a PDF says
// `phase: 'embedding'` then; before it, `phase: 'extracting'` with the pages read), so it is exact to POLL_MS.
import { percentile, round } from './stats.ts';
import type { WebSession } from '../service/eval/webSession.ts';

export const POLL_MS = 50;
export const PDF_RATIO_TARGET = 1.15;

interface DocumentView {
  id: string;
  status: string;
  kind?: string;
  chunks?: number;
  total_chunks?: number;
  updated_at?: string;
  error?: string;
  progress?: { embedded: number; total: number; phase?: string; pages?: { done: number; total: number } };
}

// Signing in as a browser does is shared with `kbqa eval answers`.
export { signInToWebApp, type WebSession } from '../service/eval/webSession.ts';

export interface IngestTiming {
  kind: 'pdf' | 'text';
  knowledge_base_id: string;
  document_id: string;
  /** Request sent → ready, by the document's updated_at (server clock) — the judged figure. */
  ms: number;
  /** Request sent → the first poll that saw `ready`. */
  polled_ms: number;
  /** Request sent → the first poll that saw embedding under way (processing with progress.total > 0); null if never seen. */
  until_embedding_ms: number | null;
  /** The 202's own time (the upload / the JSON body received and the document queued). */
  accepted_ms: number;
  chunks: number;
  total_chunks: number;
  /** Pages the PDF's progress reported (PDFs only). */
  pages: number | null;
  warmup: boolean;
}

export interface PdfIngestSide {
  runs: number;
  median_ms: number;
  min_ms: number;
  max_ms: number;
  median_polled_ms: number;
  median_until_embedding_ms: number | null;
  median_accepted_ms: number;
  chunks: number;
  total_chunks: number;
  bytes: number;
  /** chunks ÷ median seconds. */
  chunks_per_s: number;
  /** median ms ÷ chunks. */
  ms_per_chunk: number;
}

export interface PdfIngestResult {
  method: string;
  pages: number;
  warmup: number;
  runs: IngestTiming[];
  pdf: PdfIngestSide;
  text: PdfIngestSide;
  /** median PDF ms ÷ median text ms: the judged figure (target ≤ 1.15). */
  ratio: number;
  /** PDF ms per chunk ÷ text ms per chunk (the chunk counts differ: PDF chunks never cross a page). */
  per_chunk_ratio: number;
  /**
   * Median time until embedding started, PDF − text: what reading the PDF (upload into GridFS, extraction in the
   * worker, splitting page by page) adds before the embedder starts, and its share of the PDF's median time.
   */
  extraction_ms: number | null;
  extraction_share: number | null;
}

const median = (values: number[]) => percentile(values, 50);

async function readJson<T>(response: Response): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`${response.status}: not JSON: ${text.slice(0, 200)}`);
  }
}

/** Polls GET `documentUrl` until the document is ready; failed (or a timeout) throws. */
async function followDocument(
  documentUrl: string,
  headers: Record<string, string>,
  first: DocumentView,
  started: number,
  timeoutMs: number,
): Promise<{ document: DocumentView; polledMs: number; untilEmbeddingMs: number | null; pages: number | null }> {
  let document = first;
  let untilEmbeddingMs: number | null = null;
  let pages: number | null = null;
  while (true) {
    if (document.status === 'failed')
      throw new Error(`document ${document.id} failed: ${document.error ?? 'no error given'}`);
    if (document.progress?.pages) pages = document.progress.pages.total;
    if (untilEmbeddingMs === null && document.status === 'processing' && (document.progress?.total ?? 0) > 0)
      untilEmbeddingMs = Date.now() - started;
    if (document.status === 'ready') return { document, polledMs: Date.now() - started, untilEmbeddingMs, pages };
    if (Date.now() - started > timeoutMs)
      throw new Error(`document ${document.id} still ${document.status} after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const response = await fetch(documentUrl, { headers });
    const body = await readJson<{ document?: DocumentView; error?: { message?: string } }>(response);
    if (response.status !== 200 || !body.document)
      throw new Error(`GET ${documentUrl} answered ${response.status}: ${body.error?.message ?? ''}`);
    document = body.document;
  }
}

function timing(
  kind: IngestTiming['kind'],
  knowledgeBaseId: string,
  started: number,
  acceptedMs: number,
  followed: Awaited<ReturnType<typeof followDocument>>,
  warmup: boolean,
): IngestTiming {
  const { document } = followed;
  const stamped = document.updated_at ? Date.parse(document.updated_at) - started : Number.NaN;
  // The server's stamp, unless it is not believable (then what the polling saw).
  const ms = Number.isFinite(stamped) && stamped > 0 && stamped <= followed.polledMs ? stamped : followed.polledMs;
  return {
    kind,
    knowledge_base_id: knowledgeBaseId,
    document_id: document.id,
    ms,
    polled_ms: followed.polledMs,
    until_embedding_ms: followed.untilEmbeddingMs,
    accepted_ms: acceptedMs,
    chunks: document.chunks ?? 0,
    total_chunks: document.total_chunks ?? 0,
    pages: followed.pages,
    warmup,
  };
}

async function ingestPdf(
  url: string,
  session: WebSession,
  knowledgeBaseId: string,
  pdf: Uint8Array,
  timeoutMs: number,
  warmup: boolean,
): Promise<IngestTiming> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), 'same.pdf');
  const headers = { cookie: session.cookie, 'x-csrf-token': session.csrfToken };
  const started = Date.now();
  const response = await fetch(`${url}/api/web/knowledge-bases/${knowledgeBaseId}/uploads`, {
    method: 'POST',
    headers,
    body: form,
  });
  const acceptedMs = Date.now() - started;
  const body = await readJson<{ document?: DocumentView; error?: { message?: string } }>(response);
  if (response.status !== 202 || !body.document)
    throw new Error(
      `PDF upload answered ${response.status}: ${body.error?.message ?? JSON.stringify(body).slice(0, 200)}`,
    );
  const followed = await followDocument(
    `${url}/api/web/documents/${body.document.id}`,
    { cookie: session.cookie },
    body.document,
    started,
    timeoutMs,
  );
  return timing('pdf', knowledgeBaseId, started, acceptedMs, followed, warmup);
}

async function ingestText(
  url: string,
  apiKey: string,
  knowledgeBaseId: string,
  content: string,
  timeoutMs: number,
  warmup: boolean,
): Promise<IngestTiming> {
  const headers = { authorization: `Bearer ${apiKey}` };
  const started = Date.now();
  const response = await fetch(`${url}/api/v1/documents`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', prefer: 'respond-async' },
    body: JSON.stringify({ kb_id: knowledgeBaseId, filename: 'same.txt', content }),
  });
  const acceptedMs = Date.now() - started;
  const body = await readJson<{ document?: DocumentView; error?: { message?: string } }>(response);
  if (response.status !== 202 || !body.document)
    throw new Error(
      `POST /api/v1/documents answered ${response.status}: ${body.error?.message ?? JSON.stringify(body).slice(0, 200)}`,
    );
  const followed = await followDocument(
    `${url}/api/v1/documents/${body.document.id}`,
    headers,
    body.document,
    started,
    timeoutMs,
  );
  return timing('text', knowledgeBaseId, started, acceptedMs, followed, warmup);
}

function side(timings: IngestTiming[], bytes: number): PdfIngestSide {
  const ms = timings.map((run) => run.ms);
  const medianMs = median(ms);
  const untilEmbedding = timings
    .map((run) => run.until_embedding_ms)
    .filter((value): value is number => value !== null);
  // The same document every run: the counts are the same (the last run's, should they ever differ).
  const last = timings[timings.length - 1];
  return {
    runs: timings.length,
    median_ms: round(medianMs, 0),
    min_ms: Math.min(...ms),
    max_ms: Math.max(...ms),
    median_polled_ms: round(median(timings.map((run) => run.polled_ms)), 0),
    median_until_embedding_ms: untilEmbedding.length > 0 ? round(median(untilEmbedding), 0) : null,
    median_accepted_ms: round(median(timings.map((run) => run.accepted_ms)), 0),
    chunks: last.chunks,
    total_chunks: last.total_chunks,
    bytes,
    chunks_per_s: round(last.chunks / (medianMs / 1000), 1),
    ms_per_chunk: round(medianMs / last.chunks, 2),
  };
}

export async function comparePdfAndText(options: {
  url: string;
  apiKey: string;
  session: WebSession;
  fixture: { pdf: Uint8Array; text: string; pages: string[] };
  /** A fresh KB (the caller records it for clean-up). */
  newKnowledgeBase: (name: string) => Promise<string>;
  warmup: number;
  runs: number;
  timeoutMs?: number;
  log: (message: string) => void;
}): Promise<PdfIngestResult> {
  const { url, apiKey, session, fixture, log } = options;
  const timeoutMs = options.timeoutMs ?? 10 * 60_000;
  const all: IngestTiming[] = [];
  const once = async (kind: IngestTiming['kind'], label: string, warmup: boolean) => {
    const knowledgeBaseId = await options.newKnowledgeBase(`bench-pdf-${label}`);
    const run =
      kind === 'pdf'
        ? await ingestPdf(url, session, knowledgeBaseId, fixture.pdf, timeoutMs, warmup)
        : await ingestText(url, apiKey, knowledgeBaseId, fixture.text, timeoutMs, warmup);
    all.push(run);
    log(
      `  ${label}: ${kind} ready in ${run.ms} ms (polled ${run.polled_ms}; embedding from ${run.until_embedding_ms ?? 'n/a'} ms; 202 after ${run.accepted_ms} ms), ` +
        `${run.chunks} chunks${run.pages !== null ? `, ${run.pages} pages` : ''}`,
    );
  };
  for (let index = 0; index < options.warmup; index += 1) {
    await once('pdf', `warm-up ${index + 1} pdf`, true);
    await once('text', `warm-up ${index + 1} text`, true);
  }
  for (let index = 0; index < options.runs; index += 1) {
    // Alternating which goes first, so neither always follows the other.
    const order: Array<IngestTiming['kind']> = index % 2 === 0 ? ['pdf', 'text'] : ['text', 'pdf'];
    for (const kind of order) await once(kind, `run ${index + 1} ${kind}`, false);
  }
  const measured = all.filter((run) => !run.warmup);
  const pdf = side(
    measured.filter((run) => run.kind === 'pdf'),
    fixture.pdf.byteLength,
  );
  const text = side(
    measured.filter((run) => run.kind === 'text'),
    Buffer.byteLength(fixture.text, 'utf8'),
  );
  const extraction =
    pdf.median_until_embedding_ms !== null && text.median_until_embedding_ms !== null
      ? pdf.median_until_embedding_ms - text.median_until_embedding_ms
      : null;
  const method =
    `hundredPageTextPdf() (test/fixtures/pdfs.ts): ${fixture.pages.length} pages, ${(fixture.pdf.byteLength / 1024).toFixed(0)} KiB as PDF, ` +
    `${(Buffer.byteLength(fixture.text, 'utf8') / 1024).toFixed(0)} KiB as plain text (the same paragraphs). The PDF through the web app's upload ` +
    '(POST /api/web/knowledge-bases/{id}/uploads, multipart, session cookie + X-CSRF-Token, 202), the text through POST /api/v1/documents ' +
    `with Prefer: respond-async (202); both followed by GET …/documents/{id} every ${POLL_MS} ms until ready. Each ingest into a fresh KB; ` +
    `${options.warmup} warm-up of each, then ${options.runs} of each alternating (the first of a pair alternating too). Time = request sent → ` +
    'the document\'s updated_at when it went ready (server clock: its chunks searchable), not quantised by the polling; "until embedding" = ' +
    'the first poll that showed processing with chunks to embed (a PDF: phase embedding, after extracting).';
  return {
    method,
    pages: fixture.pages.length,
    warmup: options.warmup,
    runs: all,
    pdf,
    text,
    ratio: round(pdf.median_ms / text.median_ms, 3),
    per_chunk_ratio: round(pdf.ms_per_chunk / text.ms_per_chunk, 3),
    extraction_ms: extraction,
    extraction_share: extraction !== null ? round(extraction / pdf.median_ms, 3) : null,
  };
}
