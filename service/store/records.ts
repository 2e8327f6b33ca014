// The shapes stored in MongoDB. Identifiers are UUID strings kept in `_id`; timestamps are Dates.
import type { FileKind } from '../extraction/fileKinds.ts';
import type { MetadataValue } from '../search/metadataFilter.ts';

export interface UserRecord {
  _id: string;
  email: string;
  organisation_id: string | null;
  created_at: Date;
  /** Argon2id (PHC string). Absent or null: the user was invited and has not set a password yet. */
  password_hash?: string | null;
  /** Admins invite users and curate library KBs. Absent on records older than the web app: false. */
  is_admin?: boolean;
}

/** Who a request acts as: what authorization needs of a user. */
export type Principal = Pick<UserRecord, '_id' | 'email' | 'organisation_id'>;

export interface OrganisationRecord {
  _id: string;
  name: string;
  created_at: Date;
}

export interface ApiKeyRecord {
  /**
   * SHA-256 of the full key, hex: the key itself is never stored. It is the _id so that authentication is one
   * primary-key lookup on every server (FerretDB's SQLite backend indexes nothing else).
   */
  _id: string;
  /** The key's public id (UUID), used to list and revoke it. */
  id: string;
  user_id: string;
  /**
   * The key's user as authorization sees them, copied onto the key so authenticating is ONE primary-key lookup.
   * The users collection stays the source of truth; setUserOrganisation updates both.
   */
  user_email: string;
  organisation_id: string | null;
  name: string;
  /** What listings show, e.g. kbqa_live_ab12…9xYz. */
  masked: string;
  created_at: Date;
  revoked_at: Date | null;
}

/**
 * When a key was last used, apart from the key record: requests write it, and a write racing an admin change to
 * the key record would otherwise lose one of them (FerretDB rewrites whole documents on update).
 */
export interface ApiKeyUsageRecord {
  /** The key's public id. */
  _id: string;
  last_used_at: Date;
}

export interface KnowledgeBaseRecord {
  _id: string;
  owner_id: string;
  name: string;
  description: string;
  is_default: boolean;
  is_library: boolean;
  /** Users the KB is shared with (`viewer`), invited or accepted. */
  shared_user_ids: string[];
  /**
   * Those of `shared_user_ids` who accepted the share (or whom an operator shared it with): only theirs is it in the
   * default search scope. Absent from records written before invitations existed: their shares are all pending.
   */
  accepted_user_ids?: string[];
  shared_organisation_ids: string[];
  created_at: Date;
  /** Set by a soft delete; null while the KB is live. */
  deleted_at: Date | null;
}

export type DocumentStatus = 'queued' | 'processing' | 'ready' | 'failed';

export type DocumentOrigin = 'paste' | 'file' | 'api';

/**
 * A document. Its filename, title and chunk counts describe the LIVE version (the one retrieval serves); `status`,
 * `progress` and `error` describe the newest ingestion. A new document has no live version until its first
 * ingestion is ready; a replacement keeps the old version live until the new one is ready.
 */
