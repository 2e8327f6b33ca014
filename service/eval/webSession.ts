// What an operator's tool does through the web app's API (/api/web) with a signed-in session: the Developer API takes
// text and markdown only (the contract), so PDFs enter through the web app's upload, as a browser sends them
// (multipart, the session cookie and its X-CSRF-Token). Used by `kbqa eval answers` and the PDF ingest bench.

export interface WebSession {
  url: string;
  cookie: string;
  csrfToken: string;
}

export interface WebDocument {
  id: string;
  status: string;
  error?: string;
}

async function readJson<T>(response: Response, what: string): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`${what} answered ${response.status}, not JSON: ${text.slice(0, 200)}`);
  }
}

/** Signs in to the web app (`POST /api/web/session`) as the browser does: the cookie it sets, the CSRF token it returns. */
export async function signInToWebApp(url: string, email: string, password: string): Promise<WebSession> {
  const response = await fetch(`${url}/api/web/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-csrf-token': 'anonymous' },
    body: JSON.stringify({ email, password }),
  });
  const body = await readJson<{ csrf_token?: string; error?: { message?: string } }>(response, 'web sign-in');
  if (response.status !== 200 || typeof body.csrf_token !== 'string') {
    throw new Error(
      `web sign-in answered ${response.status}: ${body.error?.message ?? JSON.stringify(body).slice(0, 200)}`,
    );
  }
  // "kbqa_session=…; Path=/; HttpOnly…" (or __Host-kbqa_session behind HTTPS): the name=value pair is the cookie.
  const cookie = response.headers
    .getSetCookie()
    .map((header) => header.split(';')[0])
    .find((pair) => !pair.endsWith('='));
  if (!cookie) throw new Error('web sign-in set no session cookie');
  return { url, cookie, csrfToken: body.csrf_token };
}

/** Signs the session out (`DELETE /api/web/session`): the eval leaves no session behind. */
export async function signOutOfWebApp(session: WebSession): Promise<void> {
  await fetch(`${session.url}/api/web/session`, {
    method: 'DELETE',
    headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken },
  });
}

async function getJson<T>(session: WebSession, path: string): Promise<T> {
  const response = await fetch(`${session.url}/api/web${path}`, { headers: { cookie: session.cookie } });
  const body = await readJson<T & { error?: { message?: string } }>(response, `GET /api/web${path}`);
  if (response.status !== 200)
    throw new Error(`GET /api/web${path} answered ${response.status}: ${body.error?.message ?? ''}`);
  return body;
}

/**
 * An upload the web app's upload route refused (4xx): the file's kind is not accepted there. Control-flow signal:
 * caught by cli/evalRealAnswers.ts, which reports the kind as refused.
 */
export class UploadRefused extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** Content types as a browser sends them for a file of each extension (what the web app's file picker passes on). */
const CONTENT_TYPES: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.odt': 'application/vnd.oasis.opendocument.text',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.csv': 'text/csv',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
};

export function uploadContentType(filename: string): string {
  const dot = filename.lastIndexOf('.');
  return (dot >= 0 && CONTENT_TYPES[filename.slice(dot).toLowerCase()]) || 'application/octet-stream';
}

/**
 * Uploads a file into a KB the session's user owns through the web app's upload route (multipart, as the browser
 * sends it); answered 202 with the document, which is then ingested. A 4xx is an UploadRefused (its message the API's).
 */
export async function uploadFile(
  session: WebSession,
  knowledgeBaseId: string,
  filename: string,
  bytes: Uint8Array,
): Promise<WebDocument> {
  const form = new FormData();
  form.append('file', new Blob([Buffer.from(bytes)], { type: uploadContentType(filename) }), filename);
  const path = `/api/web/knowledge-bases/${encodeURIComponent(knowledgeBaseId)}/uploads`;
  const response = await fetch(`${session.url}${path}`, {
    method: 'POST',
    headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken },
    body: form,
  });
  const body = await readJson<{ document?: WebDocument; error?: { message?: string } }>(response, `POST ${path}`);
  if (response.status === 202 && body.document) return body.document;
  const message = `POST ${path} answered ${response.status}: ${body.error?.message ?? ''}`;
  if (response.status >= 400 && response.status < 500 && response.status !== 401 && response.status !== 429)
    throw new UploadRefused(response.status, body.error?.message ?? message);
  throw new Error(message);
}

/** Uploads a PDF (uploadFile with a .pdf name). */
export async function uploadPdf(
  session: WebSession,
  knowledgeBaseId: string,
  filename: string,
  pdf: Uint8Array,
): Promise<WebDocument> {
  return uploadFile(session, knowledgeBaseId, filename, pdf);
}

/** Polls the document every `pollMs` until it is ready; failed, or still not ready after `timeoutMs`, throws. */
export async function waitUntilReady(
  session: WebSession,
  documentId: string,
  options: { pollMs?: number; timeoutMs?: number } = {},
): Promise<WebDocument> {
  const { pollMs = 200, timeoutMs = 300_000 } = options;
  const started = Date.now();
  for (;;) {
    const { document } = await getJson<{ document: WebDocument }>(
      session,
      `/documents/${encodeURIComponent(documentId)}`,
    );
    if (document.status === 'ready') return document;
    if (document.status === 'failed')
      throw new Error(`document ${documentId} failed: ${document.error ?? 'no error given'}`);
    if (Date.now() - started > timeoutMs)
      throw new Error(`document ${documentId} still ${document.status} after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/**
 * The document's text: as it was sent, or for a PDF (whose extracted text is never kept) its passages' texts, in
 * order — what the answerer quotes from either way.
 */
export async function documentText(session: WebSession, documentId: string): Promise<string> {
  const body = await getJson<{ content: string | null; passages: Array<{ text: string }>; passages_total: number }>(
    session,
    `/documents/${encodeURIComponent(documentId)}/content`,
  );
  if (body.content !== null) return body.content;
  if (body.passages.length < body.passages_total)
    throw new Error(`document ${documentId} has ${body.passages_total} passages, more than are listed`);
  return body.passages.map((passage) => passage.text).join('\n\n');
}
