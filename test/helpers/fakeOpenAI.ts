// A local HTTP server speaking the OpenAI chat completions API (POST /v1/chat/completions), for tests of the LLM
// answer models. It records every request and is scriptable: the reply text, a sequence of status codes to answer
// before succeeding (or a status to answer forever), and a delay before each answer. A request with "stream": true
// is answered as OpenAI streams: Server-Sent Events of chat.completion.chunk objects, one per token, then
// `data: [DONE]`; the tokens, the delay between them and a failure part-way (a dropped connection or an error event)
// are scriptable too, and the fake records whether the client went away before the reply was complete.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ChatMessage {
  role: string;
  content: string;
}

export interface RecordedChatRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: { model?: string; messages?: ChatMessage[]; [key: string]: unknown };
  /** The status the fake answered with (null when the client went away first). */
  status: number | null;
  /** Whether the client asked for a streamed reply. */
  stream: boolean;
  /** Whether the client closed the connection before the reply was complete (a cancelled call), and when. */
  cancelled: boolean;
  cancelledAt: number | null;
  /** Content chunks sent so far (streamed replies). */
  tokensSent: number;
}

export interface FakeOpenAIScript {
  /** The assistant's reply: text, or a function of the request (default "I cannot tell [1]."). */
  reply?: string | ((request: RecordedChatRequest) => string);
  /** Statuses for the next requests, one each, in order (e.g. [429, 429] then success). */
  statuses?: number[];
  /** Status once `statuses` is used up (default 200). */
  thenStatus?: number;
  /** Milliseconds to wait before answering each request. */
  delayMs?: number;
  /** Streamed replies: the reply's tokens, one chunk each (default: the reply cut every `tokenChars` characters). */
  tokens?: string[];
  /** Streamed replies: characters per token when `tokens` is not given (default 3, so markers are split too). */
  tokenChars?: number;
  /** Streamed replies: milliseconds before each content chunk (a list: before the n-th, none past its end). */
  tokenDelayMs?: number | number[];
  /**
   * Streamed replies: after this many content chunks, fail — `drop` closes the connection mid-body, `error` sends an
   * error event (as OpenAI does for a failure inside a stream) and ends the body.
   */
  streamFailure?: { afterTokens: number; kind: 'drop' | 'error' };
}

export interface FakeOpenAI {
  /** The base URL to configure (ends in /v1). */
  baseUrl: string;
  requests: RecordedChatRequest[];
  /** Replaces the script and forgets the recorded requests. */
  script(script: FakeOpenAIScript): void;
  close(): Promise<void>;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  429: 'rate_limit_exceeded',
  500: 'server_error',
  502: 'server_error',
  503: 'server_error',
};

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    request.on('error', reject);
  });
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  if (response.destroyed || response.writableEnded) return;
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The reply cut into tokens: the script's, else every `chars` characters. */
export function tokensOf(reply: string, script: FakeOpenAIScript): string[] {
  if (script.tokens) return script.tokens;
  const chars = Math.max(1, script.tokenChars ?? 3);
  const tokens: string[] = [];
  for (let start = 0; start < reply.length; start += chars) tokens.push(reply.slice(start, start + chars));
  return tokens;
}

/** A streamed chat completion, chunk by chunk, as api.openai.com sends it. */
async function streamReply(response: ServerResponse, recorded: RecordedChatRequest, reply: string, id: string, script: FakeOpenAIScript): Promise<void> {
  const base = { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: recorded.body.model ?? 'unknown', system_fingerprint: 'fp_fake' };
  const gone = () => response.destroyed || response.writableEnded;
  const send = (data: unknown) => {
    if (!gone()) response.write(`data: ${JSON.stringify(data)}\n\n`);
  };
  const choice = (delta: Record<string, unknown>, finish: string | null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  send(choice({ role: 'assistant', content: '', refusal: null }, null));
  const tokens = tokensOf(reply, script);
  const failure = script.streamFailure;
  for (const [index, token] of tokens.entries()) {
    if (failure && index === failure.afterTokens) {
      // What was written reaches the client first: destroyed at once, the socket would discard it.
      if (failure.kind === 'drop') await sleep(100).then(() => response.socket?.destroy());
      else {
        send({ error: { message: 'scripted failure inside the stream', type: 'server_error', param: null, code: null } });
        response.end();
      }
      return;
    }
    const delay = Array.isArray(script.tokenDelayMs) ? (script.tokenDelayMs[index] ?? 0) : (script.tokenDelayMs ?? 0);
    if (delay > 0) await sleep(delay);
    if (gone()) return;
    send(choice({ content: token }, null));
    recorded.tokensSent += 1;
  }
  send(choice({}, 'stop'));
  if ((recorded.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage) {
    send({ ...base, choices: [], usage: { prompt_tokens: 100, completion_tokens: tokens.length, total_tokens: 100 + tokens.length } });
  }
  if (!gone()) response.end('data: [DONE]\n\n');
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  let current: FakeOpenAIScript = {};
  let statusQueue: number[] = [];
  const requests: RecordedChatRequest[] = [];
  const sockets = new Set<Socket>();
  let counter = 0;

  const server = createServer(async (request, response) => {
    const text = await readBody(request);
    if (request.method !== 'POST' || !/\/v1\/chat\/completions$/.test((request.url ?? '').split('?')[0])) {
      sendJson(response, 404, { error: { message: `no route ${request.method} ${request.url}`, type: 'invalid_request_error' } });
      return;
    }
    let body: RecordedChatRequest['body'];
    try {
      body = JSON.parse(text) as RecordedChatRequest['body'];
    } catch {
      sendJson(response, 400, { error: { message: 'body is not JSON', type: 'invalid_request_error' } });
      return;
    }
    const recorded: RecordedChatRequest = {
      path: request.url ?? '',
      headers: request.headers,
      body,
      status: null,
      stream: body.stream === true,
      cancelled: false,
      cancelledAt: null,
      tokensSent: 0,
    };
    requests.push(recorded);
    response.on('close', () => {
      if (response.writableFinished || recorded.cancelled) return;
      recorded.cancelled = true;
      recorded.cancelledAt = Date.now();
    });
    const status = statusQueue.length > 0 ? (statusQueue.shift() as number) : (current.thenStatus ?? 200);
    const delayMs = current.delayMs ?? 0;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (response.destroyed || request.socket.destroyed) return;
    recorded.status = status;
    if (status !== 200) {
      sendJson(response, status, {
        error: { message: `scripted failure ${status}`, type: ERROR_TYPES[status] ?? 'server_error', param: null, code: null },
      });
      return;
    }
    const reply = typeof current.reply === 'function' ? current.reply(recorded) : (current.reply ?? 'I cannot tell [1].');
    counter += 1;
    if (recorded.stream) {
      await streamReply(response, recorded, reply, `chatcmpl-fake-${counter}`, current);
      return;
    }
    sendJson(response, 200, {
      id: `chatcmpl-fake-${counter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model ?? 'unknown',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: reply, refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: Math.ceil(text.length / 4), completion_tokens: Math.ceil(reply.length / 4), total_tokens: Math.ceil((text.length + reply.length) / 4) },
      system_fingerprint: 'fp_fake',
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script(script) {
      current = script;
      statusQueue = [...(script.statuses ?? [])];
      requests.length = 0;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
