// The document lifecycle: ingest (waiting for the document, or queued: Prefer: respond-async), read, replace,
// retry, delete, list, re-index. The work itself is an ingestion job (jobs/runner.ts).
// Over 400 lines: the lifecycle's use cases share the storage reservation and the hand-off to jobs; each is short.
import { randomUUID } from 'node:crypto';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.ts';
import { isFileKind, type FileKind } from '../extraction/fileKinds.ts';
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
import { newJob } from '../jobs/jobRecord.ts';
import type { IngestDeps, Prepared } from '../jobs/runContext.ts';
import { startFirstStep } from '../jobs/buildVersion.ts';
import type { HeldTurn, IngestRunner } from '../jobs/runner.ts';
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
  // Waiting, the request first waits for its job's turn (withTurn), then reserves and writes: its job's lease starts
  // when it runs, and a reservation is never held by a request that has written nothing for longer than its writes.
  return withTurn(deps, knowledgeBase.owner_id, mode, (turn) => {
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
      { ...firstVersion(record), ...withMetadata(record.metadata) },
      mode === 'wait' ? 'sync' : 'async',
      mode === 'wait' ? deps.jobs.owner : null,
      deps.config.ingestion.leaseMs,
    );
    return withNewDocumentReserved(
      deps.store,
      deps.config.quotas,
      { ownerId: knowledgeBase.owner_id, documentId: record._id, bytes },
      async (recorded) => {
        // Waiting, this process runs the job: its text is split and its first step embedded while the writes below
        // go to the store (jobs/buildVersion.ts startFirstStep). Started once the storage is reserved: a refused request
        // costs the embedder nothing.
        const firstStep =
          mode === 'wait' ? startFirstStep(deps, input.content, record.filename, record.title) : undefined;
        await deps.store.insertDocumentWithJob(record, input.content, job);
        recorded();
        return startJob(deps, record, job, mode, { content: input.content, firstStep }, turn);
      },
    );
  });
}

