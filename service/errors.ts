// Every failure the API reports is one of these. The error middleware (http/middleware/errors.ts) maps them to
// the envelope { "error": { "code", "message" } }; anything else becomes a 500 with no detail leaked.
// The layers below the routes (store/, search/, extraction/) throw these classes themselves, in the API's terms: a
// duplicate email is a ConflictError where the store finds it, so no route, command or CLI translates. The only
// Error subclasses elsewhere in service/ are control-flow signals, each caught in its own file and marked so
// (test/unit/errorClasses.test.ts holds that).
// Over 400 lines on purpose: every error class lives here (one taxonomy, one place to read it).

export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'rate_limited'
  | 'server_error';

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  constructor(status: number, code: ErrorCode, message: string) {
    super(message);
    this.status = status;
    this.code = code;
    this.name = new.target.name;
  }

  /** The message as the caller's realm words it: the same for most errors; a web session is no API key. */
  messageFor(_realm: 'api' | 'web' | undefined): string {
    return this.message;
  }
}

export class BadRequestError extends ApiError {
  constructor(message: string) {
    super(400, 'bad_request', message);
  }
}

export const INVALID_API_KEY_MESSAGE = 'API key is missing or invalid';

export class UnauthorizedError extends ApiError {
  constructor(message: string = INVALID_API_KEY_MESSAGE) {
    super(401, 'unauthorized', message);
  }

  /** The web app's: no session, or one that expired or was ended. */
  static signedOut(): UnauthorizedError {
    return new UnauthorizedError('sign in first (no session, or it has expired)');
  }
}

export class ForbiddenError extends ApiError {
  constructor(message: string) {
    super(403, 'forbidden', message);
  }

  static knowledgeBase(id: string): ForbiddenError {
    return new KnowledgeBaseAccessError(id);
  }
}

/** No access (or no write access) to a KB: the contract's words for a key, a person's for a web session. */
export class KnowledgeBaseAccessError extends ForbiddenError {
  readonly knowledgeBaseId: string;
  constructor(id: string) {
    super(`API key lacks access to knowledge base ${id}`);
    this.knowledgeBaseId = id;
  }

  override messageFor(realm: 'api' | 'web' | undefined): string {
    return realm === 'web' ? `your account lacks access to knowledge base ${this.knowledgeBaseId}` : this.message;
  }
}

export class NotFoundError extends ApiError {
  constructor(message: string) {
    super(404, 'not_found', message);
  }

  static knowledgeBase(id: string): NotFoundError {
    return new NotFoundError(`knowledge base ${id} not found`);
  }
}

/** The resource is in a state that does not allow the request yet (a document still ingesting, say). */
export class ConflictError extends ApiError {
  constructor(message: string) {
    super(409, 'conflict', message);
  }
}

