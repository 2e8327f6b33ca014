// `kbqa doctor [--fix]`: the reconciler between MongoDB (KB and document records, original contents, ingestion
// jobs) and the chunk index. Everything the service writes carries its KB id, document id and version, so whatever
// a crash, an outage during a clean-up, or a race left behind is found by comparing the sides, and removed (or
// rebuilt, or queued again).
import type { SearchIndex } from '../search/index.ts';
import { isFileKind } from '../extraction/fileKinds.ts';
import type { DocumentRecord, IngestJobClaimRecord, IngestJobRecord, Store, Usage } from '../store/index.ts';
import { pendingContentId } from '../store/index.ts';
import { newJob } from '../jobs/jobRecord.ts';
import {
  findConversationLeftovers,
  fixConversationLeftovers,
  type ConversationFindings,
  type ConversationFixes,
} from './conversationDoctor.ts';

/** Chunks indexed this recently may belong to an ingest still in flight (legacy ingests wrote chunks before records). */
export const DEFAULT_GRACE_MS = 15 * 60_000;

type DocumentRef = { document_id: string; knowledge_base_id: string };

export interface DoctorFindings extends ConversationFindings {
  /** Documents with chunks in the index but no document record. */
  orphan_chunks: Array<DocumentRef & { chunks: number }>;
  /** Chunks of a version that is neither live nor being built or retired by a job (a clean-up that failed). */
  stale_chunk_versions: Array<DocumentRef & { version: number; chunks: number }>;
  /** Stored original contents with no document record. */
  orphan_contents: Array<DocumentRef & { content_id: string }>;
  /** Document records whose KB record is gone (a hard delete raced something). */
  documents_without_knowledge_base: DocumentRef[];
  /** Ready documents whose live version's indexed chunk count differs from what the record says. */
  documents_missing_chunks: Array<DocumentRef & { expected: number; indexed: number }>;
  /** Documents queued or processing with no job to do it (a crash between the two writes). */
  documents_without_job: Array<DocumentRef & { version: number }>;
  /** Jobs whose document record is gone. */
  orphan_jobs: Array<DocumentRef & { version: number }>;
  /** Claim tokens of ingestion jobs that are gone, or of an earlier job of the document (a crash between two deletes). */
  orphan_claim_tokens: Array<DocumentRef & { claim: number }>;
  /**
   * Users whose usage record (what the quotas check) differs from what their stored documents hold: `recorded` is
   * the record, `stored` the count and sum of stored_bytes over the documents of every KB they own.
   */
  usage_drift: Array<{ user_id: string; recorded: Usage; stored: Usage }>;
}

export interface DoctorReport extends DoctorFindings {
  clean: boolean;
  /** What --fix did. Documents with missing chunks are rebuilt by re-index jobs (`rebuild`). */
  fixed?: ConversationFixes & {
    chunks_removed_for_documents: number;
    stale_versions_removed: number;
    contents_removed: number;
    documents_removed: number;
    documents_requeued: number;
    jobs_removed: number;
    claim_tokens_removed: number;
    usage_recounted: number;
    documents_rebuilt: number;
    not_rebuildable: string[];
  };
}

export interface DoctorOptions {
  fix?: boolean;
  /** Only these KBs (a test checks its own KBs while other tests write); default: everything. */
  knowledgeBaseIds?: string[];
  graceMs?: number;
  now?: Date;
  /** Rebuilds ready documents' chunks (queues re-index jobs and waits for them): returns those it could not. */
  rebuild?: (documentIds: string[]) => Promise<string[]>;
  leaseMs?: number;
}

type DocumentSummary = Pick<
  DocumentRecord,
  '_id' | 'knowledge_base_id' | 'chunks' | 'status' | 'version' | 'live_version'
>;

