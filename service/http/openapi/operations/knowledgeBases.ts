// The OpenAPI operations of routes/knowledgeBases.ts.
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import {
  createKnowledgeBaseBody,
  deleteKnowledgeBaseQuery,
  knowledgeBaseCreatedResponse,
  knowledgeBaseDeletedResponse,
  knowledgeBaseListResponse,
  knowledgeBaseResponse,
} from '../../routes/knowledgeBases.schema.ts';
import { pageQuery } from '../../validation.ts';
import { describeFields, errors, json, pathId } from '../shared.ts';
import { documentPaging } from './paging.ts';

const KB_ID = '3f0c9a52-6d1e-4b8f-9a7c-2e5d8b1f4c60';
const CREATED_AT = '2026-01-15T09:30:00.000Z';

export const knowledgeBasePaths = {
  '/api/v1/knowledge-bases': {
    get: {
      operationId: 'listKnowledgeBases',
      tags: ['Knowledge bases'],
      summary: 'List knowledge bases',
      description:
        "Every KB the key reaches: those its user owns, those shared with the user (and accepted: a share not accepted yet is an invitation, left out of this list and readable by id; GET …/{id}/membership says `pending`), the organisation's and the library, newest first. Without `limit` the whole list comes back; with it, pages of at most `limit` and a `next_cursor`.",
      requestParams: { query: documentPaging(pageQuery) },
      responses: {
        200: {
          description: "The KBs, each with the caller's role and its document count.",
          content: json(knowledgeBaseListResponse, {
            knowledge_bases: [
              {
                id: KB_ID,
                name: 'Product handbook',
                description: 'Policies and how-tos',
                role: 'owner',
                document_count: 42,
                is_default: false,
                created_at: CREATED_AT,
              },
              {
                id: 'c7d2e4f6-1a3b-4c5d-8e9f-0a1b2c3d4e5f',
                name: 'Default',
                description: '',
                role: 'owner',
                document_count: 3,
                is_default: true,
                created_at: '2026-01-02T08:00:00.000Z',
              },
            ],
          }),
        },
        ...errors({
          400: {
            description: 'A `limit` or `cursor` that is not valid.',
            message: 'limit: must be an integer from 1 to 1000',
          },
        }),
      },
    },
    post: {
      operationId: 'createKnowledgeBase',
      tags: ['Knowledge bases'],
      summary: 'Create a knowledge base',
      description: 'Creates a KB owned by the caller.',
      requestBody: {
        required: true,
        content: json(
          describeFields(createKnowledgeBaseBody, {
            name: {
              description:
                'Display name: 1–200 characters after trimming; no control, format or line-separator characters',
              example: 'Product handbook',
            },
            description: {
              description: 'Short description: at most 2000 characters; newlines and tabs allowed',
              example: 'Policies and how-tos',
            },
          }),
          { name: 'Product handbook', description: 'Policies and how-tos' },
        ),
      },
      responses: {
        201: {
          description: 'The KB created.',
          content: json(knowledgeBaseCreatedResponse, {
            knowledge_base: {
              id: KB_ID,
              name: 'Product handbook',
              description: 'Policies and how-tos',
              is_default: false,
              created_at: CREATED_AT,
            },
          }),
        },
        ...errors(
          {
            409: {
              description:
                'The caller has as many KBs as one owner may (KBQA_MAX_KNOWLEDGE_BASES_PER_OWNER, 1000 by default; soft-deleted ones count until purged).',
              message:
                'knowledge bases: you have 1000, the most one owner may have (1000, KBQA_MAX_KNOWLEDGE_BASES_PER_OWNER); delete one permanently first (soft-deleted ones count until purged)',
            },
          },
          { body: true },
        ),
      },
    },
  },
  '/api/v1/knowledge-bases/{id}': {
    get: {
      operationId: 'getKnowledgeBase',
      tags: ['Knowledge bases'],
      summary: 'Get a knowledge base',
      requestParams: { path: pathId('KB id') },
      responses: {
        200: {
          description: "The KB, with the caller's role.",
          content: json(knowledgeBaseResponse, {
            knowledge_base: {
              id: KB_ID,
              name: 'Product handbook',
              description: 'Policies and how-tos',
              role: 'owner',
              is_default: false,
              created_at: CREATED_AT,
            },
          }),
        },
        ...errors({ 404: 'No KB with this id is visible to the key (whether or not it exists).' }),
      },
    },
    delete: {
      operationId: 'deleteKnowledgeBase',
      tags: ['Knowledge bases'],
      summary: 'Delete a knowledge base',
      description:
        'Owner only. Soft by default: the KB and its documents disappear from every listing and query at once, and its owner can restore it from "Recently deleted" in the web app until KBQA_DELETED_RETENTION_DAYS (30 by default) have passed. `?permanent=true` removes it and everything in it for good (also for a KB already soft-deleted). The default KB cannot be deleted.',
      requestParams: {
        path: pathId("KB to delete; must be owned by the key's user"),
        query: describeFields(deleteKnowledgeBaseQuery, {
          permanent: {
            description: '`true` removes the KB and its documents for good instead of the recoverable soft delete',
            example: 'false',
          },
        }),
      },
      responses: {
        200: {
          description: 'Deleted; `mode` says how.',
          content: json(knowledgeBaseDeletedResponse, { deleted: true, mode: 'soft' }),
        },
        ...errors({
          400: {
            description: 'The default KB, or a `permanent` other than true or false.',
            message: `knowledge base ${KB_ID} is the default knowledge base and cannot be deleted`,
          },
          403: "The key's user can see the KB but does not own it.",
          404: 'No KB with this id is visible to the key.',
        }),
      },
    },
  },
} satisfies ZodOpenApiPathsObject;
