import { z } from 'zod';
import { jsonObject, requiredString } from '../validation.ts';
import { resourceId } from './common.schema.ts';
import { metadataFilter } from './metadata.schema.ts';

/** A question's longest length, trimmed, in UTF-16 code units (JavaScript's length; the web app counts the same). */
export const QUESTION_MAX_CHARACTERS = 4000;
const QUESTION_RULE = `must be 1–${QUESTION_MAX_CHARACTERS} characters`;

/** The question, shared by /query and /search. */
export const questionField = () =>
  requiredString().trim().min(1, QUESTION_RULE).max(QUESTION_MAX_CHARACTERS, QUESTION_RULE);

/** Which KBs to search (omitted: every KB the caller reaches), shared by /query and /search. */
export const knowledgeBaseIdsField = () =>
  z
    .array(z.string({ error: 'must be an array of knowledge base id strings' }), {
      error: 'must be an array of knowledge base id strings',
    })
    .min(1, 'must not be empty (omit it to search every knowledge base you can reach)')
    .max(100, 'must list at most 100 knowledge bases')
    .optional();

/** How many results, from 1 to `max` (default `fallback`): /query pages at most 50 passages, /search 100 chunks. */
export const maxResultsField = (max: number, fallback: number) => {
  const rule = `must be an integer from 1 to ${max}`;
  return z.number({ error: rule }).int(rule).min(1, rule).max(max, rule).default(fallback);
};

/** How to answer, shared by /query and a conversation's turn: the model, the passages, the chunks, streaming. */
export const answerFields = (models: string[]) => ({
  model: z
    .string({ error: 'must be a string' })
    .refine((model) => models.includes(model), { message: `must be one of: ${models.join(', ')}` })
    .optional(),
  max_results: maxResultsField(50, 8),
  include_chunks: z.boolean({ error: 'must be true or false' }).default(false),
  /** Answer as Server-Sent Events (retrieval, delta…, done) rather than one JSON body; so does Accept: text/event-stream. */
  stream: z.boolean({ error: 'must be true or false' }).default(false),
});

export function queryBody(models: string[]) {
  return jsonObject({
    query: questionField(),
    knowledge_base_ids: knowledgeBaseIdsField(),
    ...answerFields(models),
    /** Only chunks whose document metadata passes this filter (search/metadataFilter.ts). */
    filters: metadataFilter.optional(),
  });
}

// ── Responses ─────────────────────────────────────────────────────────────────────────────────────────────────────
// What presenters/query.ts returns (typed against these) and the OpenAPI description publishes.

const similarity = z.number().min(0).max(1);
const rank = z.number().int().min(1).nullable();

/** Exactly the contract's four fields (clients may validate them strictly). */
export const citation = z
  .object({
    document_id: resourceId('Source document of the snippet'),
    title: z.string().meta({ description: "The document's title", example: 'onboarding' }),
    snippet: z.string().meta({
      description: 'The passage the answer drew from (at most 500 characters)',
      example: 'New starters get their laptop on day one…',
    }),
    similarity: similarity.meta({ description: 'Relevance score, 0 to 1, higher is closer', example: 0.82 }),
  })
  .meta({
    id: 'Citation',
    description: 'A passage behind the answer; `[n]` in the answer refers to `citations[n-1]`.',
  });

/** A retrieved chunk as include_chunks returns it (for debugging retrieval). */
export const retrievedChunk = z
  .object({
    id: z.string().meta({ description: 'Chunk id' }),
    document_id: resourceId('Source document'),
    knowledge_base_id: resourceId("The document's KB"),
    filename: z.string(),
    title: z.string(),
    heading_path: z.array(z.string()).meta({ description: 'Markdown headings above the chunk, outermost first' }),
    chunk_index: z.number().int().min(0).meta({ description: 'Position of the chunk in its document, from 0' }),
    page_start: z
      .number()
      .int()
      .min(1)
      .nullable()
      .meta({ description: 'PDFs: first page the text came from (1-based); null for text' }),
    page_end: z
      .number()
      .int()
      .min(1)
      .nullable()
      .meta({ description: 'PDFs: last page the text came from; null for text' }),
    text: z.string(),
    score: z.number().meta({ description: 'Fused (reciprocal rank fusion) score' }),
    similarity: similarity.meta({ description: 'Cosine similarity to the question, 0 to 1' }),
    bm25_rank: rank.meta({ description: 'Rank on the BM25 side (1 = best), null when only the vector side found it' }),
    vector_rank: rank.meta({ description: 'Rank on the vector side (1 = best), null when only BM25 found it' }),
  })
  .meta({ id: 'RetrievedChunk', description: 'A retrieved chunk, in fused rank order.' });

export const queryResponse = z
  .object({
    answer: z.string().meta({
      description:
        "The generated answer; `[n]` markers cite `citations[n-1]`. A sentence of an OpenAI-compatible model's answer that cites no passage, or whose cited passages do not hold its numbers and most of its terms, ends in `[unverified]`",
      example: 'New starters get their laptop on their first day [1].',
    }),
    citations: z.array(citation),
    model: z.string().meta({ description: 'The model actually used', example: 'kbqa-extractive' }),
    knowledge_base_ids: z.array(resourceId('KB id')).meta({ description: 'The KBs actually searched' }),
    chunks: z
      .array(retrievedChunk)
      .optional()
      .meta({ description: 'Only with `include_chunks: true`: the retrieved chunks' }),
  })
  .meta({ id: 'QueryResponse', description: 'A cited answer.' });

/**
 * The events of a streamed answer (`"stream": true` or `Accept: text/event-stream`): `retrieval` once, `delta` per
 * piece of the answer, then `done` with the whole answer (a QueryResponse), or `error` with the error envelope.
 */
export const queryStreamRetrievalEvent = z
  .object({
    passages: z
      .array(
        retrievedChunk.extend({
          number: z.number().int().min(1).meta({ description: "The passage's number, from 1 in rank order" }),
        }),
      )
      .meta({ description: 'The passages the answer is grounded on, in rank order' }),
  })
  .meta({
    id: 'QueryStreamRetrieval',
    description: 'Data of the `retrieval` event: the passages found, before the answer starts.',
  });

export const queryStreamDeltaEvent = z
  .object({
    text: z.string().meta({ description: 'The next piece of the answer (append it to the previous ones)' }),
    citations: z.array(citation).meta({
      description: 'The citations this piece introduces: those of all pieces, in order, are the `citations` of `done`',
    }),
  })
  .meta({ id: 'QueryStreamDelta', description: 'Data of a `delta` event: a piece of the answer.' });
