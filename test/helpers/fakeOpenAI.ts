// A local HTTP server speaking the OpenAI chat completions API (POST /v1/chat/completions), for tests of the LLM
// answer models, and the embeddings API (POST /v1/embeddings, below), for tests of the OpenAI-compatible embedder. It records every request and is scriptable: the reply text, a sequence of status codes to answer
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
  /** The embeddings endpoint's own statuses, delay and vector size (the chat fields above do not apply to it). */
  embeddings?: FakeEmbeddingsScript;
}

export interface FakeOpenAI {
  /** The base URL to configure (ends in /v1). */
  baseUrl: string;
  /** Chat completion requests. */
  requests: RecordedChatRequest[];
  /** Embeddings requests (their own list: a test counting chat requests is not disturbed by embeddings). */
  embeddingRequests: RecordedEmbeddingRequest[];
  /** Replaces the script and forgets the recorded requests (both lists). */
  script(script: FakeOpenAIScript): void;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------------
// Embeddings: POST /v1/embeddings answered as OpenAI does ({ object: 'list', data: [{ object: 'embedding', index,
// embedding }], model, usage }), as float arrays or, with encoding_format 'base64' (what the openai SDK asks for by
// default), as the little-endian float32 bytes in base64. The vectors are real-shaped (the model's size, or the
// `dimensions` asked for; unit length; float32 values) and meaningful enough for retrieval tests: a signed hashed
// bag of the text's lower-cased words (weight 1) and their character trigrams (weight 0.5), L2-normalised, so
// texts sharing words have a high cosine and unrelated texts one near 0. Deterministic: `fakeEmbedding` computes
// the same vector in a test.

/** The vector sizes of OpenAI's embedding models; any other model answers with `FakeEmbeddingsScript.dimensions`. */
export const FAKE_EMBEDDING_MODEL_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};
/** The models that take `dimensions` (OpenAI answers 400 to it for text-embedding-ada-002). */
const SHORTENING_MODELS = new Set(['text-embedding-3-small', 'text-embedding-3-large']);
/** OpenAI's limit on inputs per request. */
const MAX_EMBEDDING_INPUTS = 2048;

export interface FakeEmbeddingsScript {
  /** Statuses for the next embeddings requests, one each, in order (e.g. [500, 429] then success). */
  statuses?: number[];
  /** Status once `statuses` is used up (default 200). */
  thenStatus?: number;
  /** Milliseconds to wait before answering each embeddings request. */
  delayMs?: number;
  /** The vector size of a model not in FAKE_EMBEDDING_MODEL_DIMENSIONS (default 1536). */
  dimensions?: number;
}

export interface RecordedEmbeddingRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: { model?: string; input?: unknown; encoding_format?: string; dimensions?: number; [key: string]: unknown };
  /** The inputs, as a list (a single string input is a list of one). */
  inputs: string[];
  /** The status the fake answered with (null when the client went away first). */
  status: number | null;
}

/** FNV-1a over UTF-16 code units: a stable 32-bit hash. */
function fnv1a(text: string, seed: number): number {
  let hash = 0x811c9dc5 ^ seed;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

const FAKE_WORD = /[\p{L}\p{N}]+/gu;

/** The fake's vector for `text` at `dimensions`, as float32 values (what both encodings carry). */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const sums = new Float64Array(dimensions);
  const add = (feature: string, weight: number) => {
    const slot = fnv1a(feature, 0) % dimensions;
    sums[slot] += (fnv1a(feature, 0x5bd1e995) & 1) === 1 ? weight : -weight;
  };
  for (const word of text.toLowerCase().match(FAKE_WORD) ?? []) {
    add(`w:${word}`, 1);
    const padded = `^${word}$`;
    for (let index = 0; index + 3 <= padded.length; index += 1) add(`t:${padded.slice(index, index + 3)}`, 0.5);
  }
  let squares = 0;
  for (const value of sums) squares += value * value;
  // A text without words still gets a unit vector (OpenSearch's cosine space refuses all-zero vectors).
  if (squares === 0) {
    sums[0] = 1;
    squares = 1;
  }
  const norm = Math.sqrt(squares);
  return Array.from(Float32Array.from(sums, (value) => value / norm));
}