/** Too many failed attempts (sign-in); the client may try again after `retryAfterSeconds` (sent as Retry-After). */
export class RateLimitedError extends ApiError {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super(429, 'rate_limited', message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * A wrong password, counted against the account at the client's address: a sign-in's 401, or a signed-in person's
 * 400 naming the field. `triesLeft` more failures are allowed before sign-in pauses; at 0 this failure started a
 * pause of `retryAfterSeconds` (sent as Retry-After). The envelope carries `tries_left` (http/middleware/errors.ts).
 */
export class WrongPasswordError extends ApiError {
  readonly triesLeft: number;
  readonly retryAfterSeconds: number | undefined;
  constructor(status: 400 | 401, message: string, triesLeft: number, retryAfterSeconds?: number) {
    super(status, status === 401 ? 'unauthorized' : 'bad_request', message);
    this.triesLeft = triesLeft;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(limitBytes: number) {
    super(413, 'payload_too_large', `request body exceeds the limit of ${limitBytes} bytes`);
  }
}

/**
 * A Content-Encoding this route does not undo: the anonymous routes take none (inflating is work done for a caller
 * nobody knows yet), the others gzip, deflate and br. 415 with the contract's `bad_request` code.
 */
export class UnsupportedContentEncodingError extends ApiError {
  constructor(encoding: string, accepted: string[]) {
    super(
      415,
      'bad_request',
      accepted.length === 0
        ? `body: Content-Encoding ${encoding.slice(0, 40)} is not accepted here; send the JSON uncompressed`
        : `body: Content-Encoding ${encoding.slice(0, 40)} is not supported; send ${accepted.join(', ')} or none`,
    );
  }
}

/** The user's documents or bytes would exceed their quota (KBQA_MAX_DOCUMENTS_PER_USER, KBQA_MAX_STORAGE_BYTES_PER_USER). */
export class QuotaExceededError extends ApiError {
  constructor(message: string) {
    super(413, 'payload_too_large', message);
  }

  static documents(limit: number, stored: number): QuotaExceededError {
    return new QuotaExceededError(`document quota reached: ${stored} of ${limit} documents stored; delete some first`);
  }

  static conversations(limit: number): QuotaExceededError {
    return new QuotaExceededError(
      `conversation limit reached: you have ${limit}, the most one user may keep (${limit}, KBQA_MAX_CONVERSATIONS_PER_USER); delete one first`,
    );
  }

  static turns(id: string, limit: number): QuotaExceededError {
    return new QuotaExceededError(
      `conversation ${id} holds ${limit} turns, the most one conversation may (${limit}, KBQA_MAX_TURNS_PER_CONVERSATION); start a new conversation`,
    );
  }

  static storage(limit: number, used: number, adding: number): QuotaExceededError {
    return new QuotaExceededError(
      `storage quota exceeded: this needs ${adding} more bytes, ${used} of ${limit} bytes are in use; delete some documents first`,
    );
  }
}

/**
 * The user has KBQA_MAX_QUEUED_DOCUMENTS_PER_USER documents waiting for ingestion: a bulk load waits (Retry-After)
 * instead of filling the queue every user's documents go through.
 */
export class IngestionQueueFullError extends RateLimitedError {
  constructor(limit: number, waiting: number, retryAfterSeconds: number) {
    super(
      `${waiting} documents of yours are waiting for ingestion (the limit is ${limit}); retry in ${retryAfterSeconds} s`,
      retryAfterSeconds,
    );
  }
}

/**
 * The user has too many questions in hand (commands/queryAdmission.ts): KBQA_QUERY_CONCURRENCY_PER_USER answered and
 * KBQA_QUERY_QUEUE_PER_USER waiting, one that waited KBQA_QUERY_WAIT_MS, or KBQA_QUERY_RATE_PER_MINUTE. 429: what it
 * waits for is its own user's questions.
 */
export class QueryBusyError extends RateLimitedError {
  static tooMany(
    running: number,
    waiting: number,
    limits: { concurrencyPerUser: number; queuePerUser: number },
    retryAfterSeconds: number,
  ): QueryBusyError {
    return new QueryBusyError(
      `${running} questions of yours are being answered and ${waiting} are waiting (the limits are ${limits.concurrencyPerUser} at once and ${limits.queuePerUser} waiting); retry in ${retryAfterSeconds} s`,
      retryAfterSeconds,
    );
  }

  static waitedTooLong(
    limits: { concurrencyPerUser: number; waitMs: number },
    retryAfterSeconds: number,
  ): QueryBusyError {
    return new QueryBusyError(
      `this question waited ${limits.waitMs / 1000} s for one of your ${limits.concurrencyPerUser} questions being answered to end; retry in ${retryAfterSeconds} s`,
      retryAfterSeconds,
    );
  }

  static overRate(perMinute: number, retryAfterSeconds: number): QueryBusyError {
    return new QueryBusyError(
      `more than ${perMinute} questions a minute (the limit); retry in ${retryAfterSeconds} s`,
      retryAfterSeconds,
    );
  }
}

/** A `?cursor=` this API did not issue (or one altered on the way): the caller's mistake. Thrown by the store. */
export class InvalidCursorError extends BadRequestError {
  constructor() {
    super('cursor: not a cursor this API issued');
  }
}

/**
 * An account with this email exists (the users' unique index, on the lower-cased address, says so: the store
 * throws it). The message names the address as it was given.
 */
export class EmailTakenError extends ConflictError {
  readonly email: string;
  constructor(email: string) {
    super(`a user with email ${email} already exists`);
    this.email = email;
  }
}

/** An organisation of this name exists (unique index; thrown by the store). */
export class OrganisationNameTakenError extends ConflictError {
  constructor(name: string) {
    super(`an organisation named ${name} already exists`);
  }
}

/** The one first account exists, or another request (or an earlier run) has claimed it: the store's marker says so. */
export class FirstAccountTakenError extends ConflictError {
  constructor() {
    super('the first account already exists; sign in instead');
  }
}

/** Why a PDF gave no text: what the reader found, and the two limits a reading can reach (size or memory, time). */
export type PdfFailureReason = 'encrypted' | 'corrupt' | 'no_text' | 'too_many_pages' | 'too_large' | 'timeout';

const numbers = new Intl.NumberFormat('en-US');

/** Sizes in binary units, written "MB" as most file managers do: a 50 MiB limit reads "50 MB". */
function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${numbers.format(bytes)} bytes`;
  const [value, unit] = bytes < 1024 ** 2 ? [bytes / 1024, 'KB'] : [bytes / 1024 ** 2, 'MB'];
  return `${numbers.format(Math.round(value * 10) / 10)} ${unit}`;
}

/**
 * A PDF that gives no text (extraction/pdf.ts throws it). The document's own fault, so a 400: the same bytes fail
 * the same way, and an ingestion meeting it is not retried. The message is shown to people in the document's
 * status, so it says what to do.
 */
export class PdfExtractionError extends BadRequestError {
  readonly reason: PdfFailureReason;

  constructor(reason: PdfFailureReason, message: string) {
    super(message);
    this.reason = reason;
  }

  static encrypted(): PdfExtractionError {
    return new PdfExtractionError(
      'encrypted',
      'the PDF is password-protected (encrypted); remove the password and upload it again',
    );
  }

  static corrupt(): PdfExtractionError {
    return new PdfExtractionError('corrupt', 'the file is not a readable PDF (damaged or not a PDF)');
  }

  static noText(): PdfExtractionError {
    return new PdfExtractionError('no_text', 'scanned PDF: no text to index');
  }

  static tooLarge(bytes: number, maxBytes: number): PdfExtractionError {
    return new PdfExtractionError(
      'too_large',
      `the PDF is ${formatBytes(bytes)}; the limit is ${formatBytes(maxBytes)}`,
    );
  }

  static tooManyPages(pages: number, maxPages: number): PdfExtractionError {
    return new PdfExtractionError(
      'too_many_pages',
      `the PDF has ${numbers.format(pages)} pages; the limit is ${numbers.format(maxPages)}`,
    );
  }

  static outOfMemory(maxMemoryMb: number): PdfExtractionError {
    return new PdfExtractionError(
      'too_large',
      `the PDF needs more than the ${numbers.format(maxMemoryMb)} MB of memory allowed to read it (its compressed contents expand too far)`,
    );
  }

  static tooManyScannedPages(pages: number, maxPages: number): PdfExtractionError {
    return new PdfExtractionError(
      'too_many_pages',
      `the PDF has ${numbers.format(pages)} scanned pages (no text layer) to read by OCR; the limit is ${numbers.format(maxPages)} (KBQA_OCR_MAX_PAGES)`,
    );
  }

  static scanTooLarge(message: string): PdfExtractionError {
    return new PdfExtractionError('too_large', message);
  }

  static timeout(timeoutMs: number): PdfExtractionError {
    return new PdfExtractionError('timeout', `the PDF took longer than ${numbers.format(timeoutMs / 1000)} s to read`);
  }
}

/** Why an office document, spreadsheet, deck or web page gave no text: a bound it passed, or what the reader found. */
export type DocumentFailureReason =
  'corrupt' | 'too_large' | 'too_many_rows' | 'too_many_slides' | 'xml_refused' | 'timeout';

/**
 * A DOCX, ODT, PPTX, XLSX, CSV or HTML file that cannot be read (the readers of extraction/ throw it). As for a PDF,
 * the document's own fault, so a 400 that is never retried; the message names the limit it passed, with its number.
 */
export class DocumentReadError extends BadRequestError {
  readonly reason: DocumentFailureReason;

  constructor(reason: DocumentFailureReason, message: string) {
    super(message);
    this.reason = reason;
  }

  static corrupt(kind: string, detail: string): DocumentReadError {
    return new DocumentReadError('corrupt', `the file is not a readable ${kind} (${detail})`);
  }

  static tooManyEntries(entries: number, maxEntries: number): DocumentReadError {
    return new DocumentReadError(
      'too_large',
      `the file holds ${numbers.format(entries)} zip entries; the limit is ${numbers.format(maxEntries)} (KBQA_DOC_MAX_ZIP_ENTRIES)`,
    );
  }

  /**
   * A zip's part (or all its parts) inflating past a byte limit: `declaredBytes` when its headers said so before
   * inflating, null when it was counted while inflating (the stream is stopped there).
   */
  static inflates(what: string, declaredBytes: number | null, maxBytes: number, setting: string): DocumentReadError {
    const size = declaredBytes === null ? `past ${formatBytes(maxBytes)}` : `to ${formatBytes(declaredBytes)}`;
    return new DocumentReadError(
      'too_large',
      `${what} inflates ${size}; the limit is ${formatBytes(maxBytes)} (${setting}; a zip bomb is refused)`,
    );
  }

  static ratio(part: string, ratio: number, maxRatio: number): DocumentReadError {
    return new DocumentReadError(
      'too_large',
      `${part} inflates ${numbers.format(Math.round(ratio))}:1; the limit is ${numbers.format(maxRatio)}:1 (KBQA_DOC_MAX_ZIP_RATIO; a zip bomb is refused)`,
    );
  }

  static tooLarge(bytes: number, maxBytes: number): DocumentReadError {
    return new DocumentReadError(
      'too_large',
      `the file is ${formatBytes(bytes)}; the limit is ${formatBytes(maxBytes)}`,
    );
  }

  static tooManyRows(maxRows: number): DocumentReadError {
    return new DocumentReadError(
      'too_many_rows',
      `the file has more than ${numbers.format(maxRows)} rows; the limit is ${numbers.format(maxRows)} (KBQA_DOC_MAX_ROWS)`,
    );
  }

  static tooManySlides(slides: number, maxSlides: number): DocumentReadError {
    return new DocumentReadError(
      'too_many_slides',
      `the deck has ${numbers.format(slides)} slides; the limit is ${numbers.format(maxSlides)} (KBQA_DOC_MAX_SLIDES)`,
    );
  }

  /** The reader child passed its memory budget (KBQA_PDF_MAX_MEMORY_MB bounds every reader child). */
  static outOfMemory(maxMemoryMb: number): DocumentReadError {
    return new DocumentReadError(
      'too_large',
      `the file needs more than the ${numbers.format(maxMemoryMb)} MB of memory allowed to read it (KBQA_PDF_MAX_MEMORY_MB)`,
    );
  }

  static timeout(timeoutMs: number): DocumentReadError {
    return new DocumentReadError('timeout', `the file took longer than ${numbers.format(timeoutMs / 1000)} s to read`);
  }

  static xmlRefused(part: string): DocumentReadError {
    return new DocumentReadError(
      'xml_refused',
      `${part} declares a DTD (<!DOCTYPE>); XML entities are refused (entity expansion, external entities)`,
    );
  }
}

/** A dependency (OpenSearch, MongoDB, the embedder, an answer model) is unavailable; clients retry with backoff. */
export class UpstreamUnavailableError extends ApiError {
  readonly upstream: string;
  constructor(upstream: string, message: string, options?: { cause?: unknown }) {
    super(503, 'server_error', message);
    this.upstream = upstream;
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/**
 * Vectors were asked of an embedder this service is not configured with (the live chunk index was built by another
 * embedder, say). The deployment's mistake, not the client's, and one a client can only wait out: 503 (never a 500),
 * logged and counted as the embedder being unavailable, with a message naming what to set. A queued ingestion
 * meeting it is retried like any outage, so a restart with the embedder configured lets it finish.
 */
export class EmbedderNotConfiguredError extends UpstreamUnavailableError {
  readonly embedder: string;
  constructor(embedder: string, configured: string[]) {
    super(
      'embedder',
      `the embedder ${embedder} is not configured (this service embeds with ${configured.join(', ')}): ` +
        (embedder.startsWith('openai-')
          ? 'set KBQA_OPENAI_BASE_URL and KBQA_OPENAI_EMBEDDING_MODEL (and KBQA_OPENAI_EMBEDDING_DIMENSIONS if it was shortened) to the model it names'
          : 'no embedder of that name exists; KBQA_EMBEDDER selects bge-small-en-v1.5 or openai'),
    );
    this.embedder = embedder;
  }
}

/**
 * OpenSearch refuses writes to the chunk index: a read-only or write block, which is what a node's disk reaching
 * the flood-stage watermark sets (index.blocks.read_only_allow_delete; OpenSearch lifts it itself once the disk is
 * below the high watermark again). Queries still work. Deleting documents does not (OpenSearch 3 refuses them
 * under that block too: "allow delete" means deleting whole indices). An outage, not a defect: ingestions and
 * deletions are refused (503) and queued jobs wait, until the block is lifted.
 */
export class SearchIndexReadOnlyError extends UpstreamUnavailableError {
  /** The block OpenSearch named (a setting such as index.blocks.read_only_allow_delete, or its reason). */
  readonly block: string;
  /** `storedDocumentId`: a request waited on this document when the block came; it is kept and resumes after it. */
  constructor(block: string, storedDocumentId?: string) {
    super(
      'opensearch',
      storedDocumentId === undefined
        ? "the search index is read-only (a node's disk is full?); ingestion resumes when the block is lifted; retry later"
        : `the search index is read-only (a node's disk is full?); ingestion resumes when the block is lifted: document ${storedDocumentId} is stored and queued, follow GET /api/v1/documents/${storedDocumentId}`,
    );
    this.block = block;
  }
}

/** The API runs without a built web app (`web/dist`): pages cannot be served until it is built. */
export class WebAppNotBuiltError extends ApiError {
  constructor() {
    super(
      503,
      'server_error',
      'the web app is not built on this server: run `npm start` (it builds the app) or `npm run build:web`, then reload',
    );
  }
}

/** This process is shutting down (SIGTERM) and let go of the work a request waited on; another process finishes it. */
export class ServiceStoppingError extends ApiError {
  constructor(message: string) {
    super(503, 'server_error', message);
  }
}

/**
 * A `kbqa` admin command refused or failed in a way its operator can act on (the message says how). Never an API
 * response: the CLI prints the message and exits 1. Each kind below is one.
 */
export class AdminCommandError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A backup that cannot be made or restored as asked (a non-empty target, a damaged backup, another embedder). */
export class BackupError extends AdminCommandError {}

/**
 * A snapshot repository could not be registered or used, most often because its location is outside every node's
 * path.repo. OpenSearch answers 500 for that, which the client would take for an outage: it is a set-up mistake.
 */
export class SnapshotRepositoryError extends AdminCommandError {}

/**
 * `kbqa index …` cannot do what was asked as things stand (counts that do not match after a fill, an alias behind
 * more than one index, an index that is not this alias's, a template edited in place): the message says what to do.
 */
export class IndexMigrationError extends AdminCommandError {}

/** A migration's `_reindex` of a batch of document versions did not finish within its deadline: the task was cancelled. */
export class CopyTimedOutError extends IndexMigrationError {}

/** The search assets in KBQA_SEARCH_ASSETS_DIR cannot be used (no template file, a version naming a missing pipeline). */
export class SearchAssetsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SearchAssetsError';
  }
}

