// The MongoDB connection, the collections and their indexes. Only service/store/ imports `mongodb`.
// Locally the server is FerretDB v1 (SQLite); production is MongoDB 7. Queries stay within what both support:
// no transactions, no $lookup, no TTL or partial indexes.
import {
  MongoClient,
  MongoError,
  MongoNetworkError,
  MongoServerSelectionError,
  type Collection,
  type Db,
} from 'mongodb';
import { UpstreamUnavailableError } from '../errors.ts';
import { watchServerMonitoring, type MonitorWatchdogOptions } from './monitorWatchdog.ts';
import type {
  ApiKeyRecord,
  ApiKeyUsageRecord,
  ConversationMessageRecord,
  ConversationRecord,
  DocumentContentRecord,
  DocumentRecord,
  IngestJobClaimRecord,
  IngestJobRecord,
  InstallationRecord,
  KnowledgeBaseRecord,
  OrganisationRecord,
  PasswordLinkRecord,
  SessionRecord,
  ShareInvitationRecord,
  ShareInvitationSlotRecord,
  ShareRefusalRecord,
  SignInFailuresRecord,
  UsageRecord,
  UserRecord,
} from './records.ts';

export interface Collections {
  users: Collection<UserRecord>;
  organisations: Collection<OrganisationRecord>;
  apiKeys: Collection<ApiKeyRecord>;
  apiKeyUsage: Collection<ApiKeyUsageRecord>;
  knowledgeBases: Collection<KnowledgeBaseRecord>;
  documents: Collection<DocumentRecord>;
  documentContents: Collection<DocumentContentRecord>;
  ingestJobs: Collection<IngestJobRecord>;
  ingestJobClaims: Collection<IngestJobClaimRecord>;
  sessions: Collection<SessionRecord>;
  passwordLinks: Collection<PasswordLinkRecord>;
  signInFailures: Collection<SignInFailuresRecord>;
  installation: Collection<InstallationRecord>;
  /** Invitations to KBs, their places against the bounds, and declines and blocks (store/shareInvitations.ts). */
  shareInvitations: Collection<ShareInvitationRecord>;
  shareInvitationSlots: Collection<ShareInvitationSlotRecord>;
  shareRefusals: Collection<ShareRefusalRecord>;
  /** Each user's stored documents and bytes (store/usage.ts). */
  usage: Collection<UsageRecord>;
  /** GridFS's file records of the `document_files` bucket (store/files.ts streams through the bucket itself). */
  documentFiles: Collection<{ _id: string; metadata?: Record<string, unknown> }>;
  /** Each user's conversations and their messages (store/conversations.ts). */
  conversations: Collection<ConversationRecord>;
  conversationMessages: Collection<ConversationMessageRecord>;
}

export interface MongoConnection {
  client: MongoClient;
  db: Db;
  collections: Collections;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Called with each command's name as it is sent: for tests and benchmarks that count round trips. */
  onCommand?: (commandName: string) => void;
  /** Told when a lost heartbeat check made the store restart its client (store/monitorWatchdog.ts). */
  onMonitorRestart?: MonitorWatchdogOptions['onRestart'];
}

/** After an outage the driver learns the server is back at its next heartbeat: every 2 s, not the default 10 s. */
const HEARTBEAT_FREQUENCY_MS = 2_000;

