import { z } from 'zod';
import {
  jsonObject,
  nameCharacterProblem,
  optionalString,
  reportProblem,
  requiredString,
  textCharacterProblem,
} from '../validation.ts';
import { nextCursor, resourceId, timestamp } from './common.schema.ts';

export const createKnowledgeBaseBody = jsonObject({
  name: requiredString()
    .trim()
    .min(1, 'must be 1–200 characters')
    .max(200, 'must be 1–200 characters')
    .superRefine(reportProblem(nameCharacterProblem)),
  // Free text: newlines, tabs and format characters are fine; NUL and other control characters are not.
  description: optionalString().pipe(
    z.string().max(2000, 'must be at most 2000 characters').superRefine(reportProblem(textCharacterProblem)).optional(),
  ),
});

export const deleteKnowledgeBaseQuery = z.object({
  permanent: z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
});

// ── Responses ─────────────────────────────────────────────────────────────────────────────────────────────────────
// What presenters/knowledgeBases.ts returns (typed against these) and the OpenAPI description publishes.

export const knowledgeBaseRole = z.enum(['owner', 'viewer', 'org-member', 'library']).meta({
  id: 'KnowledgeBaseRole',
  description:
    "The caller's relation to the KB: `owner` (created or owns it; only owners write documents or delete the KB), `viewer` (shared with the caller directly, read-only), `org-member` (visible to the caller's whole organisation), `library` (a curated KB).",
});

const knowledgeBaseFields = {
  id: resourceId('KB id'),
  name: z.string().meta({ description: 'Display name', example: 'Product handbook' }),
  description: z
    .string()
    .meta({ description: 'Short description (empty when none was given)', example: 'Policies and how-tos' }),
};

const knowledgeBaseFlags = {
  is_default: z.boolean().meta({ description: "Whether this is the caller's default KB (it cannot be deleted)" }),
  created_at: timestamp('Creation timestamp'),
};

/** The create response's KB: no role (the caller owns it). */
export const createdKnowledgeBase = z
  .object({ ...knowledgeBaseFields, ...knowledgeBaseFlags })
  .meta({ id: 'CreatedKnowledgeBase', description: 'A KB just created (the caller owns it, so no `role`).' });

export const knowledgeBase = z
  .object({ ...knowledgeBaseFields, role: knowledgeBaseRole, ...knowledgeBaseFlags })
  .meta({ id: 'KnowledgeBase', description: "A KB the caller reaches, with the caller's role." });

export const knowledgeBaseListItem = z
  .object({
    ...knowledgeBaseFields,
    role: knowledgeBaseRole,
    document_count: z.number().int().min(0).meta({ description: 'Number of documents in the KB' }),
    ...knowledgeBaseFlags,
  })
  .meta({ id: 'KnowledgeBaseListItem', description: 'A KB in the list, with its document count.' });

export const knowledgeBaseListResponse = z.object({
  knowledge_bases: z.array(knowledgeBaseListItem),
  next_cursor: nextCursor,
});
export const knowledgeBaseCreatedResponse = z.object({ knowledge_base: createdKnowledgeBase });
export const knowledgeBaseResponse = z.object({ knowledge_base: knowledgeBase });
export const knowledgeBaseDeletedResponse = z.object({
  deleted: z.literal(true),
  mode: z.enum(['soft', 'hard']).meta({
    description:
      '`soft`: hidden and recoverable in the web app (the default); `hard`: removed for good (`?permanent=true`).',
  }),
});