export interface DocumentRecord {
  _id: string;
  knowledge_base_id: string;
  filename: string;
  title: string;
  source: 'api' | 'upload';
  /**
   * A file kind (extraction/fileKinds.ts: 'pdf', 'docx' …): its text is extracted from the stored original
   * (`file_id`) by every ingestion. Absent or 'text': the text sent.
   */
  kind?: 'text' | FileKind;
  /** The original file in GridFS (store/files.ts), for file kinds. */
  file_id?: string | null;
  chunks: number;
  total_chunks: number;
  /** The live version's pages read by OCR (no text layer), with Tesseract's confidence 0–100. Absent: none. */
  scanned_pages?: { page: number; confidence: number }[];
  created_at: Date;
  updated_at: Date;
  status: DocumentStatus;
  /** The newest version asked for (1 for a new document, +1 per replacement). */
  version: number;
  /** The version whose chunks retrieval serves; null until the first ingestion is ready. */
  live_version: number | null;
  /**
   * While queued or processing: segments embedded of total, and for a PDF first the pages extracted of its page count
   * (`phase` says which step the ingestion is in; `extracting` without pages while the file is opened; `characters`:
   * of the page in progress, page done + 1, read so far; `waiting`: between two steps, for the reader).
   */
  progress: {
    embedded: number;
    total: number;
    phase?: 'extracting' | 'embedding';
    pages?: { done: number; total: number; characters?: number; waiting?: boolean };
  } | null;
  /** Why the newest ingestion failed, in words a user can act on. */
  error: string | null;
  /**
   * Whether a retry of that failure can pass: false for what the document itself causes (a scanned or broken PDF,
   * no text). Absent (older records, no failure): retryable.
   */
  error_retryable?: boolean;
  /** Where it was added: the web app's paste form, a file (web upload), or the Developer API. Absent on older records. */
  origin?: DocumentOrigin;
  /**
   * What the user's storage quota counts for it: its text's UTF-8 bytes (the newest version asked for), or its
   * original file's size. Absent on records older than quotas: 0.
   */
  stored_bytes?: number;
  /** The live version's metadata (a new document's from the start). Absent on records older than metadata: none. */
  metadata?: MetadataEntry[];
  /** The newest ingestion's wait, from queued until its work began (a PDF: until it had the reader), in ms. */
  queue_wait_ms?: number;
  /** A PDF: the longest its newest ingestion held the reader in one step (extraction/pdf.ts), in ms. */
  longest_step_ms?: number;
}

/** What an ingestion records of its waits, with its progress (see DocumentRecord). */
export type IngestionTimings = Pick<DocumentRecord, 'queue_wait_ms' | 'longest_step_ms'>;

/**
 * Document metadata as stored: a list of entries, in the caller's order, not an object, because FerretDB refuses a
 * field name with a dot and metadata keys may have one.
 */
export interface MetadataEntry {
  key: string;
  value: MetadataValue;
}

/**
 * An ingestion in flight: one per document at most, keyed by the document id, deleted when it ends (ready or
 * failed). A query reads the `hidden` chunk versions of its KBs' jobs and excludes them, so a version is never
 * seen half-built, and a replaced one never beside its successor. The collection only ever holds work in flight,
 * so that read is small even where the server scans (FerretDB).
 */
export interface IngestJobRecord {
  /** The document id. */
  _id: string;
  knowledge_base_id: string;
  /** The version this job builds. */
  version: number;
  /** Where its original content is stored (document_contents _id). */
  content_id: string;
  /** For a PDF: the original file (GridFS) its text is extracted from; `content_id` is then unused. */
  file_id?: string | null;
  filename: string;
  title: string;
  /** The live version this job replaces when it is ready (null for a new document). */
  replaces: number | null;
  /** The version's metadata, put on each of its chunks (and on the record when it goes live). Absent on older jobs: the record's. */
  metadata?: MetadataEntry[];
  /** 'build': embedding and indexing; 'retire': the new version is live, the replaced one is being removed. */
  phase: 'build' | 'retire';
  /** Chunk versions retrieval must not serve right now. */
  hidden: number[];
  /** Chunk counts of the built version, set when it goes live. */
  built: { chunks: number; total_chunks: number; scanned_pages?: { page: number; confidence: number }[] } | null;
  /** The process holding the job and until when (ms since epoch); null: free to claim. */
  lease_owner: string | null;
  lease_until: number | null;
  /** Claims of the job from the queue so far: the next claimer inserts claim token `claims + 1`. Absent on older jobs: 0. */
  claims?: number;
  /** Whether a client waits on the request (all or nothing) or follows the status (retried on outages). */
  mode: 'sync' | 'async';
  attempts: number;
  /** Not claimed before this time (ms since epoch): the back-off after a transient failure. */
  not_before: number;
  created_at: Date;
}

