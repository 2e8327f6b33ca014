// The document lifecycle: ingest (waiting for the document, or queued: Prefer: respond-async), read, replace,
// retry, delete, list, re-index. The work itself is an ingestion job (jobs/runner.ts).
// Over 400 lines: the lifecycle's use cases share the storage reservation and the hand-off to jobs; each is short.
import { randomUUID } from 'node:crypto';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.ts';
import { authorizeRead, authorizeWriteDocuments } from '../policies/knowledgeBases.ts';
import type {
  DocumentOrigin,
  DocumentRecord,
  KnowledgeBaseRecord,
  MetadataEntry,
  Principal,
  Store,
} from '../store/index.ts';
import { metadataEntries, pendingContentId } from '../store/index.ts';
import type { DocumentMetadata } from '../search/metadataFilter.ts';
import type { Config } from '../config.ts';
import { newJob } from '../jobs/records.ts';
import type { IngestDeps, Prepared } from '../jobs/run.ts';
import { startFirstStep } from '../jobs/steps.ts';
import type { IngestRunner } from '../jobs/runner.ts';
import { admitIngestion, textBytes, withNewDocumentReserved, withReplacementCharged } from './quotas.ts';

/** The filename without its extension ("notes.v2.md" → "notes.v2"); a dot-file keeps its name. */
export function titleFromFilename(filename: string): string {
  const dot = filename.lastIndexOf('.');
  return dot > 0 ? filename.slice(0, dot) : filename;
}

export interface IngestInput {
  kb_id: string;
  filename: string;
  content: string;
  metadata?: DocumentMetadata;
}

export interface DocumentDeps extends IngestDeps {
  jobs: IngestRunner;
  config: IngestDeps['config'] & Pick<Config, 'quotas'>;
}

/** 'wait': answer once the document is searchable (or failed: then nothing of it remains). 'queue': answer at once. */
export type IngestMode = 'wait' | 'queue';

/**
 * Stores the text, records the document (`queued`) and its job. Waiting, this process runs the job itself and
 * answers with the ready document; queued, any process's runner takes it and the caller follows the status. While
 * the chunk index is read-only (a full disk), refused with 503 and nothing stored (queued jobs wait for the block).
 */
export async function ingestDocument(
  deps: DocumentDeps,
  user: Principal,
  input: IngestInput,
  mode: IngestMode,
  origin: DocumentOrigin = 'api',
): Promise<DocumentRecord> {
  const knowledgeBase = authorizeWriteDocuments(user, await deps.store.findLiveKnowledgeBase(input.kb_id), input.kb_id);
  await deps.search.assertWritable();
  await admitIngestion(deps.store, deps.config.quotas, knowledgeBase.owner_id);
  const bytes = textBytes(input.content);
  const record = newDocumentRecord({
    id: randomUUID(),
    knowledgeBaseId: knowledgeBase._id,
    filename: input.filename,
    source: 'api',
    origin,
    metadata: input.metadata,
    storedBytes: bytes,
  });
  const job = newJob(
    record,
    {
      version: 1,
      content_id: record._id,
      filename: record.filename,
      title: record.title,
      replaces: null,
      ...withMetadata(record.metadata),
    },
    mode === 'wait' ? 'sync' : 'async',
    mode === 'wait' ? deps.jobs.owner : null,
    deps.config.ingestion.leaseMs,
  );
  return withNewDocumentReserved(
    deps.store,
    deps.config.quotas,
    { ownerId: knowledgeBase.owner_id, documentId: record._id, bytes },
    async () => {
      // Waiting, this process runs the job: its text is split and its first step embedded while the writes below go
      // to the store (jobs/steps.ts startFirstStep). Started once the storage is reserved: a refused request costs
      // the embedder nothing.
      const firstStep =
        mode === 'wait' ? startFirstStep(deps, input.content, record.filename, record.title) : undefined;
      await deps.store.insertDocumentWithJob(record, input.content, job);
      return startJob(deps, record, job, mode, { content: input.content, firstStep });
    },
  );
}

