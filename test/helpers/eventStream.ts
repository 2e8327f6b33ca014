// A client of the streamed query (Server-Sent Events) with a real SSE parser (eventsource-parser) over fetch's body:
// a JSON answer (an error before the stream started) is parsed as JSON, an event stream as events, each event's
// data as JSON.
import { EventSourceParserStream } from 'eventsource-parser/stream';

export interface StreamedEvent {
  event: string;
  data: any;
}

export interface StreamResponse {
  status: number;
  headers: Headers;
  /** The JSON body, when the answer is not an event stream. */
  json: any;
  /** The events as they arrive, when it is. */
  events: AsyncIterableIterator<StreamedEvent> | null;
  /** Comments seen so far (they are not events). */
  comments: string[];
}

export interface StreamRequest {
  key?: string;
  body: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export async function postForEvents(baseUrl: string, path: string, request: StreamRequest): Promise<StreamResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...request.headers };
  if (request.key) headers.authorization = `Bearer ${request.key}`;
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(request.body),
    signal: request.signal,
  });
  const comments: string[] = [];
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream') || response.body === null) {
    const text = await response.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {
      /* not JSON: the test asserts on it */
    }
    return { status: response.status, headers: response.headers, json, events: null, comments };
  }
  const parsed = response.body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(
      new EventSourceParserStream({ onComment: (comment) => comments.push(comment.trim()), onError: 'terminate' }),
    );
  async function* events(): AsyncGenerator<StreamedEvent> {
    for await (const message of parsed) yield { event: message.event ?? 'message', data: JSON.parse(message.data) };
  }
  return { status: response.status, headers: response.headers, json: null, events: events(), comments };
}

/** Every event until the stream ends. */
export async function allEvents(response: StreamResponse): Promise<StreamedEvent[]> {
  if (!response.events) throw new Error(`not an event stream: ${response.status} ${JSON.stringify(response.json)}`);
  const events: StreamedEvent[] = [];
  for await (const event of response.events) events.push(event);
  return events;
}

/** The answer the deltas add up to, and the citations they introduce, in order. */
export function concatDeltas(events: StreamedEvent[]): { text: string; citations: unknown[] } {
  const deltas = events.filter((event) => event.event === 'delta');
  return {
    text: deltas.map((event) => event.data.text).join(''),
    citations: deltas.flatMap((event) => event.data.citations),
  };
}