// ---- Not API answers: defects (a 500 with a request id if one reaches a request) and refusals to start.

/**
 * OpenSearch refused the request itself (a 4xx, or a 500 whose root cause is the request, such as too many
 * clauses): retrying cannot help, so it is not an outage (503) but a kbqa bug, answered as 500 with a request id.
 * Thrown by search/client.ts, which classifies every OpenSearch failure.
 */
export class OpenSearchRequestError extends Error {
  readonly status: number;
  readonly type: string | undefined;
  readonly reason: string | undefined;
  constructor(status: number, type: string | undefined, reason: string | undefined, message: string) {
    super(message);
    this.name = 'OpenSearchRequestError';
    this.status = status;
    this.type = type;
    this.reason = reason;
  }
}

/** A chunk OpenSearch refused for a reason that would repeat (a mapping conflict, say): a defect, not an outage. */
export class ChunkIndexingError extends Error {}

/** An ingestion job whose process stopped too many times while running it (a document that crashes the process, say). */
export class IngestionAbandonedError extends Error {}

/** The environment asks for a configuration that cannot run (config.ts): the process says what to set and exits. */
export class ConfigError extends Error {}

/**
 * What a log line may say about an error: its class, message and codes, never the request or response bodies that
 * client libraries attach (an OpenSearch error's meta carries the query and its vector, a failed bulk the text).
 */
export function errorSummary(error: unknown): {
  name: string;
  message: string;
  code?: unknown;
  status?: unknown;
  upstream?: string;
} {
  if (!(error instanceof Error)) return { name: typeof error, message: String(error).slice(0, 500) };
  const { code, status, statusCode } = error as { code?: unknown; status?: unknown; statusCode?: unknown };
  return {
    name: error.name,
    message: error.message.slice(0, 500),
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(typeof (status ?? statusCode) === 'number' ? { status: status ?? statusCode } : {}),
    ...(error instanceof UpstreamUnavailableError ? { upstream: error.upstream } : {}),
  };
}