export async function connectMongo(
  url: string,
  timeoutMs: number,
  options: ConnectOptions = {},
): Promise<MongoConnection> {
  const client = new MongoClient(url, {
    serverSelectionTimeoutMS: timeoutMs,
    connectTimeoutMS: timeoutMs,
    // FerretDB does not implement retryable writes' session machinery the way MongoDB does.
    retryWrites: false,
    maxPoolSize: 32,
    heartbeatFrequencyMS: HEARTBEAT_FREQUENCY_MS,
    monitorCommands: options.onCommand !== undefined,
  });
  if (options.onCommand) {
    const onCommand = options.onCommand;
    client.on('commandStarted', (event) => onCommand(event.commandName));
  }
  await storeCall(() => client.connect());
  const db = client.db();
  const collections: Collections = {
    users: db.collection<UserRecord>('users'),
    organisations: db.collection<OrganisationRecord>('organisations'),
    apiKeys: db.collection<ApiKeyRecord>('api_keys'),
    apiKeyUsage: db.collection<ApiKeyUsageRecord>('api_key_usage'),
    knowledgeBases: db.collection<KnowledgeBaseRecord>('knowledge_bases'),
    documents: db.collection<DocumentRecord>('documents'),
    documentContents: db.collection<DocumentContentRecord>('document_contents'),
    ingestJobs: db.collection<IngestJobRecord>('ingest_jobs'),
    ingestJobClaims: db.collection<IngestJobClaimRecord>('ingest_job_claims'),
    sessions: db.collection<SessionRecord>('sessions'),
    passwordLinks: db.collection<PasswordLinkRecord>('password_links'),
    signInFailures: db.collection<SignInFailuresRecord>('sign_in_failures'),
    installation: db.collection<InstallationRecord>('installation'),
    shareInvitations: db.collection<ShareInvitationRecord>('share_invitations'),
    shareInvitationSlots: db.collection<ShareInvitationSlotRecord>('share_invitation_slots'),
    shareRefusals: db.collection<ShareRefusalRecord>('share_refusals'),
    usage: db.collection<UsageRecord>('user_usage'),
    documentFiles: db.collection<{ _id: string; metadata?: Record<string, unknown> }>('document_files.files'),
    conversations: db.collection<ConversationRecord>('conversations'),
    conversationMessages: db.collection<ConversationMessageRecord>('conversation_messages'),
  };
  await storeCall(() => ensureIndexes(collections));
  const watchdog = watchServerMonitoring(client, {
    timeoutMs,
    heartbeatFrequencyMs: HEARTBEAT_FREQUENCY_MS,
    ...(options.onMonitorRestart ? { onRestart: options.onMonitorRestart } : {}),
  });
  return {
    client,
    db,
    collections,
    close: () => {
      watchdog.stop();
      return client.close();
    },
  };
}

/** Idempotent: createIndex with the same spec is a no-op on both servers. */
async function ensureIndexes(collections: Collections): Promise<void> {
  await collections.users.createIndex({ email: 1 }, { unique: true, name: 'email_unique' });
  await collections.users.createIndex({ organisation_id: 1 }, { name: 'organisation_id' });
  await collections.organisations.createIndex({ name: 1 }, { unique: true, name: 'name_unique' });
  await collections.apiKeys.createIndex({ id: 1 }, { unique: true, name: 'id_unique' });
  await collections.apiKeys.createIndex({ user_id: 1 }, { name: 'user_id' });
  await collections.knowledgeBases.createIndex({ owner_id: 1, created_at: -1 }, { name: 'owner_id_created_at' });
  await collections.knowledgeBases.createIndex({ shared_user_ids: 1 }, { name: 'shared_user_ids' });
  await collections.knowledgeBases.createIndex({ shared_organisation_ids: 1 }, { name: 'shared_organisation_ids' });
  await collections.knowledgeBases.createIndex({ is_library: 1 }, { name: 'is_library' });
  await collections.knowledgeBases.createIndex({ deleted_at: 1 }, { name: 'deleted_at' });
  await collections.documents.createIndex(
    { knowledge_base_id: 1, created_at: -1 },
    { name: 'knowledge_base_id_created_at' },
  );
  await collections.documentContents.createIndex({ knowledge_base_id: 1 }, { name: 'knowledge_base_id' });
  await collections.documentContents.createIndex({ document_id: 1 }, { name: 'document_id' });
  await collections.sessions.createIndex({ user_id: 1 }, { name: 'user_id' });
  await collections.ingestJobClaims.createIndex({ job_id: 1 }, { name: 'job_id' });
  await collections.ingestJobClaims.createIndex({ knowledge_base_id: 1 }, { name: 'knowledge_base_id' });
  await collections.passwordLinks.createIndex({ user_id: 1 }, { name: 'user_id' });
  await collections.shareInvitations.createIndex({ id: 1 }, { unique: true, name: 'id_unique' });
  await collections.shareInvitations.createIndex({ knowledge_base_id: 1 }, { name: 'knowledge_base_id' });
  await collections.shareInvitations.createIndex({ sender_id: 1, email: 1 }, { name: 'sender_id_email' });
  await collections.shareInvitationSlots.createIndex({ key: 1 }, { name: 'key' });
  await collections.shareRefusals.createIndex({ recipient_id: 1 }, { name: 'recipient_id' });
  // A document's or a KB's stored files are found by their metadata (store/files.ts).
  await collections.documentFiles.createIndex({ 'metadata.document_id': 1 }, { name: 'metadata_document_id' });
  await collections.documentFiles.createIndex(
    { 'metadata.knowledge_base_id': 1 },
    { name: 'metadata_knowledge_base_id' },
  );
  await collections.conversations.createIndex({ user_id: 1, updated_at: -1 }, { name: 'user_id_updated_at' });
  await collections.conversationMessages.createIndex(
    { conversation_id: 1, position: 1 },
    // Unique: two turns answered at once cannot both take the same place (the loser's insert fails, nothing kept).
    { unique: true, name: 'conversation_id_position_unique' },
  );
  await collections.conversationMessages.createIndex({ user_id: 1 }, { name: 'user_id' });
}

