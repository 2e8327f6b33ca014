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
