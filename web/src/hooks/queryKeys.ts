// One place for the cache keys, so a mutation invalidates exactly the lists it changed.
export const queryKeys = {
  session: ['session'] as const,
  setup: ['setup'] as const,
  knowledgeBases: ['knowledge-bases'] as const,
  knowledgeBase: (kbId: string) => ['knowledge-bases', kbId] as const,
  documents: (kbId: string) => ['knowledge-bases', kbId, 'documents'] as const,
  sharing: (kbId: string) => ['knowledge-bases', kbId, 'sharing'] as const,
  deletedKnowledgeBases: ['deleted-knowledge-bases'] as const,
  invitations: ['invitations'] as const,
  blockedSenders: ['blocked-senders'] as const,
  document: (documentId: string) => ['documents', documentId] as const,
  documentContent: (documentId: string) => ['documents', documentId, 'content'] as const,
  models: ['models'] as const,
  limits: ['limits'] as const,
  apiKeys: ['api-keys'] as const,
  users: ['admin', 'users'] as const,
};
