// A local HTTP server speaking the OpenAI chat completions API (POST /v1/chat/completions), for tests of the LLM
// answer models. It records every request and is scriptable: the reply text, a sequence of status codes to answer
// before succeeding (or a status to answer forever), and a delay before each answer.
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
    const recorded: RecordedChatRequest = { path: request.url ?? '', headers: request.headers, body, status: null };
    requests.push(recorded);
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
