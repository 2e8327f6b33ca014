// A small client of the kbqa Developer API, used by `kbqa eval` and the benchmarks (they go through the real API).

export class ApiCallError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
  }
}

export interface QueryResponse {
  answer: string;
  citations: Array<{ document_id: string; title: string; snippet: string; similarity: number }>;
  model: string;
  knowledge_base_ids: string[];
  chunks?: Array<{ id: string; document_id: string; title: string; filename: string; score: number; similarity: number; bm25_rank: number | null; vector_rank: number | null }>;
}

export interface KbqaClient {
  me(): Promise<{ id: string; email: string }>;
  listKnowledgeBases(): Promise<Array<{ id: string; name: string; role: string; document_count: number }>>;
  createKnowledgeBase(name: string, description?: string): Promise<{ id: string; name: string }>;
  listDocumentFilenames(knowledgeBaseId: string): Promise<Set<string>>;
  ingestDocument(knowledgeBaseId: string, filename: string, content: string): Promise<{ id: string; chunks: number; total_chunks: number }>;
  query(body: Record<string, unknown>): Promise<{ body: QueryResponse; serverTiming: Record<string, number> }>;
}

function parseServerTiming(header: string | null): Record<string, number> {
  const timings: Record<string, number> = {};
  for (const part of (header ?? '').split(',')) {
    const match = /^\s*([\w-]+);dur=([\d.]+)/.exec(part);
    if (match) timings[match[1]] = Number(match[2]);
  }
  return timings;
}

export function createKbqaClient(baseUrl: string, apiKey: string, options: { retries?: number } = {}): KbqaClient {
  const retries = options.retries ?? 3;
  async function call<T>(method: string, path: string, body?: unknown): Promise<{ body: T; headers: Headers }> {
    for (let attempt = 0; ; attempt += 1) {
      const response = await fetch(`${baseUrl.replace(/\/$/, '')}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      const parsed = (await response.json()) as T & { error?: { code: string; message: string } };
      if (response.ok) return { body: parsed, headers: response.headers };
      // 503s are transient by contract: retry with backoff; anything else is the caller's problem.
      if (response.status === 503 && attempt < retries) {
        await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
        continue;
      }
      throw new ApiCallError(response.status, parsed.error?.code ?? 'unknown', parsed.error?.message ?? response.statusText);
    }
  }
  return {
    me: async () => (await call<{ id: string; email: string }>('GET', '/me')).body,
    listKnowledgeBases: async () =>
      (await call<{ knowledge_bases: Array<{ id: string; name: string; role: string; document_count: number }> }>('GET', '/knowledge-bases')).body
        .knowledge_bases,
    createKnowledgeBase: async (name, description) =>
      (await call<{ knowledge_base: { id: string; name: string } }>('POST', '/knowledge-bases', { name, description })).body.knowledge_base,
    async listDocumentFilenames(knowledgeBaseId) {
      const filenames = new Set<string>();
      let cursor: string | null = null;
      do {
        const query: string = `?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const page: { documents: Array<{ filename: string }>; next_cursor: string | null } = (
          await call<{ documents: Array<{ filename: string }>; next_cursor: string | null }>('GET', `/knowledge-bases/${knowledgeBaseId}/documents${query}`)
        ).body;
        for (const document of page.documents) filenames.add(document.filename);
        cursor = page.next_cursor;
      } while (cursor);
      return filenames;
    },
    ingestDocument: async (knowledgeBaseId, filename, content) =>
      (await call<{ document: { id: string; chunks: number; total_chunks: number } }>('POST', '/documents', { kb_id: knowledgeBaseId, filename, content }))
        .body.document,
    async query(body) {
      const { body: response, headers } = await call<QueryResponse>('POST', '/query', body);
      return { body: response, serverTiming: parseServerTiming(headers.get('server-timing')) };
    },
  };
}

/** Runs `work` over `items` with at most `concurrency` in flight; calls `onDone` after each. */
export async function forEachConcurrently<T>(items: T[], concurrency: number, work: (item: T, index: number) => Promise<void>, onDone?: () => void): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      await work(items[index], index);
      onDone?.();
    }
  });
  await Promise.all(workers);
}
