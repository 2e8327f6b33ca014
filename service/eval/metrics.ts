// Ranking metrics as BEIR / pytrec_eval compute them (linear gain nDCG).

export interface RankingMetrics {
  ndcg_at_10: number;
  recall_at_10: number;
  recall_at_50: number;
  mrr_at_10: number;
}

export function ndcgAt(ranked: string[], relevant: Map<string, number>, k: number): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, index) => {
    dcg += (relevant.get(id) ?? 0) / Math.log2(index + 2);
  });
  const ideal = [...relevant.values()].sort((a, b) => b - a).slice(0, k);
  const idcg = ideal.reduce((sum, grade, index) => sum + grade / Math.log2(index + 2), 0);
  return idcg > 0 ? dcg / idcg : 0;
}

export function recallAt(ranked: string[], relevant: Map<string, number>, k: number): number {
  const wanted = [...relevant].filter(([, grade]) => grade > 0).map(([id]) => id);
  if (wanted.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return wanted.filter((id) => top.has(id)).length / wanted.length;
}

export function mrrAt(ranked: string[], relevant: Map<string, number>, k: number): number {
  const index = ranked.slice(0, k).findIndex((id) => (relevant.get(id) ?? 0) > 0);
  return index === -1 ? 0 : 1 / (index + 1);
}

/** Collapses a ranked list of chunks to documents: a document's rank is its best chunk's. */
export function collapseToDocuments(documentIdsInChunkOrder: string[]): string[] {
  return [...new Set(documentIdsInChunkOrder)];
}

export function averageMetrics(rankings: Array<{ ranked: string[]; relevant: Map<string, number> }>): RankingMetrics {
  const count = Math.max(1, rankings.length);
  const sum = (metric: (ranked: string[], relevant: Map<string, number>) => number) =>
    rankings.reduce((total, { ranked, relevant }) => total + metric(ranked, relevant), 0) / count;
  return {
    ndcg_at_10: sum((ranked, relevant) => ndcgAt(ranked, relevant, 10)),
    recall_at_10: sum((ranked, relevant) => recallAt(ranked, relevant, 10)),
    recall_at_50: sum((ranked, relevant) => recallAt(ranked, relevant, 50)),
    mrr_at_10: sum((ranked, relevant) => mrrAt(ranked, relevant, 10)),
  };
}

/** What the answer cited, beside what retrieval ranked, for one judged query (corpus document ids). */
export interface CitedRanking {
  /** The answer's citations in order, as corpus ids (null: a citation whose passage was not among the chunks). */
  cited: Array<string | null>;
  ranked: string[];
  relevant: Map<string, number>;
}

/**
 * One POST /query response (with include_chunks) as a CitedRanking. Citations carry the contract's four fields
 * only, so a cited passage's document is named by the chunk of the same document among the response's chunks.
 */
export function citedRanking(
  response: { citations: Array<{ document_id: string }>; chunks?: Array<{ document_id: string; filename: string }> },
  documentIdOf: (filename: string) => string,
  relevant: Map<string, number>,
): CitedRanking {
  const chunks = response.chunks ?? [];
  const filenames = new Map(chunks.map((chunk) => [chunk.document_id, chunk.filename]));
  return {
    cited: response.citations.map((citation) => {
      const filename = filenames.get(citation.document_id);
      return filename === undefined ? null : documentIdOf(filename);
    }),
    ranked: collapseToDocuments(chunks.map((chunk) => documentIdOf(chunk.filename))),
    relevant,
  };
}

export interface CitationMetrics {
  queries: number;
  /** Share of queries whose first citation is a judged-relevant document (a query citing nothing counts as a miss). */
  first_citation_relevant: number;
  /** Retrieval's own P@1 in the same responses: the first ranked document is judged relevant. */
  retrieval_p_at_1: number;
  /** Judged-relevant citations among all citations of all queries (micro average). */
  citation_precision: number;
  citations: number;
  /** Queries answered with no citation at all ("nothing relevant"). */
  uncited_queries: number;
}

export function citationMetrics(rows: CitedRanking[]): CitationMetrics {
  const isRelevant = (id: string | null | undefined, relevant: Map<string, number>) =>
    id != null && (relevant.get(id) ?? 0) > 0;
  const count = Math.max(1, rows.length);
  const citations = rows.reduce((sum, row) => sum + row.cited.length, 0);
  const relevantCitations = rows.reduce(
    (sum, row) => sum + row.cited.filter((id) => isRelevant(id, row.relevant)).length,
    0,
  );
  return {
    queries: rows.length,
    first_citation_relevant: rows.filter((row) => isRelevant(row.cited[0], row.relevant)).length / count,
    retrieval_p_at_1: rows.filter((row) => isRelevant(row.ranked[0], row.relevant)).length / count,
    citation_precision: citations > 0 ? relevantCitations / citations : 0,
    citations,
    uncited_queries: rows.filter((row) => row.cited.length === 0).length,
  };
}
