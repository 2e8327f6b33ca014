// Responses of routes/knowledgeBaseMembership.ts (what presenters/knowledgeBases.ts returns and the OpenAPI publishes).
import { z } from 'zod';
import { resourceId } from './common.schema.ts';
import { knowledgeBaseRole } from './knowledgeBases.schema.ts';

export const membership = z
  .object({
    knowledge_base_id: resourceId('KB id'),
    role: knowledgeBaseRole,
    pending: z.boolean().meta({
      description:
        '`true`: the KB was shared with the caller and they have not accepted it yet; it is searched only when named in `knowledge_base_ids`. Accepting puts it in the default scope of questions that name no KB.',
    }),
  })
  .meta({
    id: 'Membership',
    description: "The caller's relation to a KB they reach, and whether it waits for them to accept it.",
  });

export const membershipResponse = z.object({ membership });
export const leftResponse = z.object({ left: z.literal(true) });