/** A new document's record: queued for its first version, nothing live yet. */
export function newDocumentRecord(input: {
  id: string;
  knowledgeBaseId: string;
  filename: string;
  source: DocumentRecord['source'];
  origin?: DocumentOrigin;
  /** An uploaded file: its text comes from this stored original, read as its kind says. */
  file?: { id: string; kind: FileKind };
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
    ...(input.file ? { kind: input.file.kind, file_id: input.file.id } : {}),
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

/** A new document's first version, for its job: its text is stored under the document's id; it replaces nothing. */
export function firstVersion(record: Pick<DocumentRecord, '_id' | 'filename' | 'title'>) {
  return { version: 1, content_id: record._id, filename: record.filename, title: record.title, replaces: null };
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
  text: Omit<Prepared, 'document'> | undefined,
  turn: HeldTurn | null,
): Promise<DocumentRecord> {
  if (mode === 'wait')
    return deps.jobs.runHeld(job, text === undefined ? undefined : { document: record, ...text }, turn ?? undefined);
  deps.jobs.nudge(record._id);
  return record;
}

/**
 * Waiting, a request runs its job in this process: first it waits for a turn under the same caps as queued jobs
 * (jobs/runner.ts heldTurn), and `run` writes the job once it has one. The turn ends with the job, or here when `run`
 * fails before the job started. Queued, `run` goes at once (the runner's claims apply the caps).
 */
async function withTurn<T>(
  deps: DocumentDeps,
  ownerId: string,
  mode: IngestMode,
  run: (turn: HeldTurn | null) => Promise<T>,
): Promise<T> {
  if (mode === 'queue') return run(null);
  const turn = await deps.jobs.heldTurn(ownerId);
  try {
    return await run(turn);
  } catch (error) {
    turn.end();
    throw error;
  }
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
  if (isFileKind(document.kind))
    throw new BadRequestError(
      `document ${id} is an uploaded file (${document.kind}): replace it by deleting it and uploading the new file in the web app`,
    );
  await deps.search.assertWritable();
  await admitIngestion(deps.store, deps.config.quotas, user._id);
  const version = document.version + 1;
  const filename = input.filename ?? document.filename;
  const bytes = textBytes(input.content);
  return withTurn(deps, user._id, mode, async (turn) => {
    await claimVersion(deps.store, document, version, input.content);
    const charge = { ownerId: user._id, previousBytes: document.stored_bytes ?? 0, bytes };
    let versionStarted = false;
    try {
      return await withReplacementCharged(deps.store, deps.config.quotas, charge, async (charged) => {
        const started = () => {
          versionStarted = true;
          charged();
        };
        // Without `metadata` the new version keeps the document's; with it (`{}` too), the given metadata replaces it.
        const metadata = input.metadata === undefined ? document.metadata : metadataEntries(input.metadata);
        const next = {
          version,
          content_id: pendingContentId(id, version),
          filename,
          title: titleFromFilename(filename),
          stored_bytes: bytes,
          ...withMetadata(metadata),
        };
        return queueVersion(deps, document, next, mode, { content: input.content, turn, started });
      });
    } catch (error) {
      // Refused (over the quota) or lost to a retry or a delete before its version started: the claim goes, so the
      // next replacement of this version is not refused as in progress. (A version started keeps its text: a retry
      // reads it.)
      if (!versionStarted) await deps.store.deleteDocumentContent(pendingContentId(id, version)).catch(() => undefined);
      throw error;
    }
  });
}

/** A claim not started this long after it was written is one whose request died in between: it is taken over. */
const STALE_CLAIM_MS = 60_000;

function replacementInProgress(id: string): ConflictError {
  return new ConflictError(
    `document ${id} is already being replaced by another request: wait until its new version is ready or failed (GET /api/v1/documents/${id})`,
  );
}

/**
 * Claims the version a replacement will write (store claimPendingContent: a unique insert, atomic on FerretDB v1 where
 * the compare-and-set on the version is not): of replacements racing, one goes on, the others get 409 and are
 * charged nothing. A claim left by a request that died before its version started is taken over once it is stale.
 */
async function claimVersion(store: Store, document: DocumentRecord, version: number, content: string) {
  const claim = () => store.claimPendingContent(document._id, document.knowledge_base_id, version, content, new Date());
  if (await claim()) return;
  const existing = await store.findPendingClaim(document._id, version);
  const current = await store.findDocument(document._id);
  const stale =
    existing !== null &&
    current?.version === document.version &&
    (existing.claimed_at === undefined || Date.now() - existing.claimed_at.getTime() > STALE_CLAIM_MS);
  if (stale) {
    await store.deleteDocumentContent(pendingContentId(document._id, version));
    if (await claim()) return;
  }
  throw replacementInProgress(document._id);
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
  return withTurn(deps, user._id, mode, (turn) =>
    queueVersion(
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
      { turn },
    ),
  );
}

/**
 * Queues (or runs) the next version of an existing document: compare-and-set on its version, so two concurrent
 * versions cannot both start (on FerretDB v1, where the compare-and-set is not atomic, the job's unique insert
 * decides); the loser gets 409. A replacement's size goes on the record in the compare-and-set's write, and
 * `started` says so (commands/quotas.ts withReplacementCharged).
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
  run: { content?: string; turn: HeldTurn | null; started?: () => void },
): Promise<DocumentRecord> {
  const { stored_bytes: storedBytes, ...version } = next;
  // A job that just made the document ready is deleted a moment after: until then a new job cannot be recorded
  // (one per document), so the document still counts as in flight (409), never a duplicate-key 500.
  if ((await deps.store.findJob(document._id)) !== null) throw inFlight({ ...document, status: 'processing' });
  if (!(await deps.store.startDocumentVersion(document._id, next.version - 1, new Date(), storedBytes))) {
    throw inFlight({ ...document, status: 'processing' });
  }
  run.started?.();
  const job = newJob(
    document,
    { ...version, replaces: document.live_version },
    mode === 'wait' ? 'sync' : 'async',
    mode === 'wait' ? deps.jobs.owner : null,
    deps.config.ingestion.leaseMs,
  );
  if (!(await deps.store.insertNewJob(job))) throw inFlight({ ...document, status: 'processing' });
  const queued: DocumentRecord = { ...document, version: next.version, status: 'queued', progress: null, error: null };
  return startJob(deps, queued, job, mode, run.content === undefined ? undefined : { content: run.content }, run.turn);
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
  await ownedDocument(deps.store, user, id);
  // Its chunks could not be deleted while the chunk index is read-only (a full disk): 503, nothing changes.
  await deps.search.assertWritable();
  await deps.store.deleteJob(id);
  // The store gives the usage back only when this call removed the record: of deletes racing (each other, the
  // document's own failing ingestion, a permanent delete of its KB), one does, and the others answer 404 as for any
  // document that is not there. Its chunks are the remover's to delete.
  if (!(await deps.store.deleteDocument(id))) throw new NotFoundError(`document ${id} not found`);
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
  // An uploaded file is extracted again from its stored original; any other document re-read from its stored text.
  const fileId = isFileKind(current.kind) ? (current.file_id ?? null) : null;
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
  if (!(await deps.store.insertNewJob(job))) return null;
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