/** A new document's record: queued for its first version, nothing live yet. */
export function newDocumentRecord(input: {
  id: string;
  knowledgeBaseId: string;
  filename: string;
  source: DocumentRecord['source'];
  origin?: DocumentOrigin;
  /** A PDF: its text comes from this stored file. */
  fileId?: string;
  /** Validated at the edge (http/routes/metadata.schema.ts); none when absent. */
  metadata?: DocumentMetadata;
  /** What the owner's storage quota counts for it (commands/quotas.ts). */
  storedBytes?: number;
}): DocumentRecord {
  const now = new Date();
  return {
    _id: input.id,
    knowledge_base_id: input.knowledgeBaseId,
    filename: input.filename,
    title: titleFromFilename(input.filename),
    source: input.source,
    ...(input.origin ? { origin: input.origin } : {}),
    ...(input.fileId ? { kind: 'pdf' as const, file_id: input.fileId } : {}),
    ...(input.metadata ? { metadata: metadataEntries(input.metadata) } : {}),
    chunks: 0,
    total_chunks: 0,
    created_at: now,
    updated_at: now,
    status: 'queued',
    version: 1,
    live_version: null,
    progress: null,
    error: null,
    ...(input.storedBytes !== undefined ? { stored_bytes: input.storedBytes } : {}),
  };
}

/** A version's metadata for its job: left out when there is none (undefined would be stored as null). */
function withMetadata(metadata: MetadataEntry[] | undefined | null): { metadata?: MetadataEntry[] } {
  return metadata ? { metadata } : {};
}

async function startJob(
  deps: DocumentDeps,
  record: DocumentRecord,
  job: ReturnType<typeof newJob>,
  mode: IngestMode,
  text?: Omit<Prepared, 'document'>,
): Promise<DocumentRecord> {
  if (mode === 'wait') return deps.jobs.runHeld(job, text === undefined ? undefined : { document: record, ...text });
  deps.jobs.nudge(record._id);
  return record;
}

/** A document the caller reaches (any role on a live KB); otherwise 404, whether it exists or not. */
async function reachableDocument(
  store: Store,
  user: Principal,
  id: string,
): Promise<{ document: DocumentRecord; knowledgeBase: KnowledgeBaseRecord }> {
  const document = await store.findDocument(id);
  const knowledgeBase = document ? await store.findLiveKnowledgeBase(document.knowledge_base_id) : null;
  if (!document || !knowledgeBase) throw new NotFoundError(`document ${id} not found`);
  try {
    authorizeRead(user, knowledgeBase, knowledgeBase._id);
  } catch {
    throw new NotFoundError(`document ${id} not found`);
  }
  return { document, knowledgeBase };
}

/** A document the caller may change: the KB's owner. Others who can read it get 403; the rest 404. */
async function ownedDocument(store: Store, user: Principal, id: string): Promise<DocumentRecord> {
  const { document, knowledgeBase } = await reachableDocument(store, user, id);
  authorizeWriteDocuments(user, knowledgeBase, knowledgeBase._id);
  return document;
}

/** A document the caller may read, with its KB (for its name). */
export const getDocumentWithKnowledgeBase = reachableDocument;

export async function getDocument(store: Store, user: Principal, id: string): Promise<DocumentRecord> {
  return (await reachableDocument(store, user, id)).document;
}

function inFlight(document: DocumentRecord): ConflictError {
  return new ConflictError(
    `document ${document._id} is ${document.status}: wait until it is ready or failed (GET /api/v1/documents/${document._id})`,
  );
}

/**
 * A new version under the same id. The old version stays searchable until the new one is ready, then one write
 * swaps them; a failure leaves the old one live and the document `failed`.
 */
