// Reading chunks back: the hybrid (BM25 + k-NN, fused in a search pipeline: RRF by default) query the API uses, and
// the single-sided BM25 and k-NN queries that `kbqa eval --ablate` compares it with. All three share one filter and
// one field set, so an ablation measures the fusion and nothing else. The fusion's knobs are a HybridTuning
// (fusion.ts): the configured one runs through the named pipelines; an override goes inline in the request.
import { chunkVersionQuery, documentVersionId } from './chunks.ts';
import type { SearchClient } from './client.ts';
import { HYBRID_EXPLAIN_SEARCH_PIPELINE, HYBRID_SEARCH_PIPELINE } from './assets.ts';
import { DEFAULT_HYBRID_TUNING, type Bm25Field, type HybridTuning } from '../hybridTuning.ts';
import {
  countingField,
  maxLexicalTerms,
  multiMatchFields,
  renderHybridPipeline,
  samePipeline,
  sideDepths,
} from './fusion.ts';
import { metadataFilterQuery, type MetadataFilter } from './metadataFilter.ts';
import { metadataLayoutOf } from './metadataLayouts.ts';
import { SENTENCE_SCORE, sentenceVectorFormOf } from './sentenceVectors.ts';
import {
  returnedFields,
  sideRanksFromExplanation,
  toChunk,
  withVectors,
  type RetrievedChunk,
  type SearchResponse,
} from './retrievedChunks.ts';

// Callers read a search's results through retrieval.ts, as before the split (tests, bench, the search module).
export { decodeEmbedding, type RetrievedChunk } from './retrievedChunks.ts';

/** Fields BM25 searches by default (KBQA_BM25_FIELDS): the chunk text and its document's title. */
export const LEXICAL_FIELDS = multiMatchFields(DEFAULT_HYBRID_TUNING.bm25Fields);

export interface RetrievalRequest {
  text: string;
  vector: number[];
  knowledgeBaseIds: string[];
  /** Chunk versions not to serve: ingestions in flight and replaced versions being retired. */
  hidden?: Array<{ document_id: string; version: number }>;
  /** Only chunks whose document metadata passes this filter (applied inside OpenSearch, to both sides, before fusion). */
  filters?: MetadataFilter;
  size: number;
  /** How deep each side looks before fusion (pagination_depth / k). */
  depth: number;
  /**
   * Ask OpenSearch for each side's rank (costs an explanation per hit). RRF only: a min_max or l2 fusion's
   * explanation holds normalized scores, not ranks, so those chunks carry null ranks.
   */
  withSideRanks?: boolean;
  /**
   * Only what a ranking needs: ids, filename and scores; no text, title or vector (`similarity` is then 0). For
   * `kbqa eval`, whose thousands of searches would otherwise move every passage and its vector.
   */
  rankingOnly?: boolean;
  /**
   * Also return each chunk's stored vectors (RetrievedChunk.vectors): the extractive answerer reads them instead of
   * embedding sentences per query. Read as a doc value (`docvalue_fields`) with the returned page only (size hits,
   * not the depth).
   */
  withSentenceVectors?: boolean;
}

/**
 * The chunks a request may see: its KBs, minus the hidden chunk versions — one `terms` clause for all of them, plus
 * one clause per hidden version 0 (chunks indexed before versions existed carry no version id; only a re-index or
 * replacement of such a document hides one, and `kbqa docs reindex` keeps at most 64 in flight) — and, given a
 * metadata filter, only the chunks that pass it. The BM25 side's bool filter and the k-NN side's `filter` are both
 * this one: Lucene's k-NN search then explores the HNSW graph for the k nearest chunks that pass (exact search when
 * few do), so each side ranks filtered chunks only, before fusion, and a page comes back full whenever enough match.
 */
function chunkFilter(request: RetrievalRequest, index: string) {
  const kbs = { terms: { knowledge_base_id: request.knowledgeBaseIds } };
  // The metadata as the searched index stores it: a v1 index (not yet migrated) in fields of its own (metadataLayouts.ts).
  const filter = request.filters ? [kbs, metadataFilterQuery(request.filters, metadataLayoutOf(index))] : [kbs];
  if (!request.hidden?.length) return filter.length === 1 ? kbs : { bool: { filter } };
  const versionIds = request.hidden
    .filter((hidden) => hidden.version > 0)
    .map((hidden) => documentVersionId(hidden.document_id, hidden.version));
  const legacy = request.hidden
    .filter((hidden) => hidden.version === 0)
    .map((hidden) => chunkVersionQuery(hidden.document_id, 0));
  const mustNot = [...(versionIds.length > 0 ? [{ terms: { document_version_id: versionIds } }] : []), ...legacy];
  return { bool: { filter, must_not: mustNot } };
}

