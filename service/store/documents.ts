import type { Filter } from 'mongodb';
import { FILE_KINDS } from '../extraction/fileKinds.ts';
import type { Collections } from './mongo.ts';
import { isDuplicateKeyError, storeCall } from './mongo.ts';
import { NEWEST_FIRST, afterCursor, toPage, type Page } from './pagination.ts';
import type { DocumentRecord, DocumentStatus, IngestJobRecord, IngestionTimings, MetadataEntry } from './records.ts';
import type { DocumentMetadata } from '../search/metadataFilter.ts';

/** Documents retrieval serves: those with a live version (a replacement in flight keeps its old one). */
const HAS_LIVE_VERSION = { live_version: { $ne: null } };

/** Metadata as a record stores it (records.ts MetadataEntry: FerretDB refuses dotted field names). */
export function metadataEntries(metadata: DocumentMetadata): MetadataEntry[] {
  return Object.entries(metadata).map(([key, value]) => ({ key, value }));
}

/** Stored entries as the API and the chunks show them. fromEntries defines own properties: a `__proto__` key stays data. */
export function metadataObject(entries: MetadataEntry[] | undefined): DocumentMetadata {
  return Object.fromEntries((entries ?? []).map((entry) => [entry.key, entry.value]));
}

/** Where a document version's original text is stored while it is not (yet) the live one. */
export function pendingContentId(documentId: string, version: number): string {
  return `${documentId}@${version}`;
}

