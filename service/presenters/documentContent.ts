import type { z } from 'zod';
import type { DocumentContent } from '../commands/documentContent.ts';
import type { documentContent } from '../http/routes/webApp.schema.ts';

/** GET /api/web/documents/{id}/content: the fields listed, nothing of the records beyond them. */
export function presentDocumentContent(content: DocumentContent): z.input<typeof documentContent> {
  return {
    knowledge_base: { id: content.knowledgeBase._id, name: content.knowledgeBase.name },
    content: content.content,
    passages: content.passages.map((passage) => ({
      chunk_index: passage.chunk_index,
      heading_path: passage.heading_path,
      page_start: passage.page_start,
      page_end: passage.page_end,
      text: passage.text,
    })),
    passages_total: content.passagesTotal,
  };
}