export async function replaceDocument(
  deps: DocumentDeps,
  user: Principal,
  id: string,
  input: { content: string; filename?: string; metadata?: DocumentMetadata },
  mode: IngestMode,
): Promise<DocumentRecord> {
  const document = await ownedDocument(deps.store, user, id);
  if (document.status === 'queued' || document.status === 'processing') throw inFlight(document);
  if (document.kind === 'pdf')
    throw new BadRequestError(
      `document ${id} is a PDF: replace it by deleting it and uploading the new file in the web app`,
    );
  await deps.search.assertWritable();
  await admitIngestion(deps.store, deps.config.quotas, user._id);
  const version = document.version + 1;
  const filename = input.filename ?? document.filename;
  const contentId = pendingContentId(id, version);
  const bytes = textBytes(input.content);
  const charge = { ownerId: user._id, documentId: id, previousBytes: document.stored_bytes ?? 0, bytes };
  return withReplacementCharged(deps.store, deps.config.quotas, charge, async () => {
    await deps.store.insertPendingContent(id, document.knowledge_base_id, version, input.content);
    // Without `metadata` the new version keeps the document's; with it (`{}` too), the given metadata replaces it.
    const metadata = input.metadata === undefined ? document.metadata : metadataEntries(input.metadata);
    const next = {
      version,
      content_id: contentId,
      filename,
      title: titleFromFilename(filename),
      stored_bytes: bytes,
      ...withMetadata(metadata),
    };
    return queueVersion(deps, document, next, mode, input.content);
  });
}

/** Runs a failed document's ingestion again from its stored text. */
export async function retryDocument(
  deps: DocumentDeps,
  user: Principal,
  id: string,
  mode: IngestMode,
): Promise<DocumentRecord> {
  const document = await ownedDocument(deps.store, user, id);
  if (document.status !== 'failed')
    throw new ConflictError(`document ${id} is ${document.status}; only a failed document is retried`);
  await deps.search.assertWritable();
  await admitIngestion(deps.store, deps.config.quotas, user._id);
  const pending = pendingContentId(id, document.version);
  const contentId = (await deps.store.hasDocumentContent(pending)) ? pending : id;
  return queueVersion(
    deps,
    document,
    {
      version: document.version + 1,
      content_id: contentId,
      filename: document.filename,
      title: document.title,
      file_id: document.file_id ?? null,
      ...withMetadata(document.metadata),
    },
    mode,
  );
}

/**
 * Queues (or runs) the next version of an existing document: compare-and-set on its version, so two concurrent
 * replacements cannot both start; the loser gets 409.
 */
async function queueVersion(
  deps: DocumentDeps,
  document: DocumentRecord,
  next: {
    version: number;
    content_id: string;
    filename: string;
    title: string;
    file_id?: string | null;
    metadata?: MetadataEntry[];
    stored_bytes?: number;
  },
  mode: IngestMode,
  content?: string,
): Promise<DocumentRecord> {
  const { stored_bytes: storedBytes, ...version } = next;
  // A job that just made the document ready is deleted a moment after: until then a new job cannot be recorded
  // (one per document), so the document still counts as in flight (409), never a duplicate-key 500.
  if ((await deps.store.findJob(document._id)) !== null) throw inFlight({ ...document, status: 'processing' });
  if (!(await deps.store.startDocumentVersion(document._id, next.version - 1, new Date()))) {
    throw inFlight({ ...document, status: 'processing' });
  }
  if (storedBytes !== undefined) await deps.store.setDocumentStoredBytes(document._id, storedBytes);
  const job = newJob(
    document,
    { ...version, replaces: document.live_version },
    mode === 'wait' ? 'sync' : 'async',
    mode === 'wait' ? deps.jobs.owner : null,
    deps.config.ingestion.leaseMs,
  );
  await deps.store.insertJob(job);
  const queued: DocumentRecord = { ...document, version: next.version, status: 'queued', progress: null, error: null };
  return startJob(deps, queued, job, mode, content === undefined ? undefined : { content });
}

/**
 * Removes a document for good: its job first (a running one stops and removes what it writes after), the record,
 * every chunk, every stored text.
 */
export async function deleteDocument(
  deps: Pick<DocumentDeps, 'store' | 'search'>,
  user: Principal,
  id: string,
): Promise<void> {
  const document = await ownedDocument(deps.store, user, id);
  // Its chunks could not be deleted while the chunk index is read-only (a full disk): 503, nothing changes.
  await deps.search.assertWritable();
  await deps.store.deleteJob(id);
  await deps.store.deleteDocument(id);
  // Only the owner deletes (ownedDocument): the usage given back is theirs.
  await deps.store.releaseUsage(user._id, { documents: 1, bytes: document.stored_bytes ?? 0 });
  await deps.search.deleteChunksOfDocument(id);
}

