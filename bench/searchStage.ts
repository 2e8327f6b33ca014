// The search stage alone: the service's own retrieval functions (service/search/retrieval.ts) called from this
// process with the API's parameters, timed around the call (what the API's Server-Timing `search` stage is: the
// HTTP round trip to OpenSearch, its work, and decoding the hits) and by OpenSearch's own `took` (its work alone).
// No embedder, no answerer, no KB lookup: at scale this shows what grows with the index, and the side-by-side
// variants show where (the BM25 side, the k-NN side, the fusion depth).
import { createSearchClient, type SearchClient } from '../service/search/client.ts';
import { hybridSearch, lexicalSearch, vectorSearch, type RetrievalRequest } from '../service/search/retrieval.ts';
import { round, summarize } from './stats.ts';

export interface SearchStageQuery {
  text: string;
  vector: number[];
}

export interface SearchStageTiming {
  queries: number;
  client_p50_ms: number;
  client_p95_ms: number;
  client_mean_ms: number;
  took_p50_ms: number;
  took_p95_ms: number;
}

export interface SearchStageResult {
  size: number;
  depth: number;
  /** `hybrid` is the API's query; the others take it apart. */
  variants: Record<string, SearchStageTiming>;
}

/** A client that remembers the `took` of the last _search it answered. */
function tookRecording(inner: SearchClient): { client: SearchClient; lastTook: () => number } {
  let took = Number.NaN;
  return {
    client: {
      async request<T>(...args: Parameters<SearchClient['request']>): Promise<T> {
        const response = await inner.request<T>(...args);
        if (args[1].endsWith('/_search')) took = (response as { took?: number }).took ?? Number.NaN;
        return response;
      },
      close: () => inner.close(),
    },
    lastTook: () => took,
  };
}

export async function measureSearchStage(options: {
  url: string;
  timeoutMs: number;
  /** The chunk alias the bench's index uses (KBQA_CHUNKS_ALIAS). */
  alias: string;
  rankConstant: number;
  knowledgeBaseIds: string[];
  queries: SearchStageQuery[];
  /** The API's default max_results and HYBRID_DEPTH. */
  size: number;
  depth: number;
  warmup?: number;
}): Promise<SearchStageResult> {
  const { client, lastTook } = tookRecording(
    createSearchClient({ nodes: [options.url], timeoutMs: options.timeoutMs }),
  );
  const variants: Array<[string, (request: RetrievalRequest) => Promise<unknown>, number]> = [
    [
      `hybrid (depth ${options.depth})`,
      (request) => hybridSearch(client, options.alias, request, options.rankConstant),
      options.depth,
    ],
    ['hybrid (depth 10)', (request) => hybridSearch(client, options.alias, request, options.rankConstant), 10],
    [`BM25 side alone`, (request) => lexicalSearch(client, options.alias, request), options.depth],
    [`k-NN side alone (k ${options.depth})`, (request) => vectorSearch(client, options.alias, request), options.depth],
  ];
  const result: SearchStageResult = { size: options.size, depth: options.depth, variants: {} };
  try {
    for (const [name, search, depth] of variants) {
      const request = (query: SearchStageQuery): RetrievalRequest => ({
        text: query.text,
        vector: query.vector,
        knowledgeBaseIds: options.knowledgeBaseIds,
        size: options.size,
        depth,
      });
      for (const query of options.queries.slice(0, options.warmup ?? 5)) await search(request(query));
      const clientMs: number[] = [];
      const tookMs: number[] = [];
      for (const query of options.queries) {
        const started = performance.now();
        await search(request(query));
        clientMs.push(performance.now() - started);
        tookMs.push(lastTook());
      }
      const client = summarize(clientMs);
      const took = summarize(tookMs.filter((value) => Number.isFinite(value)));
      result.variants[name] = {
        queries: clientMs.length,
        client_p50_ms: client.p50_ms,
        client_p95_ms: client.p95_ms,
        client_mean_ms: client.mean_ms,
        took_p50_ms: round(took.p50_ms),
        took_p95_ms: round(took.p95_ms),
      };
    }
  } finally {
    await client.close();
  }
  return result;
}

/** The variant that is the API's own query. */
export function apiVariant(result: SearchStageResult): SearchStageTiming | undefined {
  return result.variants[`hybrid (depth ${result.depth})`];
}
