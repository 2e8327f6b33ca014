// Users, keys, organisations and KBs made through the same commands the `kbqa` CLI runs.
import { randomUUID } from 'node:crypto';
import { addOrganisationMember, createOrganisation, createUser } from '../../service/commands/accounts.ts';
import { createApiKey } from '../../service/commands/apiKeys.ts';
import { hashPassword } from '../../service/commands/passwords.ts';
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

export async function makeUser(
  store: Store,
  options: { organisation?: string; label?: string } = {},
): Promise<TestUser> {
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

export const TEST_PASSWORD = 'correct horse battery staple';

/** A user who signs in to the web app with TEST_PASSWORD (what setting a password by link leaves behind). */
export async function makeWebUser(
  store: Store,
  options: { isAdmin?: boolean; label?: string; organisation?: string } = {},
) {
  const email = uniqueEmail(options.label ?? 'web');
  const { user, defaultKnowledgeBase } = await createUser(store, email, options.organisation, {
    isAdmin: options.isAdmin ?? false,
    passwordHash: await hashPassword(TEST_PASSWORD),
  });
  return { id: user._id, email: user.email, password: TEST_PASSWORD, defaultKnowledgeBaseId: defaultKnowledgeBase._id };
}
