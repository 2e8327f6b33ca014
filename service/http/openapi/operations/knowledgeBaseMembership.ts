// The OpenAPI operations of routes/knowledgeBaseMembership.ts.
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { leftResponse, membershipResponse } from '../../routes/knowledgeBaseMembership.schema.ts';
import { errors, json, pathId } from '../shared.ts';

const KB_ID = '3f0c9a52-6d1e-4b8f-9a7c-2e5d8b1f4c60';
const NOT_VISIBLE = 'No KB with this id is visible to the key (whether or not it exists).';

export const knowledgeBaseMembershipPaths = {
  '/api/v1/knowledge-bases/{id}/membership': {
    get: {
      operationId: 'getKnowledgeBaseMembership',
      tags: ['Knowledge bases'],
      summary: 'Get your membership of a knowledge base',
      description:
        "The caller's role in the KB and whether it is a share waiting for them to accept it (`pending`). A KB an owner shares is an invitation: it reaches its recipient as `viewer` at once, but until they accept it, it is not in GET /api/v1/knowledge-bases and is searched only when named in `knowledge_base_ids`.",
      requestParams: { path: pathId('KB id') },
      responses: {
        200: {
          description: "The caller's membership.",
          content: json(membershipResponse, {
            membership: { knowledge_base_id: KB_ID, role: 'viewer', pending: true },
          }),
        },
        ...errors({ 404: NOT_VISIBLE }),
      },
    },
    delete: {
      operationId: 'leaveKnowledgeBase',
      tags: ['Knowledge bases'],
      summary: 'Leave a knowledge base shared with you',
      description:
        'Leaves a KB shared with the caller directly (`viewer`), accepted or not (declining an invitation is the same call): it leaves their list and their questions, and reads of it are 404 afterwards. Owners delete their KBs instead; organisation and library KBs are changed by their owner or an administrator.',
      requestParams: { path: pathId('KB id') },
      responses: {
        200: { description: 'Left.', content: json(leftResponse, { left: true }) },
        ...errors({
          403: {
            description:
              "The KB reaches the caller other than by a share to them: they own it, or it is their organisation's or in the library.",
            message: `knowledge base ${KB_ID}: you own it, so you cannot leave it (delete it instead)`,
          },
          404: NOT_VISIBLE,
        }),
      },
    },
  },
  '/api/v1/knowledge-bases/{id}/membership/accept': {
    post: {
      operationId: 'acceptKnowledgeBase',
      tags: ['Knowledge bases'],
      summary: 'Accept a knowledge base shared with you',
      description:
        'Puts a KB shared with the caller in the default scope of their questions (those that name no `knowledge_base_ids`). Repeating it, or accepting a KB that reaches the caller otherwise (in that scope already), changes nothing.',
      requestParams: { path: pathId('KB id') },
      responses: {
        200: {
          description: "Accepted: the caller's membership, no longer pending.",
          content: json(membershipResponse, {
            membership: { knowledge_base_id: KB_ID, role: 'viewer', pending: false },
          }),
        },
        ...errors({ 404: NOT_VISIBLE }),
      },
    },
  },
} satisfies ZodOpenApiPathsObject;