/**
 * The most terms the BM25 side sends over the default fields. OpenSearch builds one clause per analysed term
 * occurrence and field searched, and refuses a query past indices.query.bool.max_clause_count (1024) with
 * too_many_clauses or too_many_nested_clauses; a valid 4,000-character question holds ~800 words (or 4,000 CJK
 * characters, each a token). 256 terms × 2 LEXICAL_FIELDS = 512 clauses (LEXICAL_CLAUSE_BUDGET) leaves room to spare;
 * other fields share the same budget (maxLexicalTerms: 128 terms over 4 fields).
 */
export const MAX_LEXICAL_TERMS = maxLexicalTerms(LEXICAL_FIELDS.length);

interface AnalyzedToken {
  token: string;
  start_offset: number;
  end_offset: number;
}

/**
 * The BM25 side's query text. A question of at most maxLexicalTerms(fields) characters cannot hold more tokens than
 * that (every token is at least one character), so it is sent exactly as typed: every ordinary question. A longer
 * one is analysed by the index itself (`_analyze` with the `text` field's analyzer, or a `.standard` field's when
 * one is searched, which keeps stopwords: the very tokenizer, stopwords and stemmer the query would use, so the
 * count is exact in every script); past the cap, the BM25 side gets its most informative distinct terms, as the
 * question spelled them. Longest first stands in for "rarest"; the sort is stable, so ties keep their first
 * occurrence's order.
 */
export async function lexicalQueryText(
  client: SearchClient,
  alias: string,
  question: string,
  fields: Bm25Field[] = DEFAULT_HYBRID_TUNING.bm25Fields,
): Promise<string> {
  const cap = maxLexicalTerms(fields.length);
  if (question.length <= cap) return question;
  const { tokens } = await client.request<{ tokens: AnalyzedToken[] }>('POST', `/${alias}/_analyze`, {
    body: { field: countingField(fields), text: question },
  });
  if (tokens.length <= cap) return question;
  const firstOfEach = new Map<string, AnalyzedToken>();
  for (const token of tokens) if (!firstOfEach.has(token.token)) firstOfEach.set(token.token, token);
  return [...firstOfEach.values()]
    .sort((a, b) => b.token.length - a.token.length)
    .slice(0, cap)
    .map((token) => question.slice(token.start_offset, token.end_offset))
    .join(' ');
}

function lexicalQuery(request: RetrievalRequest, index: string, text: string, fields: Bm25Field[]) {
  return {
    bool: {
      must: { multi_match: { query: text, fields: multiMatchFields(fields) } },
      filter: chunkFilter(request, index),
    },
  };
}

/**
 * The k-NN side: the k nearest chunks, rescored by their best sentence (sentenceVectors.ts SENTENCE_SCORE, in the
 * searched index's form). Sentences pin down the claim a passage makes: on SciFact's dev split, the dense side's
 * nDCG@10 went 0.743 → 0.753 at weight 0.5 (exact search over the indexed vectors, with rag embedQuestion's question
 * vector; docs/search-engineering.md "Tuning the fusion" has the hybrid's sweep). Only the k hits of the k-NN query
 * are scored (script_score on its result). The vectors are read from a binary doc value: the k-NN plugin's
 * lateInteractionScore reads them from _source instead, and loading each hit's _source made the k-NN side take a
 * median 183 ms on SciFact, against 6 ms this way (docs/search-engineering.md, "Tuning the fusion").
 */
function vectorQuery(request: RetrievalRequest, index: string, k: number, sentenceWeight: number) {
  const knn = { knn: { embedding: { vector: request.vector, k, filter: chunkFilter(request, index) } } };
  if (sentenceWeight === 0) return knn;
  return {
    script_score: {
      query: knn,
      script: {
        source: SENTENCE_SCORE,
        params: { weight: sentenceWeight, question: request.vector, int8: sentenceVectorFormOf(index) === 'int8' },
      },
    },
  };
}

/**
 * The hybrid query's body (without an inline pipeline): the KB filter inside BOTH sub-queries — the BM25 side's bool
 * filter and the k-NN side's `filter` (chunkFilter) — never as a post_filter or a bool around the knn clause. Measured
 * with a 10k-chunk KB beside 200k chunks of other KBs (docs/search-engineering.md, "A search that ignores its
 * neighbours"): either of those takes each side's top 50 from the whole index and filters after, so only 46 % of the
 * KB's true page came back, and the post_filter took twice as long. `track_total_hits: false`: nothing reads the
 * total; the hybrid query's time did not move with it in those runs, but counting is work no caller asked for.
 */
