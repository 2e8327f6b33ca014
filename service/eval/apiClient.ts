// What `kbqa eval` and the benchmarks ask of the kbqa Developer API, over the typed client generated from its OpenAPI
// description (clients/typescript/): every eval run exercises that client against the real API. This layer adds the
// retries the contract asks of clients (503 is transient: back off and try again; a 429 waits its Retry-After) and
// reads the Server-Timing header.
import {
  createKbqaClient as createTypedClient,
  KbqaApiError,
  type AnswerMessage,
  type Me,
  type QueryRequest,
  type QueryResponse,
} from '../../clients/typescript/index.ts';

export type { AnswerMessage, QueryResponse };

export interface KbqaClient {
  me(): Promise<Me>;
  listKnowledgeBases(): Promise<Array<{ id: string; name: string; role: string; document_count: number }>>;
  createKnowledgeBase(name: string, description?: string): Promise<{ id: string; name: string }>;
  listDocumentFilenames(knowledgeBaseId: string): Promise<Set<string>>;
  ingestDocument(
    knowledgeBaseId: string,
    filename: string,
    content: string,
  ): Promise<{ id: string; chunks: number; total_chunks: number }>;
  query(body: QueryRequest): Promise<{ body: QueryResponse; serverTiming: Record<string, number> }>;
  /** A new conversation over these KBs; its id. */
  startConversation(knowledgeBaseIds: string[], title: string): Promise<string>;
  /** The conversation's next turn, answered (not streamed). */
  askInConversation(
    conversationId: string,
    body: { query: string; include_chunks?: boolean },
  ): Promise<{ message: AnswerMessage }>;
}

function parseServerTiming(header: string | null): Record<string, number> {
  const timings: Record<string, number> = {};
  for (const part of (header ?? '').split(',')) {
    const match = /^\s*([\w-]+);dur=([\d.]+)/.exec(part);
    if (match) timings[match[1]] = Number(match[2]);
  }
  return timings;
}

interface CallResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

export function createKbqaClient(baseUrl: string, apiKey: string, options: { retries?: number } = {}): KbqaClient {
  const retries = options.retries ?? 3;
  const api = createTypedClient(baseUrl, apiKey);

  /** The call's data; a 503 is retried with backoff, a 429 after its Retry-After, any other failure thrown. */
  async function call<T>(send: () => Promise<CallResult<T>>): Promise<{ data: T; response: Response }> {
    for (let attempt = 0; ; attempt += 1) {
      const { data, error, response } = await send();
      if (error === undefined && data !== undefined) return { data, response };
      if (response.status === 503 && attempt < retries) {
        await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
        continue;
      }
      // A 429 names its wait (a full ingestion queue, the user's questions over their bound): waited, then again.
      const retryAfter = Number(response.headers.get('retry-after'));
      if (response.status === 429 && retryAfter > 0 && attempt < retries) {
        await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
        continue;
      }
      const envelope = (error as { error?: { code?: string; message?: string } } | undefined)?.error;
      throw new KbqaApiError(response.status, envelope?.code ?? 'unknown', envelope?.message ?? response.statusText);
    }
  }

  return {
    me: async () => (await call(() => api.GET('/api/v1/me'))).data,
    listKnowledgeBases: async () => (await call(() => api.GET('/api/v1/knowledge-bases'))).data.knowledge_bases,
    createKnowledgeBase: async (name, description) =>
      (await call(() => api.POST('/api/v1/knowledge-bases', { body: { name, description } }))).data.knowledge_base,
    async listDocumentFilenames(knowledgeBaseId) {
      const filenames = new Set<string>();
      let cursor: string | undefined;
      do {
        const { data: page } = await call(() =>
          api.GET('/api/v1/knowledge-bases/{id}/documents', {
            params: { path: { id: knowledgeBaseId }, query: { limit: 1000, cursor } },
          }),
        );
        for (const document of page.documents) filenames.add(document.filename);
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return filenames;
    },
    ingestDocument: async (knowledgeBaseId, filename, content) =>
      (await call(() => api.POST('/api/v1/documents', { body: { kb_id: knowledgeBaseId, filename, content } }))).data
        .document,
    async query(body) {
      const { data, response } = await call(() => api.POST('/api/v1/query', { body: { ...body, stream: false } }));
      return { body: data, serverTiming: parseServerTiming(response.headers.get('server-timing')) };
    },
    startConversation: async (knowledgeBaseIds, title) =>
      (await call(() => api.POST('/api/v1/conversations', { body: { knowledge_base_ids: knowledgeBaseIds, title } })))
        .data.conversation.id,
    askInConversation: async (conversationId, body) =>
      (
        await call(() =>
          api.POST('/api/v1/conversations/{id}/messages', {
            params: { path: { id: conversationId } },
            body: { ...body, stream: false },
          }),
        )
      ).data,
  };
}

/** Runs `work` over `items` with at most `concurrency` in flight; calls `onDone` after each. */
export async function forEachConcurrently<T>(
  items: T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
  onDone?: () => void,
): Promise<void> {
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
