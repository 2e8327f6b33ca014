// What making chunks searchable costs OpenSearch, three ways, with no API and no embedder in the way: the same
// number of chunks (perturbed copies of real ones, grouped as the real documents are, ~2–3 chunks each) indexed
// by `concurrency` concurrent "documents", one bulk request per document, each document done once searchable:
//
//   refresh=true       each bulk forces a refresh (the service's old behaviour): one new segment per document
//   refresh=wait_for   each bulk waits for the index's scheduled refresh (index.refresh_interval, 1 s)
//   group commit       bulks without refresh, then search.chunksSearchable() (the service's refresher.ts): every
//                      document finishing meanwhile shares one refresh, at most one per KBQA_REFRESH_INTERVAL_MS
//
// OpenSearch's CPU is charged to a policy from its first bulk until the merges it left behind have finished.
import { randomUUID } from 'node:crypto';
import { CHUNKS_ALIAS } from '../service/search/assets.ts';
import { bulkFailure, encodeEmbedding, type BulkResponse } from '../service/search/chunks.ts';
import type { ChunkDocument, SearchIndex } from '../service/search/index.ts';
import { forEachConcurrently } from '../service/eval/apiClient.ts';
import { idleCpuPercent, measureOpenSearchWork, waitForMerges, type OpenSearchWork } from './indexStats.ts';
import { copyOfChunk, templateDocuments } from './scale.ts';
import { round, summarize } from './stats.ts';

export type RefreshPolicy = 'refresh=true' | 'refresh=wait_for' | 'group commit';
export const REFRESH_POLICIES: RefreshPolicy[] = ['refresh=true', 'refresh=wait_for', 'group commit'];

export interface RefreshPolicyRun {
  policy: RefreshPolicy;
  knowledge_base_id: string;
  documents: number;
  chunks: number;
  /** From the first bulk until the last document was searchable. */
  seconds: number;
  chunks_per_s: number;
  /** Per document: from its bulk request until it was searchable. */
  document_p50_ms: number;
  document_p95_ms: number;
  /** For group commit: the refreshes this process's refresher ran. */
  group_commit_refreshes?: number;
  opensearch: OpenSearchWork;
}

export interface RefreshPolicyComparison {
  method: string;
  concurrency: number;
  refresh_interval_ms: number;
  /** OpenSearch's CPU over 3 s of nothing from the bench, before the runs (% of one core). */
  idle_opensearch_cpu_percent: number | null;
  runs: RefreshPolicyRun[];
}

/**
 * The NDJSON of one document's bulk, exactly as service/search/chunks.ts writes it (its bulkLines is private;
 * exporting it, or an indexChunks option for the refresh parameter, would remove this copy).
 */
function bulkLines(chunks: ChunkDocument[]): unknown[] {
  return chunks.flatMap((chunk) => [{ index: { _index: CHUNKS_ALIAS, _id: chunk.chunk_id } }, { ...chunk, embedding_b64: encodeEmbedding(chunk.embedding) }]);
}

/** `chunks` chunks in documents shaped like the templates' (cycling through them), for one KB. */
function documentsFor(templates: ChunkDocument[][], knowledgeBaseId: string, chunks: number): ChunkDocument[][] {
  const createdAt = new Date().toISOString();
  const documents: ChunkDocument[][] = [];
  let made = 0;
  for (let serial = 0; made < chunks; serial += 1) {
    const template = templates[serial % templates.length].slice(0, chunks - made);
    const documentId = randomUUID();
    documents.push(
      template.map((chunk, index) => copyOfChunk(chunk, { knowledgeBaseId, documentId, index, filename: `refresh-${serial}.txt`, createdAt })),
    );
    made += template.length;
  }
  return documents;
}

async function indexDocument(search: SearchIndex, policy: RefreshPolicy, chunks: ChunkDocument[]): Promise<void> {
  if (policy === 'group commit') {
    await search.indexChunks(chunks);
    await search.chunksSearchable();
    return;
  }
  const response = await search.request<BulkResponse>('POST', '/_bulk', {
    bulkBody: bulkLines(chunks),
    querystring: { refresh: policy === 'refresh=true' ? 'true' : 'wait_for' },
  });
  if (response.errors) throw bulkFailure(response);
}

export async function compareRefreshPolicies(options: {
  search: SearchIndex;
  openSearchPid: number | undefined;
  templates: ChunkDocument[];
  /** One KB per policy, in REFRESH_POLICIES order (the bench's own; their chunks are deleted afterwards). */
  knowledgeBaseIds: string[];
  chunks: number;
  concurrency: number;
  refreshIntervalMs: number;
  log: (message: string) => void;
}): Promise<RefreshPolicyComparison> {
  const { search } = options;
  const templates = templateDocuments(options.templates);
  if (templates.length === 0) throw new Error('no template chunks to copy');
  await waitForMerges(search);
  const idle = await idleCpuPercent(options.openSearchPid);
  const runs: RefreshPolicyRun[] = [];
  for (const [position, policy] of REFRESH_POLICIES.entries()) {
    const knowledgeBaseId = options.knowledgeBaseIds[position];
    const documents = documentsFor(templates, knowledgeBaseId, options.chunks);
    const chunks = documents.reduce((sum, document) => sum + document.length, 0);
    await waitForMerges(search);
    const refreshesBefore = search.refreshCount();
    const documentMs: number[] = [];
    let seconds = 0;
    const { opensearch } = await measureOpenSearchWork(
      search,
      options.openSearchPid,
      async () => {
        const started = performance.now();
        await forEachConcurrently(documents, options.concurrency, async (document) => {
          const documentStarted = performance.now();
          await indexDocument(search, policy, document);
          documentMs.push(performance.now() - documentStarted);
        });
        seconds = (performance.now() - started) / 1000;
      },
      () => chunks,
    );
    const perDocument = summarize(documentMs);
    const run: RefreshPolicyRun = {
      policy,
      knowledge_base_id: knowledgeBaseId,
      documents: documents.length,
      chunks,
      seconds: round(seconds, 2),
      chunks_per_s: round(chunks / seconds, 1),
      document_p50_ms: perDocument.p50_ms,
      document_p95_ms: perDocument.p95_ms,
      ...(policy === 'group commit' ? { group_commit_refreshes: search.refreshCount() - refreshesBefore } : {}),
      opensearch,
    };
    runs.push(run);
    options.log(
      `  ${policy}: ${run.chunks} chunks in ${run.seconds} s (${run.chunks_per_s}/s), OpenSearch ${opensearch.cpu_ms_per_chunk ?? 'n/a'} CPU-ms/chunk, ` +
        `${opensearch.index.refreshes} refreshes, segments ${opensearch.index.segments_before} → ${opensearch.index.segments_after}, ${opensearch.index.merges} merges`,
    );
  }
  return {
    method:
      `${options.chunks} chunks per policy: perturbed copies of the real chunks of the concurrency-4 ingest KB, grouped as their documents are ` +
      `(${round(options.chunks / runs[0].documents, 1)} chunks per document on average), each policy into its own KB, ${options.concurrency} documents in flight, ` +
      'one bulk request per document. Nothing but the bench process talks to OpenSearch on purpose (no API, no embedder). ' +
      'OpenSearch CPU runs from the first bulk until no merge runs any more; refreshes, merges and segments are index-wide ' +
      '`_stats` (primaries) deltas over the same span, so another client of the shared stack would show up in them too.',
    concurrency: options.concurrency,
    refresh_interval_ms: options.refreshIntervalMs,
    idle_opensearch_cpu_percent: idle,
    runs,
  };
}
