// Request bodies are read only for a known caller, and bounded before each step that costs: bytes before reading,
// inflated bytes while inflating, nesting before JSON.parse. The anonymous web routes take small, plain bodies, and
// a refused sign-in body counts against its address. (Issue 22, finding 1.)
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { makeUser, makeWebUser, TEST_PASSWORD, type TestUser } from './factories/accounts.ts';
import { serveWithOwnDatabase, testWithApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/webClient.ts';

interface Context {
  app: TestApp;
  user: TestUser;
}

const test = testWithApp<Omit<Context, 'app'>>();
const MiB = 1024 * 1024;

test.before(async (t) => {
  t.context.user = await makeUser(t.context.app.deps.store);
});

/** A JSON array nested `depth` deep: `[[[…]]]`. */
function nestedArrays(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

interface PartialSend {
  status: number;
  body: any;
  /** Bytes of the body written when the response arrived. */
  sentWhenAnswered: number;
}

/**
 * Writes the headers (declaring the whole `body`) and only the first `firstBytes` of the body, then waits for the
 * response, writing nothing more until it arrives (or `patienceMs` passes: then the rest is sent, so a server that
 * waits for the whole body answers late and the assertion on sentWhenAnswered says so).
 */
function sendPartially(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
  firstBytes: number,
  patienceMs = 20_000,
): Promise<PartialSend> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let sentWhenAnswered = -1;
    const request = httpRequest(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(body.length) },
    });
    const patience = setTimeout(() => {
      sent = body.length;
      request.end(body.subarray(firstBytes));
    }, patienceMs);
    request.on('response', (response) => {
      sentWhenAnswered = sent;
      clearTimeout(patience);
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        request.destroy();
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : null, sentWhenAnswered });
      });
    });
    request.on('error', (error) => {
      // After the answer the server may drop the connection rather than read the rest: expected.
      if (sentWhenAnswered < 0) reject(error);
    });
    sent = firstBytes;
    request.write(body.subarray(0, firstBytes));
  });
}

const ANONYMOUS_JSON = { 'content-type': 'application/json', 'x-csrf-token': 'anonymous' };

test('an anonymous body on a signed-in route of /api/web is answered 401 before it is read', async (t) => {
  const { app } = t.context;
  const body = Buffer.from(`{"name":${nestedArrays(Math.floor(9.9 * MiB) / 2)}}`);
  const answer = await sendPartially(app.baseUrl, '/api/web/knowledge-bases', ANONYMOUS_JSON, body, 64 * 1024);
  t.is(answer.status, 401);
  t.is(answer.body.error.code, 'unauthorized');
  t.true(answer.sentWhenAnswered < body.length, `answered after ${answer.sentWhenAnswered} of ${body.length} bytes`);
});

test('an anonymous gzip body on /api/web is never inflated: 401 before it has all arrived', async (t) => {
  const { app } = t.context;
  const inflated = Buffer.from(`{"name":${nestedArrays(Math.floor(9.9 * MiB) / 2)}}`);
  const compressed = gzipSync(inflated);
  t.true(compressed.length < inflated.length / 100, 'the bomb is small on the wire');
  const answer = await sendPartially(
    app.baseUrl,
    '/api/web/knowledge-bases',
    { ...ANONYMOUS_JSON, 'content-encoding': 'gzip' },
    compressed,
    Math.floor(compressed.length / 2),
  );
  t.is(answer.status, 401);
  t.true(
    answer.sentWhenAnswered < compressed.length,
    `answered after ${answer.sentWhenAnswered} of ${compressed.length} bytes`,
  );
});

test('the anonymous routes take small, uncompressed bodies only', async (t) => {
  const { app } = t.context;
  const large = { email: 'someone@example.com', password: 'x'.repeat(9 * 1024) };
  for (const path of [
    '/api/web/session',
    '/api/web/sign-up',
    '/api/web/setup/first-account',
    '/api/web/password-links/use',
  ]) {
    const tooLarge = await new WebClient(app.baseUrl).call('POST', path, { body: large });
    t.is(tooLarge.status, 413, path);
    t.is(tooLarge.body.error.code, 'payload_too_large');
    t.regex(tooLarge.body.error.message, /8192 bytes/);
    const compressed = await sendPartially(
      app.baseUrl,
      path,
      { ...ANONYMOUS_JSON, 'content-encoding': 'gzip' },
      gzipSync(JSON.stringify({ email: 'someone@example.com', password: TEST_PASSWORD })),
      8,
    );
    t.is(compressed.status, 415, path);
    t.is(compressed.body.error.code, 'bad_request');
    t.regex(compressed.body.error.message, /Content-Encoding gzip is not accepted here/);
  }
});

