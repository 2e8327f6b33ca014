// KB records → API JSON. Fields are listed explicitly; nothing internal (owner, sharing, deletion) leaks.
import type { Membership } from '../commands/knowledgeBases.ts';
import type { membership as membershipSchema } from '../http/routes/knowledgeBaseMembership.schema.ts';
import type { KnowledgeBaseRole } from '../policies/knowledgeBases.ts';
import type { KnowledgeBaseRecord } from '../store/index.ts';
import type { z } from 'zod';
import type {
  createdKnowledgeBase,
  knowledgeBase,
  knowledgeBaseListItem,
} from '../http/routes/knowledgeBases.schema.ts';
import type { deletedKnowledgeBase } from '../http/routes/webApp.schema.ts';

// The Developer API's shapes are typed against the response schemas (http/routes/knowledgeBases.schema.ts), which the
// OpenAPI description publishes: a field added here and not there, or the other way round, does not compile.

export function presentCreatedKnowledgeBase(record: KnowledgeBaseRecord): z.input<typeof createdKnowledgeBase> {
  return {
    id: record._id,
    name: record.name,
    description: record.description,
    is_default: record.is_default,
    created_at: record.created_at.toISOString(),
  };
}

export function presentKnowledgeBase(
  record: KnowledgeBaseRecord,
  role: KnowledgeBaseRole,
): z.input<typeof knowledgeBase> {
  return {
    id: record._id,
    name: record.name,
    description: record.description,
    role,
    is_default: record.is_default,
    created_at: record.created_at.toISOString(),
  };
}

export function presentKnowledgeBaseListItem(
  record: KnowledgeBaseRecord,
  role: KnowledgeBaseRole,
  documentCount: number,
): z.input<typeof knowledgeBaseListItem> {
  return {
    id: record._id,
    name: record.name,
    description: record.description,
    role,
    document_count: documentCount,
    is_default: record.is_default,
    created_at: record.created_at.toISOString(),
  };
}

/**
 * The web app's KBs also say whether each is a share waiting for the user to accept it (it marks them and offers
 * Accept and Decline). The Developer API's keep the contract's fields; its clients ask GET …/membership.
 */
export function withPendingMark<Presented extends object>(
  presented: Presented,
  pending: boolean,
  marked: boolean,
): Presented {
  return marked ? { ...presented, pending } : presented;
}

/** The caller's relation to a KB (GET, and accept, of …/membership). */
export function presentMembership(membership: Membership): z.input<typeof membershipSchema> {
  return { knowledge_base_id: membership.id, role: membership.role, pending: membership.pending };
}

/** "Recently deleted": when it went and until when its owner can bring it back. */
export function presentDeletedKnowledgeBase(
  record: KnowledgeBaseRecord,
  retentionMs: number,
): z.input<typeof deletedKnowledgeBase> {
  const deletedAt = record.deleted_at ?? new Date(0);
  return {
    id: record._id,
    name: record.name,
    description: record.description,
    deleted_at: deletedAt.toISOString(),
    restorable_until: new Date(deletedAt.getTime() + retentionMs).toISOString(),
  };
}
