// The one client of /api/web. Components never call fetch: they call `api.<endpoint>()` through TanStack Query.
//
// It keeps the session's CSRF token (set from every { user, csrf_token } answer, GET /session included) and sends
// it as X-CSRF-Token on every POST/PUT/DELETE, `anonymous` while nobody is signed in. Failures are ApiError with
// the envelope's { code, message }; a 401 from anything but the session probes tells the app the session is over.
//
// PDF uploads are the one call on XMLHttpRequest instead of fetch: only XHR reports the bytes sent of a request body
// (`xhr.upload.onprogress`), and a PDF can be tens of megabytes.
import { createParser } from 'eventsource-parser';
import type {
  AdminUser,
  ApiKey,
  BlockedSender,
  ChangePassword,
  Citation,
  Conversation,
  ConversationWithMessages,
  CreatedApiKey,
  CreatedKnowledgeBase,
  Credentials,
  DeletedKnowledgeBase,
  DocumentContent,
  DocumentReplacement,
  Feedback,
  FeedbackRequest,
  Invitation,
  InvitationSent,
  KbDocument,
  KnowledgeBase,
  KnowledgeBaseListItem,
  KnowledgeBaseRatings,
  Limits,
  Membership,
  Models,
  NewApiKey,
  NewConversation,
  NewDocument,
  NewDocumentOrigin,
  NewInvitation,
  NewKnowledgeBase,
  PasswordLinkInfo,
  PasswordReset,
  QueryRequest,
  QueryResponse,
  ReceivedInvitation,
  RedeemPasswordLink,
  SessionResponse,
  SetupStatus,
  Sharing,
  TurnRequest,
  TurnResponse,
  UnmarkedKnowledgeBase,
} from './generated.ts';
import { CODE_FOR_STATUS } from './generated.ts';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  /** Seconds, from Retry-After on a 429 (and on the wrong password that started a sign-in pause). */
  readonly retryAfter: number | null;
  /** A wrong password's tries left before sign-in pauses (the envelope's tries_left); 0: paused now. */
  readonly triesLeft: number | null;

  constructor(
    status: number,
    code: string,
    message: string,
    retryAfter: number | null = null,
    triesLeft: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
    this.triesLeft = triesLeft;
  }
}

export function isApiError(error: unknown, status?: number): error is ApiError {
  return error instanceof ApiError && (status === undefined || error.status === status);
}

const BASE = '/api/web';

const unreachable = () =>
  new ApiError(0, 'network_error', 'Could not reach the server. Check your connection and try again.');

let csrfToken: string | null = null;
let unauthorizedHandler: (() => void) | null = null;

/** Called on a 401 from any call but the session probes: the session has ended or was never there. */
export function setUnauthorizedHandler(handler: (() => void) | null): void {
  unauthorizedHandler = handler;
}

/** After signing out: later state-changing calls say `anonymous` again. */
export function forgetCsrfToken(): void {
  csrfToken = null;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface RequestOptions {
  method?: Method;
  body?: unknown;
  /** Sends `Prefer: respond-async`: ingestion answers 202 at once and runs in the background. */
  respondAsync?: boolean;
  /** A 401 here is an answer (wrong password, no session yet), not the end of a session. */
  probe?: boolean;
  headers?: Record<string, string>;
}

async function request<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken ?? 'anonymous';
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  if (options.respondAsync) headers.Prefer = 'respond-async';
  Object.assign(headers, options.headers);

  let response: Response;
  try {
    response = await fetch(BASE + path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'same-origin',
    });
  } catch {
    throw unreachable();
  }

  const payload = await readJson(response);
  if (!response.ok) {
    const error = errorFrom(response.status, response.statusText, response.headers.get('Retry-After'), payload);
    if (response.status === 401 && !options.probe) sessionEnded();
    throw error;
  }
  if (payload === undefined) {
    throw new ApiError(response.status, 'server_error', 'The server sent an answer the app cannot read (not JSON).');
  }
  rememberCsrfToken(payload);
  return payload as T;
}

/** What arrives while an answer streams: each delta's text and the citations it first marks. */
export interface AnswerStreamHandlers {
  onDelta: (text: string, citations: Citation[]) => void;
}

/**
 * A POST that answers with `stream: true` as Server-Sent Events (retrieval, delta…, done or error), read as they
 * arrive: /query and a conversation's next turn. Resolves with `done`'s body (exactly the non-streaming answer); a
 * failure before the stream is an ordinary error, one inside it (an `error` event, or the connection ending before
 * `done`) rejects the same way.
 */