export async function runDoctor(
  deps: { store: Store; search: SearchIndex },
  options: DoctorOptions = {},
): Promise<DoctorReport> {
  const scope = options.knowledgeBaseIds;
  const cutoff = (options.now ?? new Date()).getTime() - (options.graceMs ?? DEFAULT_GRACE_MS);
  // Read in the reverse of the order things are written (KB → content → document record → job → chunks), one
  // after the other: whatever is written after a read began is then seen where it is harmless.
  const documents = (await deps.store.listDocumentSummaries(scope)) as DocumentSummary[];
  const knowledgeBaseIds = await deps.store.listAllKnowledgeBaseIds();
  const contents = await deps.store.listDocumentContentSummaries(scope);
  const jobs = await deps.store.listJobs(scope);
  // After the jobs: a token written since belongs to a job written since too, and is recent (within the grace).
  const claimTokens = await deps.store.listJobClaims(scope);
  const chunkGroups = await deps.search.listChunkGroups(scope);
  const usageDrift = await findUsageDrift(deps.store, scope);
  // Not per KB: conversations belong to users (the whole database, also when --kb narrows the rest).
  const conversationLeftovers = await findConversationLeftovers(deps.store);

  const knowledgeBases = new Set(knowledgeBaseIds);
  const documentsById = new Map(documents.map((document) => [document._id, document]));
  const jobsById = new Map(jobs.map((job) => [job._id, job]));
  const recentChunks = new Set(
    chunkGroups.filter((group) => group.last_indexed_ms > cutoff).map((group) => group.document_id),
  );
  const liveChunks = new Map<string, number>();

  const findings: DoctorFindings = {
    orphan_chunks: [],
    stale_chunk_versions: [],
    orphan_contents: [],
    documents_without_knowledge_base: [],
    documents_missing_chunks: [],
    documents_without_job: [],
    orphan_jobs: [],
    orphan_claim_tokens: [],
    usage_drift: usageDrift,
    ...conversationLeftovers,
  };
  const orphanChunks = new Map<string, DocumentRef & { chunks: number }>();
  for (const group of chunkGroups) {
    const document = documentsById.get(group.document_id);
    if (!document) {
      if (recentChunks.has(group.document_id) || jobsById.has(group.document_id)) continue;
      const seen = orphanChunks.get(group.document_id) ?? {
        document_id: group.document_id,
        knowledge_base_id: group.knowledge_base_id,
        chunks: 0,
      };
      seen.chunks += group.chunks;
      orphanChunks.set(group.document_id, seen);
      continue;
    }
    if (group.document_version === document.live_version) {
      liveChunks.set(document._id, (liveChunks.get(document._id) ?? 0) + group.chunks);
      continue;
    }
    const job = jobsById.get(document._id);
    if (job && (job.version === group.document_version || job.replaces === group.document_version)) continue;
    findings.stale_chunk_versions.push({
      document_id: document._id,
      knowledge_base_id: document.knowledge_base_id,
      version: group.document_version,
      chunks: group.chunks,
    });
  }
  findings.orphan_chunks = [...orphanChunks.values()];
  for (const content of contents) {
    const documentId = content.document_id ?? content._id;
    if (documentsById.has(documentId) || recentChunks.has(documentId) || jobsById.has(documentId)) continue;
    findings.orphan_contents.push({
      document_id: documentId,
      knowledge_base_id: content.knowledge_base_id,
      content_id: content._id,
    });
  }
  for (const document of documents) {
    const ref = { document_id: document._id, knowledge_base_id: document.knowledge_base_id };
    if (!knowledgeBases.has(document.knowledge_base_id)) {
      findings.documents_without_knowledge_base.push(ref);
      continue;
    }
    const job = jobsById.get(document._id);
    if ((document.status === 'queued' || document.status === 'processing') && !job) {
      findings.documents_without_job.push({ ...ref, version: document.version });
    }
    if (document.live_version === null || job) continue;
    const indexed = liveChunks.get(document._id) ?? 0;
    if (indexed !== document.chunks)
      findings.documents_missing_chunks.push({ ...ref, expected: document.chunks, indexed });
  }
  for (const job of jobs) {
    if (!documentsById.has(job._id))
      findings.orphan_jobs.push({
        document_id: job._id,
        knowledge_base_id: job.knowledge_base_id,
        version: job.version,
      });
  }
  for (const token of claimTokens) {
    if (!isOrphanClaimToken(token, jobsById.get(token.job_id) ?? null, cutoff)) continue;
    findings.orphan_claim_tokens.push({
      document_id: token.job_id,
      knowledge_base_id: token.knowledge_base_id,
      claim: token.claim,
    });
  }

  const clean = Object.values(findings).every((list) => list.length === 0);
  if (!options.fix || clean) return { ...findings, clean };
  return { ...findings, clean, fixed: await fix(deps, findings, options) };
}