test('a refused sign-in body counts against the address like a wrong password', async (t) => {
  const { app } = t.context;
  const strict = await serveWithOwnDatabase(app.deps, 'refused_sign_in', (config) => ({
    ...config,
    web: { ...config.web, signIn: { ...config.web.signIn, maxFailuresPerAddress: 3 } },
  }));
  const { store } = strict;
  try {
    const user = await makeWebUser(store);
    const refusals = [
      { email: 42, password: 'x' },
      { email: user.email },
      { email: user.email, password: 'y'.repeat(9 * 1024) },
    ];
    for (const body of refusals) {
      const refused = await new WebClient(strict.baseUrl).call('POST', '/api/web/session', { body });
      t.true(refused.status === 400 || refused.status === 413, `refused with ${refused.status}`);
    }
    const limited = await new WebClient(strict.baseUrl).call('POST', '/api/web/session', {
      body: { email: user.email, password: TEST_PASSWORD },
    });
    t.is(limited.status, 429);
    t.is(limited.body.error.code, 'rate_limited');
  } finally {
    await strict.close();
  }
});

test('a key holder’s body nested deeper than KBQA_MAX_JSON_DEPTH is 400 before JSON.parse', async (t) => {
  const { app, user } = t.context;
  const deep = await app.call('POST', '/api/v1/knowledge-bases', {
    key: user.key,
    headers: { 'content-type': 'application/json' },
    rawBody: `{"name":${nestedArrays(2_000_000)}}`,
  });
  t.is(deep.status, 400);
  t.deepEqual(deep.body, {
    error: { code: 'bad_request', message: 'body: nests objects and arrays more than 32 levels deep' },
  });
  // Brackets inside strings are text, not nesting.
  const bracketsInText = await app.call('POST', '/api/v1/knowledge-bases', {
    key: user.key,
    body: { name: 'brackets', description: '[{'.repeat(500) },
  });
  t.is(bracketsInText.status, 201);
});

test('the deepest filter the API accepts passes the nesting bound', async (t) => {
  const { app, user } = t.context;
  const kb = await app.call('POST', '/api/v1/knowledge-bases', { key: user.key, body: { name: 'deep filter' } });
  let filter: Record<string, unknown> = { topic: { $in: ['a', 'b'] } };
  for (let level = 0; level < 8; level += 1) filter = { $and: [filter] };
  const query = await app.call('POST', '/api/v1/search', {
    key: user.key,
    body: { query: 'anything', knowledge_base_ids: [kb.body.knowledge_base.id], filters: filter },
  });
  t.is(query.status, 200, JSON.stringify(query.body));
});

test('a key holder’s gzip body is inflated only up to KBQA_MAX_BODY_BYTES', async (t) => {
  const { app, user } = t.context;
  const ok = await sendPartially(
    app.baseUrl,
    '/api/v1/knowledge-bases',
    { 'content-type': 'application/json', 'content-encoding': 'gzip', authorization: `Bearer ${user.key}` },
    gzipSync(JSON.stringify({ name: 'sent compressed' })),
    Number.MAX_SAFE_INTEGER,
  );
  t.is(ok.status, 201);
  t.is(ok.body.knowledge_base.name, 'sent compressed');
  const bomb = gzipSync(Buffer.concat([Buffer.from('{"name":"'), Buffer.alloc(64 * MiB, 0x61), Buffer.from('"}')]));
  const refused = await sendPartially(
    app.baseUrl,
    '/api/v1/knowledge-bases',
    { 'content-type': 'application/json', 'content-encoding': 'gzip', authorization: `Bearer ${user.key}` },
    bomb,
    Number.MAX_SAFE_INTEGER,
  );
  t.is(refused.status, 413);
  t.is(refused.body.error.code, 'payload_too_large');
});
