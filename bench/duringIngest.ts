// Query latency while a big document ingests: the same sequential queries idle, then while one document of ~5 MiB
// (corpus texts joined by blank lines) goes through `POST /api/v1/documents` with `Prefer: respond-async`, for as
// long as its status is queued or processing. The requests are plain fetch calls: the shared API client
// (service/eval/apiClient.ts) waits for 201 and has no GET of a document.
import { round } from './stats.ts';
import { runSequentialQueries, type SequentialResult } from './sequential.ts';

export interface BigDocument {
  filename: string;
  content: string;
  bytes: number;
  /** Corpus documents it was made of. */
  sources: number;
}

/** Corpus texts joined by blank lines, as many as fit in `maxBytes` of UTF-8 (cycling if the corpus is smaller). */
export function bigDocument(texts: string[], maxBytes: number): BigDocument {
  const separator = '\n\n';
  const parts: string[] = [];
  let bytes = 0;
  for (let index = 0; texts.length > 0 && index < texts.length * 16; index += 1) {
    const text = texts[index % texts.length];
    const size = Buffer.byteLength(text, 'utf8') + (parts.length > 0 ? separator.length : 0);
    if (bytes + size > maxBytes) break;
    parts.push(text);
    bytes += size;
  }
  return { filename: `bench-big-${bytes}-bytes.txt`, content: parts.join(separator), bytes, sources: parts.length };
}

export interface DuringIngestResult {
  knowledge_base_id: string;
  document: {
    id: string;
    bytes: number;
    sources: number;
    status: string;
    error?: string;
    chunks: number;
    /** From the POST until the status was seen ready (polled every POLL_MS). */
    seconds: number;
    chunks_per_s: number;
  };
  idle: SequentialResult;
  during: SequentialResult;
  /** p95 during ÷ p95 idle. */
  p95_ratio: number;
  p50_ratio: number;
}

const POLL_MS = 250;

interface DocumentView {
  id: string;
  status: string;
  chunks?: number;
  total_chunks?: number;
  error?: string;
}

async function apiCall<T>(
  url: string,
  apiKey: string,
  method: 'GET' | 'POST',
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T }> {
  const response = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: (await response.json()) as T };
}

export async function queriesDuringIngest(options: {
  url: string;
  apiKey: string;
  knowledgeBaseId: string;
  document: BigDocument;
  bodies: Array<Record<string, unknown>>;
  timeoutMs?: number;
  log: (message: string) => void;
}): Promise<DuringIngestResult> {
  const idle = await runSequentialQueries({
    url: options.url,
    apiKey: options.apiKey,
    bodies: options.bodies,
    warmup: 10,
  });
  options.log(`  idle: ${idle.queries} queries, p50 ${idle.latency.p50_ms} ms, p95 ${idle.latency.p95_ms} ms`);

  const started = performance.now();
  const created = await apiCall<{ document?: DocumentView; error?: { message: string } }>(
    `${options.url}/api/v1/documents`,
    options.apiKey,
    'POST',
    { kb_id: options.knowledgeBaseId, filename: options.document.filename, content: options.document.content },
    { prefer: 'respond-async' },
  );
  if (created.status !== 202 || !created.body.document) {
    throw new Error(
      `POST /api/v1/documents with Prefer: respond-async answered ${created.status}: ${created.body.error?.message ?? JSON.stringify(created.body).slice(0, 200)}`,
    );
  }
  const documentId = created.body.document.id;
  options.log(
    `  ${options.document.bytes} bytes queued as document ${documentId} (202 after ${round(performance.now() - started, 0)} ms)`,
  );

  let latest: DocumentView = created.body.document;
  let finishedAt = 0;
  const inFlight = () => latest.status === 'queued' || latest.status === 'processing';
  const deadline = started + (options.timeoutMs ?? 20 * 60_000);
  const poller = (async () => {
    while (inFlight()) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      const polled = await apiCall<{ document: DocumentView }>(
        `${options.url}/api/v1/documents/${documentId}`,
        options.apiKey,
        'GET',
      );
      if (polled.status === 200) latest = polled.body.document;
      if (!inFlight()) finishedAt = performance.now();
      else if (performance.now() > deadline)
        throw new Error(
          `document ${documentId} still ${latest.status} after ${(options.timeoutMs ?? 20 * 60_000) / 1000} s`,
        );
    }
    if (finishedAt === 0) finishedAt = performance.now();
  })();
  let pollFailure: unknown = null;
  poller.catch((error: unknown) => {
    pollFailure = error;
  });
  const during = await runSequentialQueries({
    url: options.url,
    apiKey: options.apiKey,
    bodies: options.bodies,
    warmup: 0,
    continueWhile: () => inFlight() && pollFailure === null,
  });
  await poller;
  const seconds = (finishedAt - started) / 1000;
  const chunks = latest.chunks ?? 0;
  options.log(
    `  document ${latest.status}: ${chunks} chunks in ${round(seconds, 1)} s; ${during.queries} queries meanwhile, p50 ${during.latency.p50_ms} ms, p95 ${during.latency.p95_ms} ms`,
  );
  return {
    knowledge_base_id: options.knowledgeBaseId,
    document: {
      id: documentId,
      bytes: options.document.bytes,
      sources: options.document.sources,
      status: latest.status,
      ...(latest.error ? { error: latest.error } : {}),
      chunks,
      seconds: round(seconds, 2),
      chunks_per_s: round(chunks / seconds, 1),
    },
    idle,
    during,
    p95_ratio: round(during.latency.p95_ms / idle.latency.p95_ms, 3),
    p50_ratio: round(during.latency.p50_ms / idle.latency.p50_ms, 3),
  };
}