async function fix(
  deps: { store: Store; search: SearchIndex },
  findings: DoctorFindings,
  options: DoctorOptions,
): Promise<NonNullable<DoctorReport['fixed']>> {
  const { store, search } = deps;
  const fixed = {
    ...(await fixConversationLeftovers(store, findings)),
    chunks_removed_for_documents: 0,
    stale_versions_removed: 0,
    contents_removed: 0,
    documents_removed: 0,
    documents_requeued: 0,
    jobs_removed: 0,
    claim_tokens_removed: 0,
    usage_recounted: 0,
    documents_rebuilt: 0,
    not_rebuildable: [] as string[],
  };
  // Each finding is checked again right before it is acted on: the report is a snapshot, and a record may have
  // been written (or a KB restored) since.
  // An orphan is one no record claims: neither a document nor a job (checked again, right before acting).
  const claimed = async (documentId: string) =>
    (await store.findDocument(documentId)) !== null || (await store.findJob(documentId)) !== null;
  for (const orphan of findings.orphan_chunks) {
    if (await claimed(orphan.document_id)) continue;
    await search.deleteChunksOfDocument(orphan.document_id);
    fixed.chunks_removed_for_documents += 1;
  }
  for (const stale of findings.stale_chunk_versions) {
    const document = await store.findDocument(stale.document_id);
    const job = await store.findJob(stale.document_id);
    if (document?.live_version === stale.version || job?.version === stale.version || job?.replaces === stale.version)
      continue;
    await search.deleteChunksOfDocumentVersion(stale.document_id, stale.version);
    fixed.stale_versions_removed += 1;
  }
  for (const orphan of findings.orphan_contents) {
    if (await claimed(orphan.document_id)) continue;
    await store.deleteDocumentContent(orphan.content_id);
    fixed.contents_removed += 1;
  }
  for (const orphan of findings.orphan_jobs) {
    const job = await store.findJob(orphan.document_id);
    if (!job || (await store.findDocument(orphan.document_id))) continue;
    await search.deleteChunksOfDocumentVersion(job._id, job.version);
    if (job.content_id !== job._id) await store.deleteDocumentContent(job.content_id);
    await store.deleteJob(job._id);
    fixed.jobs_removed += 1;
  }
  if (findings.orphan_claim_tokens.length > 0) {
    const cutoff = (options.now ?? new Date()).getTime() - (options.graceMs ?? DEFAULT_GRACE_MS);
    const current = new Map((await store.listJobClaims(options.knowledgeBaseIds)).map((token) => [token._id, token]));
    for (const orphan of findings.orphan_claim_tokens) {
      const token = current.get(`${orphan.document_id}:${orphan.claim}`);
      if (!token || !isOrphanClaimToken(token, await store.findJob(orphan.document_id), cutoff)) continue;
      await store.deleteJobClaim(token._id);
      fixed.claim_tokens_removed += 1;
    }
  }
  // The KB is gone for good: its documents go the way a permanent delete would have taken them.
  for (const orphan of findings.documents_without_knowledge_base) {
    if (await store.findKnowledgeBaseIncludingDeleted(orphan.knowledge_base_id)) continue;
    await store.deleteJob(orphan.document_id);
    await search.deleteChunksOfDocument(orphan.document_id);
    await store.deleteDocument(orphan.document_id);
    fixed.documents_removed += 1;
  }
  // Queued with no job: queue it again (its text is stored: nothing the owner gave is lost).
  for (const stuck of findings.documents_without_job) {
    const document = await store.findDocument(stuck.document_id);
    if (!document || document.version !== stuck.version || (await store.findJob(document._id))) continue;
    if (document.status !== 'queued' && document.status !== 'processing') continue;
    await store.insertJob(
      requeuedJob(
        document,
        await store.hasDocumentContent(pendingContentId(document._id, document.version)),
        options.leaseMs ?? 30_000,
      ),
    );
    fixed.documents_requeued += 1;
  }
  // Last, once the documents above are removed: a usage record still off is set from the documents (as `kbqa users
  // recount-usage` does), if it still is (a reservation or a release in flight when the report was read is not drift).
  for (const drift of findings.usage_drift) {
    if ((await usageDriftOf(store, drift.user_id)) === null) continue;
    await store.recountUsage(drift.user_id);
    fixed.usage_recounted += 1;
  }
  // A ready document whose chunks are missing is rebuilt from its stored original.
  const missing = findings.documents_missing_chunks.map((finding) => finding.document_id);
  if (missing.length > 0) {
    const failed = options.rebuild ? await options.rebuild(missing) : missing;
    fixed.documents_rebuilt = missing.length - failed.length;
    fixed.not_rebuildable = failed;
  }
  return fixed;
}

/**
 * Users whose usage record differs from their documents: in scope, the owners of those KBs; otherwise every user with
 * a record (one without is counted from the documents on first use, so it cannot drift).
 */
async function findUsageDrift(store: Store, scope: string[] | undefined): Promise<DoctorFindings['usage_drift']> {
  let users: string[];
  if (scope) {
    const owners = await Promise.all(scope.map((id) => store.findKnowledgeBaseIncludingDeleted(id)));
    users = [...new Set(owners.flatMap((knowledgeBase) => (knowledgeBase ? [knowledgeBase.owner_id] : [])))];
  } else users = (await store.listUsage()).map((record) => record._id);
  const drifts: DoctorFindings['usage_drift'] = [];
  for (const user of users) {
    const drift = await usageDriftOf(store, user);
    if (drift) drifts.push(drift);
  }
  return drifts;
}