function embeddingsError(response: ServerResponse, status: number, message: string, param: string | null = null): void {
  sendJson(response, status, { error: { message, type: ERROR_TYPES[status] ?? 'server_error', param, code: null } });
}

/** What is wrong with an embeddings request, as OpenAI words it; null when it is fine. */
function invalidEmbeddingsRequest(
  body: RecordedEmbeddingRequest['body'],
  inputs: string[] | null,
): { message: string; param: string } | null {
  if (typeof body.model !== 'string' || body.model.length === 0)
    return { message: 'you must provide a model parameter', param: 'model' };
  if (inputs === null)
    return { message: "'$.input' is invalid: a string or a list of strings is expected", param: 'input' };
  if (inputs.length === 0 || inputs.length > MAX_EMBEDDING_INPUTS)
    return { message: `'$.input' must hold 1 to ${MAX_EMBEDDING_INPUTS} inputs`, param: 'input' };
  if (inputs.some((input) => input.length === 0))
    return { message: "'$.input' is invalid: an input cannot be an empty string", param: 'input' };
  if (body.encoding_format !== undefined && body.encoding_format !== 'float' && body.encoding_format !== 'base64') {
    return { message: "'encoding_format' must be 'float' or 'base64'", param: 'encoding_format' };
  }
  if (body.dimensions !== undefined) {
    if (!SHORTENING_MODELS.has(body.model))
      return { message: 'This model does not support specifying dimensions.', param: 'dimensions' };
    if (
      !Number.isInteger(body.dimensions) ||
      body.dimensions < 1 ||
      body.dimensions > FAKE_EMBEDDING_MODEL_DIMENSIONS[body.model]
    ) {
      return {
        message: `'dimensions' must be between 1 and ${FAKE_EMBEDDING_MODEL_DIMENSIONS[body.model]}`,
        param: 'dimensions',
      };
    }
  }
  return null;
}

function base64Float32(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes.toString('base64');
}

