// `kbqa doctor [--fix]`: the reconciler between MongoDB (KB and document records, original contents) and the chunk
// index. Everything the service writes carries its KB and document ids, so whatever a crash, an outage during a
// cleanup, or a race left behind can be found by comparing the two sides and removed (or rebuilt).
import type { Rag } from '../rag/index.ts';
import type { SearchIndex } from '../search/index.ts';
import type { DocumentRecord, Store } from '../store/index.ts';
import { rebuildDocumentChunks } from './documents.ts';

/** Chunks indexed this recently may belong to an ingest still in flight (chunks are written before the record). */
export const DEFAULT_GRACE_MS = 15 * 60_000;

export interface DoctorFindings {
  /** Documents with chunks in the index but no document record: `{ document_id, knowledge_base_id, chunks }`. */
  orphan_chunks: Array<{ document_id: string; knowledge_base_id: string; chunks: number }>;
  /** Stored original contents with no document record. */
  orphan_contents: Array<{ document_id: string; knowledge_base_id: string }>;
  /** Document records whose KB record is gone (a hard delete raced something). */
  documents_without_knowledge_base: Array<{ document_id: string; knowledge_base_id: string }>;
  /** Document records whose indexed chunk count differs from what the record says (0 when all are missing). */
  documents_missing_chunks: Array<{ document_id: string; knowledge_base_id: string; expected: number; indexed: number }>;
}

export interface DoctorReport extends DoctorFindings {
  clean: boolean;
  /** What --fix did: removed and rebuilt counts, and documents it could not rebuild (no stored content). */
  fixed?: { chunks_removed_for_documents: number; contents_removed: number; documents_removed: number; documents_rebuilt: number; not_rebuildable: string[] };
}

export interface DoctorOptions {
  fix?: boolean;
  /** Only these KBs (a test checks its own KBs while other tests write); default: everything. */
  knowledgeBaseIds?: string[];
  graceMs?: number;
  now?: Date;
}

export async function runDoctor(deps: { store: Store; search: SearchIndex; rag?: Rag }, options: DoctorOptions = {}): Promise<DoctorReport> {
  const scope = options.knowledgeBaseIds;
  const cutoff = (options.now ?? new Date()).getTime() - (options.graceMs ?? DEFAULT_GRACE_MS);
  // Read in the reverse of the order things are written (KB → chunks → content → document record), one after the
  // other: whatever an ingest writes after a read began is then seen where it is harmless. A document read before
  // its KB list cannot miss its KB; a content or chunk written after the document list was read has chunks indexed
  // within the grace period, and is left alone.
  const documents = await deps.store.listDocumentSummaries(scope);
  const knowledgeBaseIds = await deps.store.listAllKnowledgeBaseIds();
  const contents = await deps.store.listDocumentContentSummaries(scope);
  const chunkGroups = await deps.search.listChunkGroups(scope);
  const knowledgeBases = new Set(knowledgeBaseIds);
  const documentsById = new Map(documents.map((document) => [document._id, document]));
  const chunksByDocument = new Map<string, { chunks: number; recent: boolean }>();
  for (const group of chunkGroups) {
    const seen = chunksByDocument.get(group.document_id) ?? { chunks: 0, recent: false };
    chunksByDocument.set(group.document_id, { chunks: seen.chunks + group.chunks, recent: seen.recent || group.last_indexed_ms > cutoff });
  }

  const findings: DoctorFindings = { orphan_chunks: [], orphan_contents: [], documents_without_knowledge_base: [], documents_missing_chunks: [] };
  for (const group of chunkGroups) {
    if (documentsById.has(group.document_id) || chunksByDocument.get(group.document_id)?.recent) continue;
    findings.orphan_chunks.push({ document_id: group.document_id, knowledge_base_id: group.knowledge_base_id, chunks: group.chunks });
  }
  for (const content of contents) {
    if (documentsById.has(content._id) || chunksByDocument.get(content._id)?.recent) continue;
    findings.orphan_contents.push({ document_id: content._id, knowledge_base_id: content.knowledge_base_id });
  }
  for (const document of documents) {
    if (!knowledgeBases.has(document.knowledge_base_id)) {
      findings.documents_without_knowledge_base.push({ document_id: document._id, knowledge_base_id: document.knowledge_base_id });
      continue;
    }
    const indexed = chunksByDocument.get(document._id)?.chunks ?? 0;
    if (indexed !== document.chunks) {
      findings.documents_missing_chunks.push({ document_id: document._id, knowledge_base_id: document.knowledge_base_id, expected: document.chunks, indexed });
    }
  }
  const clean = Object.values(findings).every((list) => list.length === 0);
  if (!options.fix || clean) return { ...findings, clean };
  return { ...findings, clean, fixed: await fix(deps, findings, documentsById) };
}