/**
 * The user's record against their documents, or null when they agree (or when the record has none, or changed while
 * the documents were counted: a write in flight, not drift). A reservation whose document is being written at that
 * moment can still show as a difference: the fix checks again right before it acts.
 */
async function usageDriftOf(store: Store, userId: string): Promise<DoctorFindings['usage_drift'][number] | null> {
  const before = await store.findUsage(userId);
  if (!before) return null;
  const stored = await store.countStoredUsage(userId);
  const after = await store.findUsage(userId);
  if (!after || after.documents !== before.documents || after.bytes !== before.bytes) return null;
  if (after.documents === stored.documents && after.bytes === stored.bytes) return null;
  return { user_id: userId, recorded: { documents: after.documents, bytes: after.bytes }, stored };
}

/** A claim token no job will read again: its job is gone (and it is older than the grace), or it predates the job. */
function isOrphanClaimToken(
  token: IngestJobClaimRecord,
  job: Pick<IngestJobRecord, 'created_at'> | null,
  cutoff: number,
): boolean {
  return job === null ? token.created_at <= cutoff : token.created_at < job.created_at.getTime();
}

function requeuedJob(document: DocumentRecord, hasPendingContent: boolean, leaseMs: number): IngestJobRecord {
  return newJob(
    document,
    {
      version: document.version,
      content_id: hasPendingContent ? pendingContentId(document._id, document.version) : document._id,
      filename: document.filename,
      title: document.title,
      replaces: document.live_version,
      // A PDF is extracted again from its stored original.
      file_id: isFileKind(document.kind) ? (document.file_id ?? null) : null,
    },
    'async',
    null,
    leaseMs,
  );
}

/** The report as lines a person reads. */
export function formatDoctorReport(report: DoctorReport): string {
  const lines = [
    `orphan chunks (no document record): ${report.orphan_chunks.length} document(s), ${report.orphan_chunks.reduce((sum, orphan) => sum + orphan.chunks, 0)} chunk(s)`,
    `stale chunk versions (neither live nor in flight): ${report.stale_chunk_versions.length}`,
    `orphan contents (no document record): ${report.orphan_contents.length}`,
    `documents whose knowledge base is gone: ${report.documents_without_knowledge_base.length}`,
    `documents whose chunks are missing or incomplete: ${report.documents_missing_chunks.length}`,
    `documents queued with no ingestion job: ${report.documents_without_job.length}`,
    `ingestion jobs whose document is gone: ${report.orphan_jobs.length}`,
    `claim tokens of ingestion jobs that are gone: ${report.orphan_claim_tokens.length}`,
    `users whose usage record differs from their stored documents: ${report.usage_drift.length}`,
    `conversation messages whose conversation is gone: ${report.orphan_messages.length}`,
    `conversations of deleted users: ${report.conversations_of_deleted_users.length}`,
  ];
  for (const orphan of report.orphan_chunks.slice(0, 20))
    lines.push(`  chunks of document ${orphan.document_id} (kb ${orphan.knowledge_base_id}): ${orphan.chunks}`);
  for (const missing of report.documents_missing_chunks.slice(0, 20)) {
    lines.push(
      `  document ${missing.document_id} (kb ${missing.knowledge_base_id}): ${missing.indexed} of ${missing.expected} chunks indexed`,
    );
  }
  for (const drift of report.usage_drift.slice(0, 20)) {
    lines.push(
      `  user ${drift.user_id}: recorded ${drift.recorded.documents} document(s) / ${drift.recorded.bytes} bytes, stored ${drift.stored.documents} / ${drift.stored.bytes}`,
    );
  }
  if (report.clean) lines.push('clean: every chunk, content, job and document belongs to a record that exists');
  else if (!report.fixed)
    lines.push(
      'run `kbqa doctor --fix` to remove orphans, queue stuck documents again, rebuild missing chunks from the stored contents and recount drifted usage',
    );
  else {
    const f = report.fixed;
    lines.push(
      `fixed: removed the chunks of ${f.chunks_removed_for_documents} document(s), ${f.stale_versions_removed} stale version(s), ${f.contents_removed} content(s), ` +
        `${f.documents_removed} document(s), ${f.jobs_removed} job(s), ${f.claim_tokens_removed} claim token(s); queued ${f.documents_requeued} again; rebuilt ${f.documents_rebuilt}; ` +
        `recounted the usage of ${f.usage_recounted} user(s); removed ${f.conversations_removed} conversation(s) of deleted users and ${f.messages_removed} orphan message(s)`,
    );
    if (f.not_rebuildable.length > 0) lines.push(`not rebuilt: ${f.not_rebuildable.join(', ')}`);
  }
  return lines.join('\n');
}