export const DUPLICATE_KEY = 11000;

export function isDuplicateKeyError(error: unknown): boolean {
  return error instanceof MongoError && error.code === DUPLICATE_KEY;
}

/**
 * What a log may keep of a driver error: name, code, codeName and message. Never the error itself, whose
 * keyValue, errInfo and command documents can carry the records being written.
 */
function mongoFailure(error: Error): { name: string; code?: number | string; codeName?: string; message: string } {
  const { code, codeName } = error as { code?: unknown; codeName?: unknown };
  return {
    name: error.name,
    ...(typeof code === 'number' || typeof code === 'string' ? { code } : {}),
    ...(typeof codeName === 'string' ? { codeName } : {}),
    message: error.message,
  };
}

/**
 * "The database cannot be reached" as the 503 a caller gets; any other error as it is (callers classify them, e.g.
 * isDuplicateKeyError, and the error middleware logs only their name, code and message). Also for errors a stream
 * of the store emits (GridFS uploads), which no storeCall wraps.
 */
export function storeFailure(error: unknown): Error {
  if (
    error instanceof MongoNetworkError ||
    isSocketFailure(error) ||
    error instanceof MongoServerSelectionError ||
    (error instanceof MongoError && /topology|connection|closed|ECONNREFUSED|must be connected/i.test(error.message))
  ) {
    return new UpstreamUnavailableError('mongodb', 'the metadata store is unavailable; retry later', {
      cause: mongoFailure(error as Error),
    });
  }
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * The driver lets a socket's own error through unwrapped when it writes to a connection the server has just ended:
 * Node's "This socket has been ended by the other party" (EPIPE), seen when every connection closes at once.
 */
const SOCKET_FAILURE_CODES = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'ETIMEDOUT', 'ENOTCONN']);

function isSocketFailure(error: unknown): boolean {
  const { code } = (error ?? {}) as { code?: unknown };
  return error instanceof Error && typeof code === 'string' && SOCKET_FAILURE_CODES.has(code);
}

/** Round trips made through storeCall in this process (module-wide, every store opened here). */
let storeCalls = 0;

/**
 * Store round trips this process has made so far: FerretDB's writes are what an ingestion waits on most, so a test
 * pins how many one document costs (test/ingestRoundTrips.test.ts), and the bench can count them.
 */
export function storeCallsMade(): number {
  return storeCalls;
}

/** Runs a store operation, turning "the database cannot be reached" into a 503 for the caller. */
export async function storeCall<T>(operation: () => Promise<T>): Promise<T> {
  storeCalls += 1;
  try {
    return await operation();
  } catch (error) {
    throw storeFailure(error);
  }
}
