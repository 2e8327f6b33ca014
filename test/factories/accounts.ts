// Users, keys, organisations and KBs made through the same commands the `kbqa` CLI runs.
import { randomUUID } from 'node:crypto';
import { addOrganisationMember, createOrganisation, createUser } from '../../service/commands/accounts.ts';
import { createApiKey } from '../../service/commands/apiKeys.ts';
import type { Store } from '../../service/store/index.ts';

export interface TestUser {
  id: string;
  email: string;
  key: string;
  keyId: string;
  defaultKnowledgeBaseId: string;
}

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomUUID().slice(0, 8)}@example.test`;
}

export async function makeUser(store: Store, options: { organisation?: string; label?: string } = {}): Promise<TestUser> {
  const email = uniqueEmail(options.label);
  const { user, defaultKnowledgeBase } = await createUser(store, email, options.organisation);
  const { record, key } = await createApiKey(store, email, 'test');
  return { id: user._id, email: user.email, key, keyId: record.id, defaultKnowledgeBaseId: defaultKnowledgeBase._id };
}

export async function makeOrganisation(store: Store): Promise<string> {
  const name = `org-${randomUUID().slice(0, 8)}`;
  await createOrganisation(store, name);
  return name;
}

export { addOrganisationMember };
