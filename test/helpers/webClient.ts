// A browser-like client of /api/web for API-level tests: it keeps the session cookie it is given and echoes the
// CSRF token from the last session response, as the web app does. Options let a test leave either out.
import { MongoClient } from 'mongodb';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../service/config.ts';
import { callJson, type CallResult } from './http.ts';

export interface WebCallOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** The X-CSRF-Token to send: default the session's (or "anonymous" before one); null sends none. */
  csrf?: string | null;
  /** false: send no cookie. */
  cookie?: boolean;
}

export class WebClient {
  readonly baseUrl: string;
  cookie: string | null = null;
  csrfToken: string | null = null;
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  async call(method: string, path: string, options: WebCallOptions = {}): Promise<CallResult> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookie && options.cookie !== false) headers.cookie = this.cookie;
    const csrf = options.csrf === undefined ? (this.csrfToken ?? 'anonymous') : options.csrf;
    if (csrf !== null && method !== 'GET') headers['x-csrf-token'] = csrf;
    const result = await callJson(this.baseUrl, method, path, { body: options.body, headers });
    for (const setCookie of result.headers.getSetCookie()) {
      const pair = setCookie.split(';')[0];
      this.cookie = pair.endsWith('=') ? null : pair;
    }
    if (typeof result.body?.csrf_token === 'string') this.csrfToken = result.body.csrf_token;
    return result;
  }

  /** Signs in; fails the caller's expectations loudly rather than returning a half-signed-in client. */
  async signIn(email: string, password: string): Promise<CallResult> {
    const result = await this.call('POST', '/api/web/session', { body: { email, password } });
    if (result.status !== 200) throw new Error(`sign-in failed: ${result.status} ${JSON.stringify(result.body)}`);
    return result;
  }
}

/** A database of the test's own on the stack's MongoDB server (the first-account flow needs one with no users). */
export function freshDatabaseUrl(label: string): string {
  const url = new URL(loadConfig(process.env).mongodb.url);
  url.pathname = `/kbqa_${label}_${randomUUID().slice(0, 8)}`;
  return url.toString();
}

export async function dropDatabase(url: string): Promise<void> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5_000 });
  try {
    await client.connect();
    await client.db().dropDatabase();
  } finally {
    await client.close();
  }
}