/**
 * A KB's documents. By default those retrieval serves (the contract's list has no status, and a client reads
 * "listed" as "searchable"); `all` adds queued, processing and failed new documents, for a caller shown their status.
 */
export async function listDocuments(
  store: Store,
  user: Principal,
  knowledgeBaseId: string,
  page: { limit?: number; cursor?: string },
  which: 'live' | 'all' = 'live',
) {
  authorizeRead(user, await store.findLiveKnowledgeBase(knowledgeBaseId), knowledgeBaseId);
  return store.listDocuments(knowledgeBaseId, page, which);
}

/**
 * Queues a rebuild of a ready document's chunks from its stored text (a chunking or model change, a repair): a new
 * version, built beside the live one and swapped like a replacement. Returns the version queued, or null when the
 * document has no live version or text, or is already in flight.
 */
export async function queueReindex(deps: DocumentDeps, documentId: string): Promise<number | null> {
  const current = await deps.store.findDocument(documentId);
  if (!current || current.live_version === null || current.status === 'queued' || current.status === 'processing')
    return null;
  // A PDF is extracted again from its stored original; any other document re-read from its stored text.
  const fileId = current.kind === 'pdf' ? (current.file_id ?? null) : null;
  const stored = fileId
    ? (await deps.store.findFile(fileId)) !== null
    : await deps.store.hasDocumentContent(current._id);
  if (!stored) return null;
  // Its last job may still be finishing (deleted a moment after the document went ready): in flight, not queued now.
  if ((await deps.store.findJob(current._id)) !== null) return null;
  if (!(await deps.store.startDocumentVersion(current._id, current.version, new Date()))) return null;
  const version = current.version + 1;
  const job = newJob(
    current,
    {
      version,
      content_id: current._id,
      filename: current.filename,
      title: current.title,
      replaces: current.live_version,
      file_id: fileId,
      ...withMetadata(current.metadata),
    },
    'async',
    null,
    deps.config.ingestion.leaseMs,
  );
  await deps.store.insertJob(job);
  deps.jobs.nudge(current._id);
  return version;
}

/** Re-index jobs queued at once by one `kbqa docs reindex`. */
export const REINDEX_IN_FLIGHT = 64;

export interface ReindexOutcome {
  /** Rebuilt: a new version from the stored text is live. */
  rebuilt: string[];
  /** Not queued: no live version, no stored text, or an ingestion already in flight. */
  skipped: string[];
  /** Queued, and the rebuild failed (the old version stays live; the document shows the error). */
  failed: string[];
}

/**
 * Re-indexes documents from their stored text as jobs (any running API process shares the work with the caller's
 * runner), and waits for every one to end, reporting progress as documents finish.
 */
export async function reindexDocuments(
  deps: DocumentDeps,
  documentIds: string[],
  onProgress: (finished: number, total: number) => void = () => {},
  pollMs = 500,
): Promise<ReindexOutcome> {
  const outcome: ReindexOutcome = { rebuilt: [], skipped: [], failed: [] };
  // At most REINDEX_IN_FLIGHT queued at once: every job in flight is a hidden version each query filters out.
  const toQueue = [...documentIds];
  const waiting = new Map<string, number>();
  let finished = 0;
  const queueMore = async () => {
    while (waiting.size < REINDEX_IN_FLIGHT && toQueue.length > 0) {
      const id = toQueue.shift()!;
      const version = await queueReindex(deps, id);
      if (version === null) outcome.skipped.push(id);
      else waiting.set(id, version);
    }
  };
  await queueMore();
  onProgress(0, documentIds.length - outcome.skipped.length);
  while (waiting.size > 0) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    for (const [id, version] of waiting) {
      const document = await deps.store.findDocument(id);
      if (!document || document.version !== version) outcome.failed.push(id);
      else if (
        document.status === 'ready' &&
        document.live_version === version &&
        (await deps.store.findJob(id)) === null
      )
        outcome.rebuilt.push(id);
      else if (document.status === 'failed') outcome.failed.push(id);
      else continue;
      waiting.delete(id);
      finished += 1;
    }
    await queueMore();
    onProgress(finished, documentIds.length - outcome.skipped.length);
  }
  return outcome;
}
