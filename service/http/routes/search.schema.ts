import { z } from 'zod';
import { jsonObject } from '../validation.ts';
import { resourceId } from './common.schema.ts';
import { metadataFilter } from './metadata.schema.ts';
import { knowledgeBaseIdsField, maxResultsField, questionField, retrievedChunk } from './query.schema.ts';

export const SEARCH_MODES = ['hybrid', 'bm25', 'dense'] as const;

/** POST /search: ranked chunks for a query, no answer. */
export const searchBody = jsonObject({
  query: questionField(),
  knowledge_base_ids: knowledgeBaseIdsField(),
  max_results: maxResultsField(100, 10),
  /** Only chunks whose document metadata passes this filter (search/metadataFilter.ts). */
  filters: metadataFilter.optional(),
  mode: z
    .enum(SEARCH_MODES, { error: `must be one of: ${SEARCH_MODES.join(', ')}` })
    .default('hybrid')
    .meta({
      description:
        '`hybrid` (BM25 and k-NN fused by reciprocal rank fusion), `bm25` (lexical only) or `dense` (k-NN only)',
    }),
});

// ── Responses ─────────────────────────────────────────────────────────────────────────────────────────────────────

export const searchResponse = z
  .object({
    results: z
      .array(retrievedChunk)
      .meta({ description: 'The chunks, best first (at most max_results); no relevance floor' }),
    knowledge_base_ids: z.array(resourceId('KB id')).meta({ description: 'The KBs actually searched' }),
  })
  .meta({ id: 'SearchResponse', description: 'Ranked chunks, without an answer.' });
