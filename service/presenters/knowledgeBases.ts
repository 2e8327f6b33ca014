// KB records → API JSON. Fields are listed explicitly; nothing internal (owner, sharing, deletion) leaks.
import type { KnowledgeBaseRole } from '../policies/knowledgeBases.ts';
import type { KnowledgeBaseRecord } from '../store/index.ts';

export function presentCreatedKnowledgeBase(record: KnowledgeBaseRecord) {
  return {
    id: record._id,
    name: record.name,
    description: record.description,
    is_default: record.is_default,
    created_at: record.created_at.toISOString(),
  };
}

export function presentKnowledgeBase(record: KnowledgeBaseRecord, role: KnowledgeBaseRole) {
  return {
    id: record._id,
    name: record.name,
    description: record.description,
    role,
    is_default: record.is_default,
    created_at: record.created_at.toISOString(),
  };
}

export function presentKnowledgeBaseListItem(record: KnowledgeBaseRecord, role: KnowledgeBaseRole, documentCount: number) {
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
