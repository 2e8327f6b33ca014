// Every response of /api/web, as the endpoint spec (web-api.md) writes it. Field names are the API's own
// (snake_case): one name per concept, from the index to the screen.

export interface User {
  id: string;
  email: string;
  is_admin: boolean;
}

/** Every call that signs someone in answers with this; its csrf_token goes on every later state-changing call. */
export interface SessionResponse {
  user: User;
  csrf_token: string;
}

export interface SetupStatus {
  first_account_needed: boolean;
  sign_up_open: boolean;
}

export interface Credentials {
  email: string;
  password: string;
}

export type Role = 'owner' | 'viewer' | 'org-member' | 'library';

export interface KnowledgeBase {
  id: string;
  name: string;
  description: string | null;
  role: Role;
  /** Present in the list, absent from GET /knowledge-bases/:id. */
  document_count?: number;
  is_default: boolean;
  created_at: string;
  /** Shared with the user and not accepted yet: searched only when ticked on Ask (the web app's field). */
  pending?: boolean;
}

/** The user's relation to a KB: accept answers it, no longer pending. */
export interface Membership {
  knowledge_base_id: string;
  role: Role;
  pending: boolean;
}

export interface DeletedKnowledgeBase {
  id: string;
  name: string;
  description: string | null;
  deleted_at: string;
  restorable_until: string;
}

export interface SharedUser {
  id: string;
  email: string;
  /** Invited, not accepted yet (absent from the share response). */
  pending?: boolean;
}

export interface Sharing {
  users: SharedUser[];
  organisation: { id: string; name: string; shared: boolean } | null;
  is_library: boolean;
}

export type DocumentStatus = 'queued' | 'processing' | 'ready' | 'failed';

/** Text arrives as JSON content; a PDF is uploaded as a file, stored, and its text extracted page by page. */
export type DocumentKind = 'text' | 'pdf';

/** Where an ingestion is. PDFs go through two phases: `extracting` (pages), then `embedding` (chunks). */
export interface IngestionProgress {
  embedded: number;
  total: number;
  /** Absent for text documents: they only embed. */
  phase?: 'extracting' | 'embedding';
  /** PDFs: pages whose text has been extracted. */
  pages?: { done: number; total: number };
}

export interface KbDocument {
  id: string;
  knowledge_base_id: string;
  filename: string;
  title: string | null;
  source: string | null;
  kind: DocumentKind;
  status: DocumentStatus;
  chunks: number;
  total_chunks: number;
  created_at: string;
  updated_at: string;
  /** While queued or processing. */
  progress?: IngestionProgress;
  /** When failed. */
  error?: string;
  /** Web app only: where it was added (the paste form, a file, or the Developer API). */
  origin?: DocumentOrigin;
  /** Web app only, when failed: whether a retry can pass (false: the file itself is the problem; offer Remove). */
  retryable?: boolean;
  /** Web app only, while queued: documents the runners take before it (those being read count for a PDF). */
  ahead?: number;
}

export type DocumentOrigin = 'paste' | 'file' | 'api';

/** A passage (chunk) of a document's live version, in reading order. */
export interface DocumentPassage {
  chunk_index: number;
  heading_path: string[];
  /** PDF pages (1-based, inclusive); null for text documents. */
  page_start: number | null;
  page_end: number | null;
  text: string;
}

/** GET /documents/{id}/content (web only): what the document page shows. */
export interface DocumentContent {
  knowledge_base: { id: string; name: string };
  /** The text as it was sent; null for a PDF (its passages carry the pages' text). */
  content: string | null;
  /** The first passages (at most 500), in reading order. */
  passages: DocumentPassage[];
  passages_total: number;
}

export interface NewDocument {
  kb_id: string;
  filename: string;
  content: string;
}

/** How the web app added a text document: sent as X-KBQA-Origin, so the document page can say "Pasted text". */
export type NewDocumentOrigin = 'paste' | 'file';

export interface DocumentReplacement {
  filename?: string;
  content: string;
}

/** GET /limits: what the server accepts, checked before a file is sent. */
export interface Limits {
  /** A PDF upload's file size. */
  max_upload_bytes: number;
  /** A text document's `content`. */
  max_content_bytes: number;
}

export interface Models {
  models: string[];
  default_model: string;
}

export interface QueryRequest {
  query: string;
  /** Omitted: every knowledge base the caller can reach. */
  knowledge_base_ids?: string[];
  model?: string;
  include_chunks?: boolean;
  max_results?: number;
}

export interface Citation {
  document_id: string;
  title: string | null;
  snippet: string;
  similarity: number | null;
  /** The PDF pages the passage comes from (1-based, inclusive); null for text documents. */
  page_start: number | null;
  page_end: number | null;
}

export interface RetrievedChunk {
  id: string;
  document_id: string;
  knowledge_base_id: string;
  filename: string;
  title: string | null;
  /** The spec does not say whether this is one string or the list of headings: both are shown. */
  heading_path: string | string[] | null;
  chunk_index: number;
  /** As in Citation: null for text documents. */
  page_start: number | null;
  page_end: number | null;
  text: string;
  score: number | null;
  similarity: number | null;
  bm25_rank: number | null;
  vector_rank: number | null;
}

export interface QueryResponse {
  /** Plain text with markers [1], [2] … referring to citations[n - 1]. */
  answer: string;
  citations: Citation[];
  model: string;
  knowledge_base_ids: string[];
  chunks?: RetrievedChunk[];
}

export interface ApiKey {
  id: string;
  name: string;
  masked: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface CreatedApiKey {
  api_key: ApiKey;
  /** The full key: in this one response only. */
  key: string;
}

export interface AdminUser {
  id: string;
  email: string;
  is_admin: boolean;
  has_password: boolean;
  created_at: string;
}

export interface Invitation {
  user: { id: string; email: string };
  /** `<origin>/set-password#token=…`: shown once, there is no mail server. */
  link: string;
  expires_at: string;
}