export function documentsStore(collections: Collections) {
  const { documents, documentContents, ingestJobs } = collections;
  return {
    /**
     * A new document and its ingestion job: content first, then the record, then the job, so whatever exists
     * always has what it points to. A crash between the record and the job leaves a `queued` document without a
     * job, which `kbqa doctor --fix` queues again.
     */
    /** `content` null: a PDF, whose text is extracted from its stored file by the job. */
    async insertDocumentWithJob(record: DocumentRecord, content: string | null, job: IngestJobRecord): Promise<void> {
      if (content !== null) {
        await storeCall(() =>
          documentContents.insertOne({
            _id: job.content_id,
            document_id: record._id,
            knowledge_base_id: record.knowledge_base_id,
            content,
          }),
        );
      }
      await storeCall(() => documents.insertOne(record));
      await storeCall(() => ingestJobs.insertOne(job));
    },
    /** A document with no job (one already ready): content first, then the record. For tests and restores. */
    async insertDocument(record: DocumentRecord, content: string): Promise<void> {
      await storeCall(() =>
        documentContents.insertOne({
          _id: record._id,
          document_id: record._id,
          knowledge_base_id: record.knowledge_base_id,
          content,
        }),
      );
      await storeCall(() => documents.insertOne(record));
    },
    /**
     * Claims the next version of a document by writing its text beside the live one (it becomes the live text when
     * the new version is): a unique `_id` insert, atomic on FerretDB v1 too, so of replacements racing for one
     * version exactly one writes. False when that version's text is already there (someone else got there first).
     */
    async claimPendingContent(
      documentId: string,
      knowledgeBaseId: string,
      version: number,
      content: string,
      now: Date,
    ): Promise<boolean> {
      const _id = pendingContentId(documentId, version);
      try {
        await storeCall(() =>
          documentContents.insertOne({
            _id,
            document_id: documentId,
            knowledge_base_id: knowledgeBaseId,
            content,
            claimed_at: now,
          }),
        );
        return true;
      } catch (error) {
        if (isDuplicateKeyError(error)) return false;
        throw error;
      }
    },
    /** When a pending text was claimed (null: not there; undefined claimed_at: written before claims carried it). */
    async findPendingClaim(documentId: string, version: number): Promise<{ claimed_at?: Date } | null> {
      const _id = pendingContentId(documentId, version);
      return storeCall(() => documentContents.findOne({ _id }, { projection: { _id: 0, claimed_at: 1 } }));
    },
    /** Makes a document's text the live one (idempotent: a re-run writes the same). */
    async setLiveContent(documentId: string, knowledgeBaseId: string, content: string): Promise<void> {
      await storeCall(() =>
        documentContents.replaceOne(
          { _id: documentId },
          { document_id: documentId, knowledge_base_id: knowledgeBaseId, content },
          { upsert: true },
        ),
      );
    },
    /** Removes the record; true when this call removed it (the delete count: of racing deleters, one). */
    async deleteDocumentRecord(id: string): Promise<boolean> {
      const result = await storeCall(() => documents.deleteOne({ _id: id }));
      return result.deletedCount === 1;
    },
    /** Every stored text of the document (live and pending). */
    async deleteDocumentContents(id: string): Promise<void> {
      await storeCall(() => documentContents.deleteOne({ _id: id }));
      await storeCall(() => documentContents.deleteMany({ document_id: id }));
    },
    findDocument: (id: string) => storeCall(() => documents.findOne({ _id: id })),
    /** Ids of the documents of a KB whose text is stored: what a chunk rebuild walks. */
    async listDocumentContentIds(knowledgeBaseId: string): Promise<string[]> {
      const records = await storeCall(() =>
        documentContents.find({ knowledge_base_id: knowledgeBaseId }, { projection: { _id: 1 } }).toArray(),
      );
      return records.map((record) => record._id);
    },
    /** Whether a text is stored under this id, without reading it (a text may be megabytes). */
    async hasDocumentContent(id: string): Promise<boolean> {
      return (await storeCall(() => documentContents.findOne({ _id: id }, { projection: { _id: 1 } }))) !== null;
    },
    async findDocumentContent(id: string): Promise<string | null> {
      return (await storeCall(() => documentContents.findOne({ _id: id })))?.content ?? null;
    },

    /** A KB's documents that retrieval serves (or, `all`, every one whatever its status), newest first. */
    async listDocuments(
      knowledgeBaseId: string,
      page: { limit?: number; cursor?: string },
      which: 'live' | 'all' = 'live',
    ): Promise<Page<DocumentRecord>> {
      const conditions: Filter<DocumentRecord>[] = [{ knowledge_base_id: knowledgeBaseId }];
      if (which === 'live') conditions.push(HAS_LIVE_VERSION);
      if (page.cursor) conditions.push(afterCursor<DocumentRecord>(page.cursor));
      const filter = { $and: conditions };
      let cursor = documents.find(filter).sort(NEWEST_FIRST);
      if (page.limit !== undefined) cursor = cursor.limit(page.limit + 1);
      const records = await storeCall(() => cursor.toArray());
      return toPage(records, page.limit);
    },

    /** Counts of the documents retrieval serves, per KB, one round trip. KBs without any are absent from the map. */
    async countDocumentsByKnowledgeBase(knowledgeBaseIds: string[]): Promise<Map<string, number>> {
      if (knowledgeBaseIds.length === 0) return new Map();
      const rows = await storeCall(() =>
        documents
          .aggregate<{ _id: string; count: number }>([
            { $match: { $and: [{ knowledge_base_id: { $in: knowledgeBaseIds } }, HAS_LIVE_VERSION] } },
            { $group: { _id: '$knowledge_base_id', count: { $sum: 1 } } },
          ])
          .toArray(),
      );
      return new Map(rows.map((row) => [row._id, row.count]));
    },

    /**
     * Every document record (or those of some KBs), without the text: what `kbqa doctor` compares with the chunk
     * index, and what a re-index walks. An admin scan, never on a request path.
     */
    listDocumentSummaries: (knowledgeBaseIds?: string[]) =>
      storeCall(() =>
        documents
          .find(knowledgeBaseIds ? { knowledge_base_id: { $in: knowledgeBaseIds } } : {}, {
            projection: {
              _id: 1,
              knowledge_base_id: 1,
              chunks: 1,
              total_chunks: 1,
              filename: 1,
              status: 1,
              version: 1,
              live_version: 1,
            },
          })
          .toArray(),
      ),
    /** Every stored original content's id, document and KB (never the text), for `kbqa doctor`. */
    listDocumentContentSummaries: (knowledgeBaseIds?: string[]) =>
      storeCall(() =>
        documentContents
          .find(knowledgeBaseIds ? { knowledge_base_id: { $in: knowledgeBaseIds } } : {}, {
            projection: { _id: 1, document_id: 1, knowledge_base_id: 1 },
          })
          .toArray(),
      ),
    async deleteDocumentContent(id: string): Promise<void> {
      await storeCall(() => documentContents.deleteOne({ _id: id }));
    },

    /**
     * Records a new version asked for, unless another one is in flight (compare-and-set on the version). With
     * `storedBytes` (a replacement's text) the record's size changes in the same write, so the owner's usage, charged
     * before, matches the record from the moment the version starts.
     */
    async startDocumentVersion(id: string, fromVersion: number, now: Date, storedBytes?: number): Promise<boolean> {
      const bytes = storedBytes === undefined ? {} : { stored_bytes: storedBytes };
      const result = await storeCall(() =>
        documents.updateOne(
          { _id: id, version: fromVersion, status: { $in: ['ready', 'failed'] } },
          {
            $set: {
              version: fromVersion + 1,
              status: 'queued',
              progress: null,
              error: null,
              updated_at: now,
              ...bytes,
            },
          },
        ),
      );
      return result.modifiedCount === 1;
    },
    /**
     * Status and progress of the ingestion in flight; false when the document is gone. By bare _id (FerretDB pushes
     * down nothing else): a document has one job at a time, and a new version only starts from ready or failed.
     */
    async setDocumentProgress(
      id: string,
      status: DocumentStatus,
      progress: DocumentRecord['progress'],
      timings: IngestionTimings = {},
    ): Promise<boolean> {
      const result = await storeCall(() =>
        documents.updateOne({ _id: id }, { $set: { status, progress, ...timings } }),
      );
      return result.matchedCount === 1;
    },
    /** The version is live: its filename, title and counts become the document's. False when it was deleted or superseded. */
    async setDocumentReady(
      id: string,
      version: number,
      live: {
        filename: string;
        title: string;
        chunks: number;
        total_chunks: number;
        scanned_pages?: { page: number; confidence: number }[];
        metadata?: MetadataEntry[];
      },
      now: Date,
    ): Promise<boolean> {
      // By bare _id, like setDocumentProgress; `version` is what goes live.
      const result = await storeCall(() =>
        documents.updateOne(
          { _id: id },
          { $set: { ...live, status: 'ready', live_version: version, progress: null, error: null, updated_at: now } },
        ),
      );
      return result.matchedCount === 1;
    },
    /**
     * A live version's chunk counts after `kbqa index migrate` rebuilt its chunks with another chunking. By _id and
     * that version: a document replaced or deleted meanwhile keeps what its own ingestion wrote. False then.
     */
    async setLiveChunkCounts(
      id: string,
      version: number,
      counts: { chunks: number; total_chunks?: number },
    ): Promise<boolean> {
      const result = await storeCall(() => documents.updateOne({ _id: id, live_version: version }, { $set: counts }));
      return result.matchedCount === 1;
    },
    async setDocumentFailed(id: string, error: string, now: Date, retryable = true): Promise<void> {
      await storeCall(() =>
        documents.updateOne(
          { _id: id },
          { $set: { status: 'failed', progress: null, error, error_retryable: retryable, updated_at: now } },
        ),
      );
    },
    /** Records written before ingestion jobs existed are ready, version 0 (their chunks carry no version). */
    async backfillDocumentVersions(): Promise<number> {
      const result = await storeCall(() =>
        documents.updateMany(
          { status: { $exists: false } },
          { $set: { status: 'ready', version: 0, live_version: 0, progress: null, error: null } },
        ),
      );
      return result.modifiedCount;
    },

    /**
     * New uploads whose first ingestion failed (no live version) and that have not changed since `cutoff`: their
     * originals are kept for a retention only (commands/quotas.ts). An admin scan, hourly.
     */
    listFailedUploadsBefore: (cutoff: Date) =>
      storeCall(() =>
        documents
          .find(
            { kind: { $in: [...FILE_KINDS] }, status: 'failed', live_version: null, updated_at: { $lte: cutoff } },
            { projection: { _id: 1, knowledge_base_id: 1, stored_bytes: 1 } },
          )
          .toArray(),
      ),
    /** The record of a failed upload, only while it is still one (a retry may have started meanwhile). */
    async deleteFailedUploadRecord(id: string): Promise<boolean> {
      const result = await storeCall(() => documents.deleteOne({ _id: id, status: 'failed', live_version: null }));
      return result.deletedCount === 1;
    },
    /** The records of a KB and what each holds of its owner's usage: what a permanent delete removes one by one. */
    listDocumentHoldings: (knowledgeBaseId: string) =>
      storeCall(() =>
        documents.find({ knowledge_base_id: knowledgeBaseId }, { projection: { _id: 1, stored_bytes: 1 } }).toArray(),
      ),
    /** Whatever of a KB's records and texts is still stored (after the records were removed one by one). */
    async deleteDocumentsOfKnowledgeBase(knowledgeBaseId: string): Promise<number> {
      const result = await storeCall(() => documents.deleteMany({ knowledge_base_id: knowledgeBaseId }));
      await storeCall(() => documentContents.deleteMany({ knowledge_base_id: knowledgeBaseId }));
      return result.deletedCount;
    },
  };
}