export function hybridSearchBody(request: RetrievalRequest, index: string, text: string, tuning: HybridTuning) {
  const { paginationDepth, k } = sideDepths(tuning, request);
  return {
    size: request.size,
    track_total_hits: false,
    ...returnedFields(request),
    query: {
      hybrid: {
        pagination_depth: paginationDepth,
        queries: [
          lexicalQuery(request, index, text, tuning.bm25Fields),
          vectorQuery(request, index, k, tuning.sentenceWeight),
        ],
      },
    },
  };
}

/**
 * The hybrid query. `configured` is the tuning the named pipelines were installed with (applySearchAssets); a bare
 * number (older callers: bench/searchStage.ts) means those pipelines as installed, read as RRF with that rank
 * constant. An `override` (kbqa eval --sweep) changes any knob for this request alone: depths and fields are in the
 * query anyway; a different fusion, rank constant or weights sends its pipeline inline, in the request body
 * (`search_pipeline: {…}`, an ad-hoc pipeline), so the named pipelines and every other query are untouched.
 * `inlinePipeline` sends it inline even when it equals the configured one: for a caller that cannot know the named
 * pipelines were installed from its own configuration (`kbqa eval` runs in a process and environment of its own).
 */
export async function hybridSearch(
  client: SearchClient,
  alias: string,
  request: RetrievalRequest,
  configured: HybridTuning | number,
  override?: Partial<HybridTuning>,
  options: { inlinePipeline?: boolean } = {},
): Promise<RetrievedChunk[]> {
  if (request.knowledgeBaseIds.length === 0) return [];
  const installed =
    typeof configured === 'number' ? { ...DEFAULT_HYBRID_TUNING, rankConstant: configured } : configured;
  const tuning: HybridTuning = { ...installed, ...override };
  const inline = options.inlinePipeline === true || !samePipeline(tuning, installed);
  const withSideRanks = Boolean(request.withSideRanks) && tuning.fusion === 'rrf';
  const text = await lexicalQueryText(client, alias, request.text, tuning.bm25Fields);
  const response = await client.request<SearchResponse>('POST', `/${alias}/_search`, {
    querystring: {
      ...(inline ? {} : { search_pipeline: withSideRanks ? HYBRID_EXPLAIN_SEARCH_PIPELINE : HYBRID_SEARCH_PIPELINE }),
      ...(withSideRanks ? { explain: true } : {}),
    },
    body: {
      ...(inline ? { search_pipeline: renderHybridPipeline(tuning, withSideRanks) } : {}),
      ...hybridSearchBody(request, alias, text, tuning),
    },
  });
  const hits = await withVectors(client, alias, response.hits.hits, request);
  return hits.map((hit) =>
    toChunk(
      hit,
      request,
      withSideRanks ? sideRanksFromExplanation(hit._explanation, tuning.rankConstant) : { bm25: null, vector: null },
    ),
  );
}

/** BM25 alone over `fields` (the configured KBQA_BM25_FIELDS through the search module), request.size deep. */
export async function lexicalSearch(
  client: SearchClient,
  alias: string,
  request: RetrievalRequest,
  fields: Bm25Field[] = DEFAULT_HYBRID_TUNING.bm25Fields,
): Promise<RetrievedChunk[]> {
  if (request.knowledgeBaseIds.length === 0) return [];
  const response = await client.request<SearchResponse>('POST', `/${alias}/_search`, {
    body: {
      size: request.size,
      ...returnedFields(request),
      query: lexicalQuery(request, alias, await lexicalQueryText(client, alias, request.text, fields), fields),
    },
  });
  return (await withVectors(client, alias, response.hits.hits, request)).map((hit, index) =>
    toChunk(hit, request, { bm25: index + 1, vector: null }),
  );
}

export async function vectorSearch(
  client: SearchClient,
  alias: string,
  request: RetrievalRequest,
  sentenceWeight: number = DEFAULT_HYBRID_TUNING.sentenceWeight,
): Promise<RetrievedChunk[]> {
  if (request.knowledgeBaseIds.length === 0) return [];
  const response = await client.request<SearchResponse>('POST', `/${alias}/_search`, {
    body: {
      size: request.size,
      ...returnedFields(request),
      query: vectorQuery(request, alias, Math.max(request.size, request.depth), sentenceWeight),
    },
  });
  return (await withVectors(client, alias, response.hits.hits, request)).map((hit, index) =>
    toChunk(hit, request, { bm25: null, vector: index + 1 }),
  );
}
