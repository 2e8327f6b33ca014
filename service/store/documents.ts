import type { Collections } from './mongo.ts';
import { storeCall } from './mongo.ts';
import { NEWEST_FIRST, afterCursor, toPage, type Page } from './pagination.ts';
import type { DocumentRecord } from './records.ts';

export function documentsStore(collections: Collections) {
  const { documents, documentContents } = collections;
  return {
    /** The content first, then the record: a document is listed only once its text is safely stored. */
    async insertDocument(record: DocumentRecord, content: string): Promise<void> {
      await storeCall(() => documentContents.insertOne({ _id: record._id, knowledge_base_id: record.knowledge_base_id, content }));
      await storeCall(() => documents.insertOne(record));
    },
    async deleteDocument(id: string): Promise<void> {
      await storeCall(() => documents.deleteOne({ _id: id }));
      await storeCall(() => documentContents.deleteOne({ _id: id }));
    },
    findDocument: (id: string) => storeCall(() => documents.findOne({ _id: id })),
    /** Ids of the documents of a KB whose text is stored: what a chunk rebuild walks. */
    async listDocumentContentIds(knowledgeBaseId: string): Promise<string[]> {
      const records = await storeCall(() =>
        documentContents.find({ knowledge_base_id: knowledgeBaseId }, { projection: { _id: 1 } }).toArray(),
      );
      return records.map((record) => record._id);
    },
    async findDocumentContent(id: string): Promise<string | null> {
      return (await storeCall(() => documentContents.findOne({ _id: id })))?.content ?? null;
    },

    async listDocuments(knowledgeBaseId: string, page: { limit?: number; cursor?: string }): Promise<Page<DocumentRecord>> {
      const filter = page.cursor
        ? { $and: [{ knowledge_base_id: knowledgeBaseId }, afterCursor<DocumentRecord>(page.cursor)] }
        : { knowledge_base_id: knowledgeBaseId };
      let cursor = documents.find(filter).sort(NEWEST_FIRST);
      if (page.limit !== undefined) cursor = cursor.limit(page.limit + 1);
      const records = await storeCall(() => cursor.toArray());
      return toPage(records, page.limit);
    },

    /** Document counts per KB, one round trip. KBs without documents are absent from the map. */
    async countDocumentsByKnowledgeBase(knowledgeBaseIds: string[]): Promise<Map<string, number>> {
      if (knowledgeBaseIds.length === 0) return new Map();
      const rows = await storeCall(() =>
        documents
          .aggregate<{ _id: string; count: number }>([
            { $match: { knowledge_base_id: { $in: knowledgeBaseIds } } },
            { $group: { _id: '$knowledge_base_id', count: { $sum: 1 } } },
          ])
          .toArray(),
      );
      return new Map(rows.map((row) => [row._id, row.count]));
    },

    /**
     * Every document record (or those of some KBs), id, KB and chunk count only: what `kbqa doctor` compares with
     * the chunk index. An admin scan, never on a request path.
     */
    listDocumentSummaries: (knowledgeBaseIds?: string[]) =>
      storeCall(() =>
        documents
          .find(knowledgeBaseIds ? { knowledge_base_id: { $in: knowledgeBaseIds } } : {}, {
            projection: { _id: 1, knowledge_base_id: 1, chunks: 1, filename: 1 },
          })
          .toArray(),
      ),
    /** Every stored original content's id and KB (never the text), for `kbqa doctor`. */
    listDocumentContentSummaries: (knowledgeBaseIds?: string[]) =>
      storeCall(() =>
        documentContents
          .find(knowledgeBaseIds ? { knowledge_base_id: { $in: knowledgeBaseIds } } : {}, { projection: { _id: 1, knowledge_base_id: 1 } })
          .toArray(),
      ),
    async setDocumentChunkCounts(id: string, chunks: number, totalChunks: number): Promise<void> {
      await storeCall(() => documents.updateOne({ _id: id }, { $set: { chunks, total_chunks: totalChunks } }));
    },
    async deleteDocumentContent(id: string): Promise<void> {
      await storeCall(() => documentContents.deleteOne({ _id: id }));
    },

    async deleteDocumentsOfKnowledgeBase(knowledgeBaseId: string): Promise<number> {
      const result = await storeCall(() => documents.deleteMany({ knowledge_base_id: knowledgeBaseId }));
      await storeCall(() => documentContents.deleteMany({ knowledge_base_id: knowledgeBaseId }));
      return result.deletedCount;
    },
  };
}
