// The shapes stored in MongoDB. Identifiers are UUID strings kept in `_id`; timestamps are Dates.

export interface UserRecord {
  _id: string;
  email: string;
  organisation_id: string | null;
  created_at: Date;
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
  shared_user_ids: string[];
  shared_organisation_ids: string[];
  created_at: Date;
  /** Set by a soft delete; null while the KB is live. */
  deleted_at: Date | null;
}

export interface DocumentRecord {
  _id: string;
  knowledge_base_id: string;
  filename: string;
  title: string;
  source: 'api' | 'upload';
  chunks: number;
  total_chunks: number;
  created_at: Date;
}

/**
 * A document's original text, kept so every chunk can be rebuilt (re-chunking, a new embedder, a new mapping).
 * A collection of its own: listing and counting documents never reads megabytes of text (FerretDB's SQLite
 * backend scans whole records for filters other than _id).
 */
export interface DocumentContentRecord {
  /** The document's id. */
  _id: string;
  knowledge_base_id: string;
  content: string;
}
