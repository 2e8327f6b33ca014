// What making chunks searchable costs OpenSearch, three ways, with no API and no embedder in the way: the same
// number of chunks (perturbed copies of real ones, grouped as the real documents are, ~2–3 chunks each) indexed
// by `concurrency` concurrent "documents", one bulk request per document, each document done once searchable:
//
//   refresh=true       each bulk forces a refresh (the service's old behaviour): one new segment per document
//   refresh=wait_for   each bulk waits for the index's scheduled refresh (index.refresh_interval, 1 s)
//   group commit       bulks without refresh, then search.chunksSearchable() (the service's refresher.ts): every
//                      document finishing meanwhile shares one refresh, at most one per KBQA_REFRESH_INTERVAL_MS;
//                      also at other intervals (--group-commit-ms), to show what a longer one would trade
//
// OpenSearch's CPU is charged to a policy from its first bulk until the merges it left behind have finished.
import { randomUUID } from 'node:crypto';
import { bulkFailure, encodeEmbedding, type BulkResponse } from '../service/search/chunks.ts';
import type { ChunkDocument, SearchIndex } from '../service/search/index.ts';
import { forEachConcurrently } from '../service/eval/apiClient.ts';
import { measureOpenSearchWork, type OpenSearchWork } from './indexStats.ts';
import { copyOfChunk, templateDocuments } from './scale.ts';
import { round, summarize } from './stats.ts';

export type RefreshPolicy =
  { kind: 'refresh=true' } | { kind: 'refresh=wait_for' } | { kind: 'group commit'; intervalMs: number };

/** The three ways, group commit at the service's interval and at each extra one. */
export function refreshPolicies(serviceIntervalMs: number, extraIntervalsMs: number[]): RefreshPolicy[] {
  const intervals = [serviceIntervalMs, ...extraIntervalsMs.filter((interval) => interval !== serviceIntervalMs)];
  return [
    { kind: 'refresh=true' },
    { kind: 'refresh=wait_for' },
    ...intervals.map((intervalMs) => ({ kind: 'group commit' as const, intervalMs })),
  ];
}

export function policyName(policy: RefreshPolicy): string {
  return policy.kind === 'group commit' ? `group commit, ${policy.intervalMs} ms` : policy.kind;
}

export interface RefreshPolicyRun {
  policy: string;
  /** The service's interval (KBQA_REFRESH_INTERVAL_MS) for group commit at the service's setting. */
  service_setting: boolean;
  knowledge_base_id: string;
  documents: number;
  chunks: number;
  /** From the first bulk until the last document was searchable. */
  seconds: number;
  chunks_per_s: number;
  /** Per document: from its bulk request until it was searchable. */
  document_p50_ms: number;
  document_p95_ms: number;
  /** For group commit: the refreshes the refresher ran (exact; the index's count also has other clients'). */
  group_commit_refreshes?: number;
  opensearch: OpenSearchWork;
}

export interface RefreshPolicyComparison {
  method: string;
  concurrency: number;
  refresh_interval_ms: number;
  runs: RefreshPolicyRun[];
}

/**
 * The NDJSON of one document's bulk, exactly as service/search/chunks.ts writes it (its bulkLines is private;
 * exporting it, or an indexChunks option for the refresh parameter, would remove this copy).
 */
function bulkLines(alias: string, chunks: ChunkDocument[]): unknown[] {
  return chunks.flatMap((chunk) => [
    { index: { _index: alias, _id: chunk.chunk_id } },
    { ...chunk, embedding_b64: encodeEmbedding(chunk.embedding) },
  ]);
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
      template.map((chunk, index) =>
        copyOfChunk(chunk, { knowledgeBaseId, documentId, index, filename: `refresh-${serial}.txt`, createdAt }),
      ),
    );
    made += template.length;
  }
  return documents;
}

