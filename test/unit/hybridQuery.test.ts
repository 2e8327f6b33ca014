// The hybrid query's structure, without a cluster (service/search/retrieval.ts hybridSearchBody): the KB filter sits
// inside both sub-queries, never after them, and no total is counted. Why (figures): docs/search-engineering.md, "A
// search that ignores its neighbours". The ranking it returns on the real OpenSearch: test/fusion.test.ts.
import test from 'ava';
import { DEFAULT_HYBRID_TUNING } from '../../service/hybridTuning.ts';
import { hybridSearchBody, type RetrievalRequest } from '../../service/search/retrieval.ts';

const request: RetrievalRequest = {
  text: 'does aspirin lower the risk of stroke',
  vector: [0.6, 0.8],
  knowledgeBaseIds: ['kb-a', 'kb-b'],
  hidden: [{ document_id: 'doc-1', version: 2 }],
  filters: { op: 'eq', key: 'lang', value: 'en' },
  size: 8,
  depth: 50,
};

interface Body {
  track_total_hits?: boolean;
  post_filter?: unknown;
  query: { hybrid: { pagination_depth: number; queries: Array<Record<string, unknown>> } };
}

/** The k-NN side's knn clause, inside the sentence script when there is one. */
function knnClause(side: Record<string, unknown>): Record<string, unknown> {
  const inner = (side.script_score as { query: Record<string, unknown> } | undefined)?.query ?? side;
  return (inner.knn as { embedding: Record<string, unknown> }).embedding;
}

const kbTerms = { terms: { knowledge_base_id: ['kb-a', 'kb-b'] } };

for (const sentenceWeight of [DEFAULT_HYBRID_TUNING.sentenceWeight, 0]) {
  test(`both sub-queries carry the same KB filter, nothing filters after them (sentence weight ${sentenceWeight})`, (t) => {
    const body = hybridSearchBody(request, 'kbqa-chunks', request.text, {
      ...DEFAULT_HYBRID_TUNING,
      sentenceWeight,
    }) as unknown as Body;
    const [lexical, vector] = body.query.hybrid.queries;
    const lexicalFilter = (lexical.bool as { filter: unknown }).filter;
    const vectorFilter = knnClause(vector).filter;
    t.deepEqual(lexicalFilter, vectorFilter);
    const filter = lexicalFilter as { bool: { filter: unknown[]; must_not: unknown[] } };
    t.deepEqual(filter.bool.filter[0], kbTerms);
    t.is(filter.bool.filter.length, 2, 'the metadata filter is the second clause');
    t.deepEqual(filter.bool.must_not, [{ terms: { document_version_id: ['doc-1:2'] } }]);
    // A bool around the knn clause would filter its k nearest after the search: the k-NN side itself is the knn.
    t.is(vector.bool, undefined);
    t.is(body.post_filter, undefined);
    t.is(knnClause(vector).k, 50);
    t.is(body.query.hybrid.pagination_depth, 50);
  });
}

test('the hybrid query counts no total hits', (t) => {
  const body = hybridSearchBody(request, 'kbqa-chunks', request.text, DEFAULT_HYBRID_TUNING) as unknown as Body;
  t.is(body.track_total_hits, false);
});

test('one KB and nothing hidden: the filter is the bare terms clause on both sides', (t) => {
  const body = hybridSearchBody(
    { ...request, knowledgeBaseIds: ['kb-a'], hidden: [], filters: undefined },
    'kbqa-chunks',
    request.text,
    DEFAULT_HYBRID_TUNING,
  ) as unknown as Body;
  const [lexical, vector] = body.query.hybrid.queries;
  const only = { terms: { knowledge_base_id: ['kb-a'] } };
  t.deepEqual((lexical.bool as { filter: unknown }).filter, only);
  t.deepEqual(knnClause(vector).filter, only);
});