async function streamAnswer<T>(path: string, body: object, handlers: AnswerStreamHandlers): Promise<T> {
  let response: Response;
  try {
    response = await fetch(BASE + path, {
      method: 'POST',
      headers: {
        Accept: 'text/event-stream',
        'Content-Type': 'application/json',
        'X-CSRF-Token': csrfToken ?? 'anonymous',
      },
      body: JSON.stringify({ ...body, stream: true }),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError(0, 'network_error', 'Could not reach the server. Check your connection and try again.');
  }
  if (!response.ok || response.body === null) {
    const payload = await readJson(response);
    if (response.status === 401) sessionEnded();
    throw errorFrom(response.status, response.statusText, response.headers.get('Retry-After'), payload);
  }
  let done: T | null = null;
  let failure: ApiError | null = null;
  const parser = createParser({
    onEvent(message) {
      const data = JSON.parse(message.data) as unknown;
      if (message.event === 'delta' && isRecord(data) && typeof data.text === 'string') {
        handlers.onDelta(data.text, Array.isArray(data.citations) ? (data.citations as Citation[]) : []);
      } else if (message.event === 'done') {
        done = data as T;
      } else if (message.event === 'error') {
        failure = errorFrom(503, '', null, data);
      }
    },
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) parser.feed(chunk.value);
  } catch {
    throw new ApiError(0, 'network_error', 'The connection ended before the answer was complete. Try again.');
  }
  if (failure) throw failure;
  if (!done) throw new ApiError(0, 'network_error', 'The connection ended before the answer was complete. Try again.');
  return done;
}

/** POST /query, streamed. */
const askStreaming = (body: QueryRequest, handlers: AnswerStreamHandlers) =>
  streamAnswer<QueryResponse>('/query', body, handlers);

/** The next turn of a conversation, streamed; `done` carries the stored answer (its id is what a rating names). */
const askInConversationStreaming = (conversationId: string, body: TurnRequest, handlers: AnswerStreamHandlers) =>
  streamAnswer<TurnResponse>(`/conversations/${id(conversationId)}/messages`, body, handlers);

async function readJson(response: Response): Promise<unknown> {
  const type = response.headers.get('Content-Type') ?? '';
  if (!type.toLowerCase().includes('json')) return undefined;
  try {
    return (await response.json()) as unknown;
  } catch {
    return undefined;
  }
}

/** The same reading for an XMLHttpRequest's answer, whose body is text. */
function parseJsonText(contentType: string | null, text: string): unknown {
  if (!(contentType ?? '').toLowerCase().includes('json')) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function errorFrom(status: number, statusText: string, retryAfterHeader: string | null, payload: unknown): ApiError {
  const retryAfter =
    retryAfterHeader !== null && Number.isFinite(Number(retryAfterHeader)) ? Number(retryAfterHeader) : null;
  const envelope = isRecord(payload) && isRecord(payload.error) ? payload.error : null;
  if (envelope && typeof envelope.message === 'string') {
    const code = typeof envelope.code === 'string' ? envelope.code : (CODE_FOR_STATUS[status] ?? 'server_error');
    const triesLeft = typeof envelope.tries_left === 'number' ? envelope.tries_left : null;
    return new ApiError(status, code, envelope.message, retryAfter, triesLeft);
  }
  // Not our envelope: a proxy's 502 page, a gateway timeout, an HTML error page.
  const statusSuffix = statusText ? ` ${statusText}` : '';
  return new ApiError(
    status,
    CODE_FOR_STATUS[status] ?? 'server_error',
    `The server answered ${status}${statusSuffix}. Try again in a moment.`,
    retryAfter,
  );
}

function sessionEnded(): void {
  csrfToken = null;
  unauthorizedHandler?.();
}

function rememberCsrfToken(payload: unknown): void {
  if (isRecord(payload) && typeof payload.csrf_token === 'string') csrfToken = payload.csrf_token;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

const id = (value: string) => encodeURIComponent(value);

export interface UploadOptions {
  /** Bytes of the request body sent so far, of its total (the file plus a few hundred bytes of multipart framing). */
  onProgress?: (sent: number, total: number) => void;
  /** Aborting it aborts the request; the promise then rejects with an AbortError (see isAbortError). */
  signal?: AbortSignal;
}

/** True for the rejection of a call its AbortSignal cancelled. */
export function isAbortError(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

function abortError(signal: AbortSignal | undefined): unknown {
  return signal?.reason instanceof DOMException
    ? signal.reason
    : new DOMException('The upload was cancelled.', 'AbortError');
}

/**
 * POST /knowledge-bases/:kbId/uploads as multipart/form-data with one `file` field; answers 202 with the queued
 * document. The browser sets Content-Type itself (it carries the multipart boundary).
 */
function uploadPdf(kbId: string, file: File, options: UploadOptions = {}): Promise<KbDocument> {
  const { onProgress, signal } = options;
  return new Promise<KbDocument>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const xhr = new XMLHttpRequest();
    const abort = () => xhr.abort();
    const finish = (settle: () => void) => {
      signal?.removeEventListener('abort', abort);
      settle();
    };

    xhr.open('POST', `${BASE}/knowledge-bases/${id(kbId)}/uploads`);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.setRequestHeader('X-CSRF-Token', csrfToken ?? 'anonymous');
    xhr.upload.onprogress = (event) => onProgress?.(event.loaded, event.lengthComputable ? event.total : file.size);
    xhr.onload = () =>
      finish(() => {
        const payload = parseJsonText(xhr.getResponseHeader('Content-Type'), xhr.responseText);
        if (xhr.status < 200 || xhr.status >= 300) {
          const error = errorFrom(xhr.status, xhr.statusText, xhr.getResponseHeader('Retry-After'), payload);
          if (xhr.status === 401) sessionEnded();
          reject(error);
        } else if (isRecord(payload) && isRecord(payload.document)) {
          resolve(payload.document as unknown as KbDocument);
        } else {
          reject(new ApiError(xhr.status, 'server_error', 'The server sent an answer the app cannot read (not JSON).'));
        }
      });
    // A server that refuses a body mid-stream (e.g. over the size limit) may just close the connection.
    xhr.onerror = () =>
      finish(() =>
        reject(
          new ApiError(
            0,
            'network_error',
            `The upload of ${file.name} was interrupted: the connection to the server was lost.`,
          ),
        ),
      );
    xhr.onabort = () => finish(() => reject(abortError(signal)));
    signal?.addEventListener('abort', abort, { once: true });

    const body = new FormData();
    body.append('file', file, file.name);
    xhr.send(body);
  });
}

/** A PDF document's stored original, as bytes (to compare it with a file chosen again). */
async function getDocumentFile(documentId: string): Promise<ArrayBuffer> {
  let response: Response;
  try {
    response = await fetch(documentFileUrl(documentId), { credentials: 'same-origin' });
  } catch {
    throw unreachable();
  }
  if (!response.ok) {
    const error = errorFrom(
      response.status,
      response.statusText,
      response.headers.get('Retry-After'),
      await readJson(response),
    );
    if (response.status === 401) sessionEnded();
    throw error;
  }
  return response.arrayBuffer();
}

/** The Developer API's reference (Redoc), a page of the API process, not of the app: link to it with a plain <a>. */
export const API_DOCS_PATH = '/docs';

/** The stored original of a PDF document, served inline; `page` opens the browser's viewer at that page. */
export function documentFileUrl(documentId: string, page?: number | null): string {
  const url = `${BASE}/documents/${id(documentId)}/file`;
  return typeof page === 'number' ? `${url}#page=${page}` : url;
}

export const api = {
  // Setup, sign-in, session, account
  getSetup: () => request<SetupStatus>('/setup', { probe: true }),
  createFirstAccount: (body: Credentials) =>
    request<SessionResponse>('/setup/first-account', { method: 'POST', body, probe: true }),
  signUp: (body: Credentials) => request<SessionResponse>('/sign-up', { method: 'POST', body, probe: true }),
  signIn: (body: Credentials) => request<SessionResponse>('/session', { method: 'POST', body, probe: true }),
  getSession: () => request<SessionResponse>('/session', { probe: true }),
  signOut: async () => {
    try {
      return await request<{ signed_out: true }>('/session', { method: 'DELETE', probe: true });
    } finally {
      csrfToken = null;
    }
  },
  // revokeApiKeys: every API key of the user stops working too (a query parameter: a DELETE has no body).
  signOutEverywhere: async (revokeApiKeys: boolean) => {
    try {
      const path = revokeApiKeys ? '/sessions?revoke_api_keys=true' : '/sessions';
      return await request<{ signed_out: number; api_keys_revoked: number }>(path, { method: 'DELETE' });
    } finally {
      csrfToken = null;
    }
  },
  // A wrong current password may be a 401 too: the caller re-checks the session instead of leaving the page.
  changePassword: (body: ChangePassword) =>
    request<{ changed: true; api_keys_revoked: number }>('/account/password', { method: 'PUT', body, probe: true }),
  inspectPasswordLink: (token: string) =>
    request<PasswordLinkInfo>('/password-links/inspect', { method: 'POST', body: { token }, probe: true }),
  redeemPasswordLink: (body: RedeemPasswordLink) =>
    request<SessionResponse>('/password-links/use', { method: 'POST', body, probe: true }),

  // Admin
  listUsers: () => request<{ users: AdminUser[] }>('/admin/users'),
  inviteUser: (body: NewInvitation) => request<Invitation>('/admin/invitations', { method: 'POST', body }),
  createPasswordReset: (userId: string) =>
    request<PasswordReset>(`/admin/users/${id(userId)}/password-reset`, { method: 'POST' }),
  setLibrary: (kbId: string, library: boolean) =>
    request<{ knowledge_base: UnmarkedKnowledgeBase }>(`/knowledge-bases/${id(kbId)}/library`, {
      method: 'PUT',
      body: { library },
    }),

  // Knowledge bases
  listKnowledgeBases: () => request<{ knowledge_bases: KnowledgeBaseListItem[] }>('/knowledge-bases'),
  createKnowledgeBase: (body: NewKnowledgeBase) =>
    request<{ knowledge_base: CreatedKnowledgeBase }>('/knowledge-bases', { method: 'POST', body }),
  getKnowledgeBase: (kbId: string) => request<{ knowledge_base: KnowledgeBase }>(`/knowledge-bases/${id(kbId)}`),
  deleteKnowledgeBase: (kbId: string) =>
    request<{ deleted: true; mode: 'soft' }>(`/knowledge-bases/${id(kbId)}`, { method: 'DELETE' }),
  listDeletedKnowledgeBases: () => request<{ knowledge_bases: DeletedKnowledgeBase[] }>('/deleted-knowledge-bases'),
  restoreKnowledgeBase: (kbId: string) =>
    request<{ knowledge_base: UnmarkedKnowledgeBase }>(`/deleted-knowledge-bases/${id(kbId)}/restore`, {
      method: 'POST',
    }),
  acceptKnowledgeBase: (kbId: string) =>
    request<{ membership: Membership }>(`/knowledge-bases/${id(kbId)}/membership/accept`, { method: 'POST' }),
  /** Leave a KB shared with the user, or decline the invitation: the same request. */
  leaveKnowledgeBase: (kbId: string) =>
    request<{ left: true }>(`/knowledge-bases/${id(kbId)}/membership`, { method: 'DELETE' }),
  getSharing: (kbId: string) => request<Sharing>(`/knowledge-bases/${id(kbId)}/sharing`),
  /** "Invitation sent", the same whether or not an account has the address. */
  shareWithUser: (kbId: string, email: string) =>
    request<InvitationSent>(`/knowledge-bases/${id(kbId)}/sharing/users`, { method: 'POST', body: { email } }),
  withdrawInvitation: (kbId: string, invitationId: string) =>
    request<{ withdrawn: true }>(`/knowledge-bases/${id(kbId)}/sharing/invitations/${id(invitationId)}`, {
      method: 'DELETE',
    }),
  unshareUser: (kbId: string, userId: string) =>
    request<{ unshared: true }>(`/knowledge-bases/${id(kbId)}/sharing/users/${id(userId)}`, { method: 'DELETE' }),
  setOrganisationSharing: (kbId: string, shared: boolean) =>
    request<{ shared: boolean }>(`/knowledge-bases/${id(kbId)}/sharing/organisation`, {
      method: 'PUT',
      body: { shared },
    }),

  // Invitations received (KBs shared with the user, not accepted yet) and the senders the user blocks
  listInvitations: () => request<{ invitations: ReceivedInvitation[] }>('/invitations'),
  listBlockedSenders: () => request<{ blocked_senders: BlockedSender[] }>('/blocked-senders'),
  blockSender: (userId: string) =>
    request<{ blocked_sender: BlockedSender }>(`/blocked-senders/${id(userId)}`, { method: 'PUT' }),
  unblockSender: (userId: string) =>
    request<{ unblocked: true }>(`/blocked-senders/${id(userId)}`, { method: 'DELETE' }),

  // Limits: what the server accepts, so a file it would refuse is refused before it is sent.
  getLimits: () => request<Limits>('/limits'),

  // Documents
  listDocuments: (kbId: string) =>
    request<{ documents: KbDocument[] }>(`/knowledge-bases/${id(kbId)}/documents?include=status`),
  createDocument: (body: NewDocument, origin: NewDocumentOrigin = 'file') =>
    request<{ document: KbDocument }>('/documents', {
      method: 'POST',
      body,
      respondAsync: true,
      headers: { 'X-KBQA-Origin': origin },
    }),
  getDocument: (documentId: string) => request<{ document: KbDocument }>(`/documents/${id(documentId)}`),
  getDocumentContent: (documentId: string) => request<DocumentContent>(`/documents/${id(documentId)}/content`),
  getDocumentFile,
  replaceDocument: (documentId: string, body: DocumentReplacement) =>
    request<{ document: KbDocument }>(`/documents/${id(documentId)}`, { method: 'PUT', body, respondAsync: true }),
  retryDocument: (documentId: string) =>
    request<{ document: KbDocument }>(`/documents/${id(documentId)}/retry`, { method: 'POST', respondAsync: true }),
  // Also cancels a queued or processing ingestion: it is stopped and everything of the document removed.
  deleteDocument: (documentId: string) =>
    request<{ deleted: true }>(`/documents/${id(documentId)}`, { method: 'DELETE' }),
  uploadPdf,

  // Ask
  listModels: () => request<Models>('/models'),
  ask: (body: QueryRequest) => request<QueryResponse>('/query', { method: 'POST', body }),
  askStreaming,

  // Conversations: the Ask page's threads, and the ratings of their answers
  listConversations: () => request<{ conversations: Conversation[] }>('/conversations'),
  createConversation: (body: NewConversation) =>
    request<{ conversation: Conversation }>('/conversations', { method: 'POST', body }),
  getConversation: (conversationId: string) =>
    request<{ conversation: ConversationWithMessages }>(`/conversations/${id(conversationId)}`),
  renameConversation: (conversationId: string, title: string) =>
    request<{ conversation: Conversation }>(`/conversations/${id(conversationId)}`, {
      method: 'PATCH',
      body: { title },
    }),
  deleteConversation: (conversationId: string) =>
    request<{ deleted: true }>(`/conversations/${id(conversationId)}`, { method: 'DELETE' }),
  askInConversation: (conversationId: string, body: TurnRequest) =>
    request<TurnResponse>(`/conversations/${id(conversationId)}/messages`, { method: 'POST', body }),
  askInConversationStreaming,
  rateAnswer: (conversationId: string, messageId: string, body: FeedbackRequest) =>
    request<{ feedback: Feedback }>(`/conversations/${id(conversationId)}/messages/${id(messageId)}/feedback`, {
      method: 'PUT',
      body,
    }),
  clearAnswerRating: (conversationId: string, messageId: string) =>
    request<{ deleted: true }>(`/conversations/${id(conversationId)}/messages/${id(messageId)}/feedback`, {
      method: 'DELETE',
    }),
  /** The owner's view of how the answers that searched a KB were rated: counts and the questions rated down. */
  getKnowledgeBaseRatings: (kbId: string) =>
    request<{ ratings: KnowledgeBaseRatings }>(`/knowledge-bases/${id(kbId)}/ratings`),

  // API keys
  listApiKeys: () => request<{ api_keys: ApiKey[] }>('/api-keys'),
  // The password: a key outlives every session, so the server asks for it (unless the sign-in was a moment ago).
  // A wrong one is a 400, never the end of the session.
  createApiKey: (body: NewApiKey) => request<CreatedApiKey>('/api-keys', { method: 'POST', body }),
  revokeApiKey: (keyId: string) => request<{ revoked: true }>(`/api-keys/${id(keyId)}`, { method: 'DELETE' }),
};

/** A message a person can act on, from anything a call or a component may throw. */
export function messageOf(error: unknown): string {
  // A 429's message states its wait already (once, in one unit): Retry-After is not added to it a second time.
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return 'Something went wrong.';
}