async function fix(
  deps: { store: Store; search: SearchIndex; rag?: Rag },
  findings: DoctorFindings,
  documentsById: Map<string, Pick<DocumentRecord, '_id' | 'knowledge_base_id' | 'chunks' | 'filename'>>,
): Promise<NonNullable<DoctorReport['fixed']>> {
  const fixed = { chunks_removed_for_documents: 0, contents_removed: 0, documents_removed: 0, documents_rebuilt: 0, not_rebuildable: [] as string[] };
  // Each finding is checked again right before it is acted on: the report is a snapshot, and a record may have
  // been written (or a KB restored) since.
  for (const orphan of findings.orphan_chunks) {
    if (await deps.store.findDocument(orphan.document_id)) continue;
    await deps.search.deleteChunksOfDocument(orphan.document_id);
    fixed.chunks_removed_for_documents += 1;
  }
  for (const orphan of findings.orphan_contents) {
    if (await deps.store.findDocument(orphan.document_id)) continue;
    await deps.store.deleteDocumentContent(orphan.document_id);
    fixed.contents_removed += 1;
  }
  // The KB is gone for good: its documents go the way a permanent delete would have taken them.
  for (const orphan of findings.documents_without_knowledge_base) {
    if (await deps.store.findKnowledgeBaseIncludingDeleted(orphan.knowledge_base_id)) continue;
    await deps.search.deleteChunksOfDocument(orphan.document_id);
    await deps.store.deleteDocument(orphan.document_id);
    fixed.documents_removed += 1;
  }
  // A recorded document whose chunks are missing is rebuilt from its stored original: nothing the owner gave is lost.
  for (const missing of findings.documents_missing_chunks) {
    const record = deps.rag ? await deps.store.findDocument(missing.document_id) : null;
    if (record && deps.rag && (await rebuildDocumentChunks({ store: deps.store, search: deps.search, rag: deps.rag }, record))) {
      // A delete may have removed the document while it was rebuilt: then the rebuilt chunks go too.
      if (!(await deps.store.findDocument(record._id))) await deps.search.deleteChunksOfDocument(record._id);
      else fixed.documents_rebuilt += 1;
    } else {
      fixed.not_rebuildable.push(documentsById.get(missing.document_id)?._id ?? missing.document_id);
    }
  }
  return fixed;
}

/** The report as lines a person reads. */
export function formatDoctorReport(report: DoctorReport): string {
  const lines = [
    `orphan chunks (no document record): ${report.orphan_chunks.length} document(s), ${report.orphan_chunks.reduce((sum, orphan) => sum + orphan.chunks, 0)} chunk(s)`,
    `orphan contents (no document record): ${report.orphan_contents.length}`,
    `documents whose knowledge base is gone: ${report.documents_without_knowledge_base.length}`,
    `documents whose chunks are missing or incomplete: ${report.documents_missing_chunks.length}`,
  ];
  for (const orphan of report.orphan_chunks.slice(0, 20)) lines.push(`  chunks of document ${orphan.document_id} (kb ${orphan.knowledge_base_id}): ${orphan.chunks}`);
  for (const missing of report.documents_missing_chunks.slice(0, 20)) {
    lines.push(`  document ${missing.document_id} (kb ${missing.knowledge_base_id}): ${missing.indexed} of ${missing.expected} chunks indexed`);
  }
  if (report.clean) lines.push('clean: every chunk, content and document belongs to a record that exists');
  else if (!report.fixed) lines.push('run `kbqa doctor --fix` to remove orphans and rebuild missing chunks from the stored contents');
  else {
    const f = report.fixed;
    lines.push(
      `fixed: removed the chunks of ${f.chunks_removed_for_documents} document(s), ${f.contents_removed} content(s), ${f.documents_removed} document(s); rebuilt ${f.documents_rebuilt}`,
    );
    if (f.not_rebuildable.length > 0) lines.push(`not rebuildable (no stored content): ${f.not_rebuildable.join(', ')}`);
  }
  return lines.join('\n');
}
