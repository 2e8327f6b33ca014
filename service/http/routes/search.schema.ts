import { z } from 'zod';
import { jsonObject, requiredString } from '../validation.ts';
import { resourceId } from './common.schema.ts';
import { metadataFilter } from './metadata.schema.ts';
import { retrievedChunk } from './query.schema.ts';

export const SEARCH_MODES = ['hybrid', 'bm25', 'dense'] as const;

/** POST /search: ranked chunks for a query, no answer. */
export const searchBody = jsonObject({
  query: requiredString().trim().min(1, 'must be 1–4000 characters').max(4000, 'must be 1–4000 characters'),
  knowledge_base_ids: z
    .array(z.string({ error: 'must be an array of knowledge base id strings' }), { error: 'must be an array of knowledge base id strings' })
    .min(1, 'must not be empty (omit it to search every knowledge base you can reach)')
    .max(100, 'must list at most 100 knowledge bases')
    .optional(),
  max_results: z
    .number({ error: 'must be an integer from 1 to 100' })
    .int('must be an integer from 1 to 100')
    .min(1, 'must be an integer from 1 to 100')
    .max(100, 'must be an integer from 1 to 100')
    .default(10),
  /** Only chunks whose document metadata passes this filter (search/metadataFilter.ts). */
  filters: metadataFilter.optional(),
  mode: z
    .enum(SEARCH_MODES, { error: `must be one of: ${SEARCH_MODES.join(', ')}` })
    .default('hybrid')
    .meta({ description: '`hybrid` (BM25 and k-NN fused by reciprocal rank fusion), `bm25` (lexical only) or `dense` (k-NN only)' }),
});

// ── Responses ─────────────────────────────────────────────────────────────────────────────────────────────────────

export const searchResponse = z
  .object({
    results: z.array(retrievedChunk).meta({ description: 'The chunks, best first (at most max_results); no relevance floor' }),
    knowledge_base_ids: z.array(resourceId('KB id')).meta({ description: 'The KBs actually searched' }),
  })
  .meta({ id: 'SearchResponse', description: 'Ranked chunks, without an answer.' });