async function indexDocument(search: SearchIndex, policy: RefreshPolicy, chunks: ChunkDocument[]): Promise<void> {
  if (policy.kind === 'group commit') {
    await search.indexChunks(chunks);
    await search.chunksSearchable();
    return;
  }
  const response = await search.request<BulkResponse>('POST', '/_bulk', {
    bulkBody: bulkLines(search.alias, chunks),
    querystring: { refresh: policy.kind === 'refresh=true' ? 'true' : 'wait_for' },
  });
  if (response.errors) throw bulkFailure(response);
}

export async function compareRefreshPolicies(options: {
  search: SearchIndex;
  /** A search module whose refresher keeps this interval (the service's own: `search`). */
  withRefreshInterval: (intervalMs: number) => SearchIndex;
  openSearchPid: number | undefined;
  templates: ChunkDocument[];
  policies: RefreshPolicy[];
  /** One KB per policy, in `policies` order (the bench's own; the caller deletes their chunks). */
  knowledgeBaseIds: string[];
  chunks: number;
  concurrency: number;
  refreshIntervalMs: number;
  log: (message: string) => void;
}): Promise<RefreshPolicyComparison> {
  const templates = templateDocuments(options.templates);
  if (templates.length === 0) throw new Error('no template chunks to copy');
  const runs: RefreshPolicyRun[] = [];
  for (const [position, policy] of options.policies.entries()) {
    const serviceSetting = policy.kind === 'group commit' && policy.intervalMs === options.refreshIntervalMs;
    const search =
      policy.kind === 'group commit' && !serviceSetting
        ? options.withRefreshInterval(policy.intervalMs)
        : options.search;
    try {
      const knowledgeBaseId = options.knowledgeBaseIds[position];
      const documents = documentsFor(templates, knowledgeBaseId, options.chunks);
      const chunks = documents.reduce((sum, document) => sum + document.length, 0);
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
        policy: policyName(policy),
        service_setting: serviceSetting,
        knowledge_base_id: knowledgeBaseId,
        documents: documents.length,
        chunks,
        seconds: round(seconds, 2),
        chunks_per_s: round(chunks / seconds, 1),
        document_p50_ms: perDocument.p50_ms,
        document_p95_ms: perDocument.p95_ms,
        ...(policy.kind === 'group commit' ? { group_commit_refreshes: search.refreshCount() - refreshesBefore } : {}),
        opensearch,
      };
      runs.push(run);
      options.log(
        `  ${run.policy}: ${run.chunks} chunks in ${run.seconds} s (${run.chunks_per_s}/s), OpenSearch ${opensearch.cpu_ms_per_chunk ?? 'n/a'} CPU-ms/chunk ` +
          `(net of idle ${opensearch.net_cpu_ms_per_chunk ?? 'n/a'}), ${run.group_commit_refreshes ?? opensearch.index.refreshes} refreshes, ` +
          `segments ${opensearch.index.segments_before} → ${opensearch.index.segments_after}, ${opensearch.index.merges} merges`,
      );
    } finally {
      if (search !== options.search) await search.close();
    }
  }
  return {
    method:
      `${options.chunks} chunks per policy: perturbed copies of the real chunks of the concurrency-4 ingest KB, grouped as their documents are ` +
      `(${round(options.chunks / runs[0].documents, 1)} chunks per document on average), each policy into its own KB, ${options.concurrency} documents in flight, ` +
      'one bulk request per document. Only the bench process talks to OpenSearch on purpose (no API, no embedder). ' +
      "Before each policy the bench waits until no merge runs and samples OpenSearch's idle CPU for 3 s; OpenSearch CPU then runs from the first bulk " +
      "until no merge runs any more; refreshes (except the refresher's own count), merges and segments are index-wide " +
      '`_stats` (primaries) deltas over the same span, so another client of the shared stack shows up in them too.',
    concurrency: options.concurrency,
    refresh_interval_ms: options.refreshIntervalMs,
    runs,
  };
}