/**
 * Claim number `claim` of an ingestion job, `_id` `${job_id}:${claim}`. A claim is won by inserting it: a unique _id
 * insert is atomic on FerretDB v1 too, where a filtered update is a read then a write (two claimers both "win" a
 * compare-and-set). Deleted with the job; one left behind (a crash between the two deletes) is stale, and `kbqa
 * doctor` removes it.
 */
export interface IngestJobClaimRecord {
  _id: string;
  job_id: string;
  knowledge_base_id: string;
  claim: number;
  owner: string;
  /** When it was inserted (ms since epoch): a token older than a lease that the job does not show is dead. */
  created_at: number;
}

/**
 * A document's original text, kept so every chunk can be rebuilt (re-chunking, a new embedder, a new mapping).
 * A collection of its own: listing and counting documents never reads megabytes of text (FerretDB's SQLite
 * backend scans whole records for filters other than _id).
 */
export interface DocumentContentRecord {
  /** The document's id for the live version's text; `<document id>@<version>` for a replacement in flight. */
  _id: string;
  /** Absent on records written before replacements existed (their _id is the document id). */
  document_id?: string;
  knowledge_base_id: string;
  content: string;
  /** A replacement's text: when its request claimed the version (a claim never started is stale after a while). */
  claimed_at?: Date;
}

/**
 * A signed-in browser. The session id itself (256 random bits, in the HttpOnly cookie) is never stored: `_id` is its
 * SHA-256, so a look-up is one primary-key probe and a leaked database holds no usable session. The user's identity
 * is copied here, as on API keys, so an authenticated web request is ONE read.
 */
export interface SessionRecord {
  _id: string;
  user_id: string;
  user_email: string;
  organisation_id: string | null;
  is_admin: boolean;
  /** Sent back by the app in X-CSRF-Token on every state-changing request (compared in constant time). */
  csrf_token: string;
  created_at: Date;
  /** When the password was last proved for this session (its sign-in). Absent on older records: created_at. */
  authenticated_at?: Date;
  /** Idle expiry counts from here; written at most once a minute per session. */
  last_seen_at: Date;
  /** Absolute expiry: created_at + KBQA_SESSION_MAX_HOURS, whatever the activity. */
  expires_at: Date;
}

/**
 * What a user stores, by user id: their documents (every KB they own, soft-deleted ones too) and the bytes those
 * hold (stored_bytes of each). The quota checks read it; store/usage.ts keeps it.
 */
export interface UsageRecord {
  _id: string;
  documents: number;
  bytes: number;
}

