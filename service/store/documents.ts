import type { Collections } from './mongo.ts';
import { storeCall } from './mongo.ts';
import { NEWEST_FIRST, afterCursor, toPage, type Page } from './pagination.ts';
import type { DocumentRecord } from './records.ts';

// Listings never carry `content` (up to several MiB per document).
const WITHOUT_CONTENT = { projection: { content: 0 } } as const;

export function documentsStore(collections: Collections) {
  const documents = collections.documents;
  return {
    insertDocument: (record: DocumentRecord) => storeCall(() => documents.insertOne(record)),
    async deleteDocument(id: string): Promise<void> {
      await storeCall(() => documents.deleteOne({ _id: id }));
    },
    findDocument: (id: string) => storeCall(() => documents.findOne({ _id: id })),

    async listDocuments(knowledgeBaseId: string, page: { limit?: number; cursor?: string }): Promise<Page<Omit<DocumentRecord, 'content'>>> {
      const filter = page.cursor
        ? { $and: [{ knowledge_base_id: knowledgeBaseId }, afterCursor<DocumentRecord>(page.cursor)] }
        : { knowledge_base_id: knowledgeBaseId };
      let cursor = documents.find(filter, WITHOUT_CONTENT).sort(NEWEST_FIRST);
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

    async deleteDocumentsOfKnowledgeBase(knowledgeBaseId: string): Promise<number> {
      const result = await storeCall(() => documents.deleteMany({ knowledge_base_id: knowledgeBaseId }));
      return result.deletedCount;
    },
  };
}