function answerEmbeddings(
  response: ServerResponse,
  recorded: RecordedEmbeddingRequest,
  script: FakeEmbeddingsScript,
): void {
  const { body, inputs } = recorded;
  const model = body.model as string;
  const dimensions = body.dimensions ?? FAKE_EMBEDDING_MODEL_DIMENSIONS[model] ?? script.dimensions ?? 1536;
  const base64 = body.encoding_format === 'base64';
  const tokens = inputs.reduce((sum, input) => sum + (input.match(FAKE_WORD)?.length ?? 0) + 1, 0);
  sendJson(response, 200, {
    object: 'list',
    data: inputs.map((input, index) => {
      const vector = fakeEmbedding(input, dimensions);
      return { object: 'embedding', index, embedding: base64 ? base64Float32(vector) : vector };
    }),
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
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
async function streamReply(
  response: ServerResponse,
  recorded: RecordedChatRequest,
  reply: string,
  id: string,
  script: FakeOpenAIScript,
): Promise<void> {
  const base = {
    id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: recorded.body.model ?? 'unknown',
    system_fingerprint: 'fp_fake',
  };
  const gone = () => response.destroyed || response.writableEnded;
  const send = (data: unknown) => {
    if (!gone()) response.write(`data: ${JSON.stringify(data)}\n\n`);
  };
  const choice = (delta: Record<string, unknown>, finish: string | null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  send(choice({ role: 'assistant', content: '', refusal: null }, null));
  const tokens = tokensOf(reply, script);
  const failure = script.streamFailure;
  for (const [index, token] of tokens.entries()) {
    if (failure && index === failure.afterTokens) {
      // What was written reaches the client first: destroyed at once, the socket would discard it.
      if (failure.kind === 'drop') await sleep(100).then(() => response.socket?.destroy());
      else {
        send({
          error: { message: 'scripted failure inside the stream', type: 'server_error', param: null, code: null },
        });
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
    send({
      ...base,
      choices: [],
      usage: { prompt_tokens: 100, completion_tokens: tokens.length, total_tokens: 100 + tokens.length },
    });
  }
  if (!gone()) response.end('data: [DONE]\n\n');
}

/** The environment that points an app's answer models at `fake` (two tries per call, the first retried). */
export function answerModelsAt(fake: FakeOpenAI, models: string, timeoutMs: number): Record<string, string> {
  return {
    KBQA_OPENAI_BASE_URL: fake.baseUrl,
    KBQA_OPENAI_API_KEY: 'test',
    KBQA_OPENAI_MODELS: models,
    KBQA_LLM_TIMEOUT_MS: String(timeoutMs),
    KBQA_LLM_MAX_RETRIES: '2',
  };
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  let current: FakeOpenAIScript = {};
  let statusQueue: number[] = [];
  let embeddingStatusQueue: number[] = [];
  const requests: RecordedChatRequest[] = [];
  const embeddingRequests: RecordedEmbeddingRequest[] = [];
  const sockets = new Set<Socket>();
  let counter = 0;

  const embeddings = async (request: IncomingMessage, response: ServerResponse, text: string) => {
    let body: RecordedEmbeddingRequest['body'];
    try {
      body = JSON.parse(text) as RecordedEmbeddingRequest['body'];
    } catch {
      embeddingsError(response, 400, 'body is not JSON');
      return;
    }
    const input = body.input;
    const inputs =
      typeof input === 'string'
        ? [input]
        : Array.isArray(input) && input.every((item) => typeof item === 'string')
          ? (input as string[])
          : null;
    const recorded: RecordedEmbeddingRequest = {
      path: request.url ?? '',
      headers: request.headers,
      body,
      inputs: inputs ?? [],
      status: null,
    };
    embeddingRequests.push(recorded);
    const script = current.embeddings ?? {};
    const status =
      embeddingStatusQueue.length > 0 ? (embeddingStatusQueue.shift() as number) : (script.thenStatus ?? 200);
    if ((script.delayMs ?? 0) > 0) await sleep(script.delayMs as number);
    if (response.destroyed || request.socket.destroyed) return;
    const invalid = invalidEmbeddingsRequest(body, inputs);
    recorded.status = invalid ? 400 : status;
    if (invalid) embeddingsError(response, 400, invalid.message, invalid.param);
    else if (status !== 200) embeddingsError(response, status, `scripted failure ${status}`);
    else answerEmbeddings(response, recorded, script);
  };

  const server = createServer(async (request, response) => {
    const text = await readBody(request);
    const path = (request.url ?? '').split('?')[0];
    if (request.method === 'POST' && path.endsWith('/v1/embeddings')) {
      await embeddings(request, response, text);
      return;
    }
    if (request.method !== 'POST' || !/\/v1\/chat\/completions$/.test(path)) {
      sendJson(response, 404, {
        error: { message: `no route ${request.method} ${request.url}`, type: 'invalid_request_error' },
      });
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
        error: {
          message: `scripted failure ${status}`,
          type: ERROR_TYPES[status] ?? 'server_error',
          param: null,
          code: null,
        },
      });
      return;
    }
    const reply =
      typeof current.reply === 'function' ? current.reply(recorded) : (current.reply ?? 'I cannot tell [1].');
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
      usage: {
        prompt_tokens: Math.ceil(text.length / 4),
        completion_tokens: Math.ceil(reply.length / 4),
        total_tokens: Math.ceil((text.length + reply.length) / 4),
      },
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
    embeddingRequests,
    script(script) {
      current = script;
      statusQueue = [...(script.statuses ?? [])];
      embeddingStatusQueue = [...(script.embeddings?.statuses ?? [])];
      requests.length = 0;
      embeddingRequests.length = 0;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
