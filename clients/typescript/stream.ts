// A streamed answer (`"stream": true` on POST /api/v1/query) as typed events, read with eventsource-parser: the
// events and their data are the spec's (`retrieval`, `delta`, `done`, `error`; see the operation in /docs).
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { KbqaApiError, type KbqaClient, type QueryRequest } from './index.ts';
import type { components } from './schema.d.ts';

type Schemas = components['schemas'];

export type QueryStreamEvent =
  | { event: 'retrieval'; data: Schemas['QueryStreamRetrieval'] }
  | { event: 'delta'; data: Schemas['QueryStreamDelta'] }
  | { event: 'done'; data: Schemas['QueryResponse'] }
  | { event: 'error'; data: Schemas['Error'] };

const EVENT_NAMES = new Set(['retrieval', 'delta', 'done', 'error']);

/**
 * The events of one streamed answer, in order, as they arrive. A failure before the stream starts (a bad body, a KB
 * the key cannot reach, an outage) throws a KbqaApiError; one after it is the last event, `error`. Abort `signal` to
 * stop: the server then cancels the model call.
 */
export async function* streamQuery(
  client: KbqaClient,
  body: Omit<QueryRequest, 'stream'>,
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<QueryStreamEvent> {
  const { data, error, response } = await client.POST('/api/v1/query', {
    body: { ...body, stream: true } as QueryRequest,
    parseAs: 'stream',
    signal: options.signal,
  });
  if (error !== undefined || !data) {
    const envelope = (error as Partial<Schemas['Error']> | undefined)?.error;
    throw new KbqaApiError(response.status, envelope?.code ?? 'unknown', envelope?.message ?? response.statusText);
  }
  const arrived: QueryStreamEvent[] = [];
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      // Events this client does not know yet are skipped, as the SSE format intends.
      if (message.event && EVENT_NAMES.has(message.event))
        arrived.push({ event: message.event, data: JSON.parse(message.data) } as QueryStreamEvent);
    },
  });
  const reader = (data as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let finished = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        finished = true;
        break;
      }
      // stream: true keeps a character split across two chunks whole.
      parser.feed(decoder.decode(value, { stream: true }));
      while (arrived.length > 0) yield arrived.shift() as QueryStreamEvent;
    }
  } finally {
    // A consumer that stops early (break, an exception) closes the connection: the server then cancels the model call.
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
