// The web app's document page: what a person who opens a document wants to read, its text and the passages it was
// cut into (the chunks retrieval serves), beside the KB it belongs to (for its name).
import type { Principal } from '../store/index.ts';
import { isFileKind } from '../extraction/fileKinds.ts';
import type { DocumentRecord, KnowledgeBaseRecord } from '../store/index.ts';
import type { DocumentPassage } from '../search/index.ts';
import { getDocumentWithKnowledgeBase, type DocumentDeps } from './documents.ts';

/**
 * Passages listed at most: a page, not an export (a 20 MB text has thousands). The response says how many there are
 * in all, and the page says when it shows only the first ones.
 */
export const MAX_PASSAGES_SHOWN = 500;

export interface DocumentContent {
  document: DocumentRecord;
  knowledgeBase: KnowledgeBaseRecord;
  /** The live text as it was sent; null for an uploaded file (its text is extracted from the stored file, never kept). */
  content: string | null;
  passages: DocumentPassage[];
  passagesTotal: number;
}

export async function readDocumentContent(
  deps: Pick<DocumentDeps, 'store' | 'search'>,
  user: Principal,
  id: string,
): Promise<DocumentContent> {
  const { document, knowledgeBase } = await getDocumentWithKnowledgeBase(deps.store, user, id);
  const live = document.live_version;
  const [content, passages] = await Promise.all([
    isFileKind(document.kind) ? null : deps.store.findDocumentContent(document._id),
    live === null ? { passages: [], total: 0 } : deps.search.documentPassages(document._id, live, MAX_PASSAGES_SHOWN),
  ]);
  return { document, knowledgeBase, content, passages: passages.passages, passagesTotal: passages.total };
}