/** A one-time link to set a password (an invitation or a reset). `_id` is the SHA-256 of the link's token. */
export interface PasswordLinkRecord {
  _id: string;
  user_id: string;
  purpose: 'invite' | 'reset';
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

/**
 * Sign-in attempts in the current window, per account (`account:<email>`) and per client address (`address:<ip>`):
 * counted before the password is checked (so a burst cannot outrun the count); a success gives its count back.
 */
export interface SignInFailuresRecord {
  _id: string;
  count: number;
  window_started_at: Date;
  /** An account at an address only (commands/sessions.ts): its sign-ins pause until then. */
  locked_until?: Date | null;
  /** Lock-outs in the current streak: the next one lasts longer. */
  lockouts?: number;
  /** When the sweep may delete it (the window and the streak's memory over); absent: the window's end. */
  keep_until?: Date;
}

/**
 * An owner invited an address to a KB (commands/shareInvitations.ts): one per KB and address, whether or not an
 * account has that address, so the sharing call and the owner's list say the same either way. Gone once answered
 * (accepted, declined) or withdrawn.
 */
export interface ShareInvitationRecord {
  /** `<KB id>|<address>`: a second invitation of one address to one KB is a duplicate-key refusal, atomically. */
  _id: string;
  /** The invitation's public id (the owner withdraws it by this; the address stays out of URLs). */
  id: string;
  knowledge_base_id: string;
  sender_id: string;
  /** Trimmed, lower case. */
  email: string;
  created_at: Date;
}

/**
 * One of the `n` places an invitation holds against a bound (`sender:<user id>` or `recipient:<address>`): the
 * `_id` `<key>#<n>` is unique, so "at most n pending" holds across processes on FerretDB v1 too.
 */
export interface ShareInvitationSlotRecord {
  _id: string;
  key: string;
  /** The public id of the invitation holding it. */
  invitation_id: string;
  created_at: Date;
}

/**
 * A person's no to invitations: `declined|<KB id>|<recipient id>` (that KB, from its owner) or
 * `blocked|<recipient id>|<sender id>` (every KB of that sender, until unblocked).
 */
export interface ShareRefusalRecord {
  _id: string;
  kind: 'declined' | 'blocked';
  recipient_id: string;
  sender_id: string;
  knowledge_base_id: string | null;
  created_at: Date;
}

/** Marks that the first account was created: its unique _id makes "first" hold under concurrent requests. */
export interface InstallationRecord {
  _id: 'first_account';
  /** The request that claimed it (released again if creating the account then fails). */
  claimed_by: string;
  created_at: Date;
}

/**
 * A conversation: its user's alone (every lookup checks user_id; another user's id is "not found"). `knowledge_base_ids`
 * null: each turn searches the default scope of that moment. `turns` counts the assistant answers stored.
 */
export interface ConversationRecord {
  _id: string;
  user_id: string;
  /** Null until the first question names it (the question, cut to 80 characters) or a caller sets one. */
  title: string | null;
  knowledge_base_ids: string[] | null;
  turns: number;
  /**
   * The last turns as the next turn reads them (at most HISTORY_TURNS, answers cut to the history's bound), kept here
   * so a turn reads one record by _id: FerretDB scans conversation_messages for anything but an _id equality.
   * Absent on conversations stored before it existed: their next turn reads the messages once and writes it.
   */
  recent_turns?: RecentTurn[];
  created_at: Date;
  updated_at: Date;
}

/** A turn as the next one reads it: the question, the answer (cut), what was searched and the titles it cited. */
export interface RecentTurn {
  question: string;
  answer: string;
  standalone_query: string;
  cited_titles: string[];
}

/** A citation as a conversation keeps it: the API's fields and the KB it came from (to hide it once unreachable). */
export interface StoredCitation {
  document_id: string;
  knowledge_base_id: string | null;
  title: string;
  /** Null when read back by a user who no longer reaches the KB ("source no longer available"); stored, never. */
  snippet: string | null;
  similarity: number;
  page_start: number | null;
  page_end: number | null;
  /** See rag/citationMapper.ts (absent on citations kept before it). */
  location?: string | null;
  /** Read by OCR. Absent on citations stored before OCR. */
  scanned?: boolean;
}

export interface MessageFeedback {
  rating: 'up' | 'down';
  comment: string | null;
  created_at: Date;
}

/**
 * One message of a conversation: the question (`user`) or the answer (`assistant`). A turn's two messages are
 * written together, after the answer, so a refused or failed turn leaves none. `position` orders them (2n, 2n+1).
 */
export interface ConversationMessageRecord {
  _id: string;
  conversation_id: string;
  user_id: string;
  position: number;
  role: 'user' | 'assistant';
  content: string;
  citations: StoredCitation[] | null;
  model: string | null;
  standalone_query: string | null;
  knowledge_base_ids: string[] | null;
  feedback: MessageFeedback | null;
  created_at: Date;
  /**
   * An assistant message's question, kept with it so ratings and exports read one record (FerretDB pushes down only
   * `_id`: a lookup by conversation and position scans). Absent on user messages and on answers stored before it.
   */
  question?: string;
}
