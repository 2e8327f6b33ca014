// Account administration (the `kbqa` CLI): users, organisations, sharing and the library flag.
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { KnowledgeBaseRecord, OrganisationRecord, Store, UserRecord } from '../store/index.ts';
import { DEFAULT_KNOWLEDGE_BASE_NAME, newKnowledgeBaseRecord } from './knowledgeBases.ts';
import { createPasswordLink, type PasswordLink } from './passwords.ts';

// Linear: the domain's first dot is found once ([^\s@.]* cannot trade dots with the part after it), unlike
// /^[^\s@]+@[^\s@]+\.[^\s@]+$/, which backtracked polynomially on "a@" + ".".repeat(n) + "@". Same strings accepted.
const EMAIL = /^[^\s@]+@[^\s@][^\s@.]*\.[^\s@]+$/;

async function organisationNamed(store: Store, name: string): Promise<OrganisationRecord> {
  const organisation = await store.findOrganisationByName(name);
  if (!organisation) throw new NotFoundError(`no organisation named ${name}`);
  return organisation;
}

export async function userWithEmail(store: Store, email: string): Promise<UserRecord> {
  const user = await store.findUserByEmail(email);
  if (!user) throw new NotFoundError(`no user with email ${email}`);
  return user;
}

export function emailProblem(email: string): string | null {
  if (email.length > 254) return 'must be at most 254 characters';
  return EMAIL.test(email) ? null : `${email} is not an e-mail address`;
}

/** A new user always gets one default KB, named Default. Without a password hash they sign in after using a link. */
export async function createUser(
  store: Store,
  email: string,
  organisationName?: string,
  options: { isAdmin?: boolean; passwordHash?: string } = {},
) {
  const problem = emailProblem(email);
  if (problem) throw new BadRequestError(`email: ${problem}`);
  const organisation = organisationName ? await organisationNamed(store, organisationName) : null;
  const user = await store.insertUser(email, organisation?._id ?? null, options);
  const defaultKnowledgeBase = newKnowledgeBaseRecord(user._id, DEFAULT_KNOWLEDGE_BASE_NAME, '', true);
  try {
    await store.insertKnowledgeBase(defaultKnowledgeBase);
  } catch (error) {
    // No transactions on FerretDB: undo the user so a retry can succeed.
    await store.deleteUser(user._id);
    throw error;
  }
  return { user, defaultKnowledgeBase };
}

export interface LinkSettings {
  publicUrl: string;
  passwordLinkMs: number;
}

/** `kbqa users create` and an admin's invitation: the user, and the one-time link that lets them set a password. */
export async function inviteUser(
  store: Store,
  settings: LinkSettings,
  input: { email: string; organisation?: string; isAdmin?: boolean },
): Promise<{ user: UserRecord; defaultKnowledgeBase: KnowledgeBaseRecord; link: PasswordLink }> {
  const { user, defaultKnowledgeBase } = await createUser(store, input.email, input.organisation, {
    isAdmin: input.isAdmin ?? false,
  });
  return { user, defaultKnowledgeBase, link: await createPasswordLink(store, settings, user, 'invite') };
}

/** `kbqa users reset-password`: a new one-time link; the user's sessions end when it is used. */
export async function createPasswordResetLink(
  store: Store,
  settings: LinkSettings,
  email: string,
): Promise<PasswordLink> {
  return createPasswordLink(store, settings, await userWithEmail(store, email), 'reset');
}

/** An administrator's reset link from the Users page: what `kbqa users reset-password` prints, by user id. */
export async function createPasswordResetLinkForUser(
  store: Store,
  settings: LinkSettings,
  userId: string,
): Promise<{ user: UserRecord; link: PasswordLink }> {
  const user = await store.findUserById(userId);
  if (!user) throw new NotFoundError(`user ${userId} not found`);
  return { user, link: await createPasswordLink(store, settings, user, 'reset') };
}

export const listUsers = (store: Store) => store.listUsers();

/** What deleting an account removed (its KBs: soft-deleted now, purged with their documents by the sweep). */
export interface DeletedAccount {
  api_keys_revoked: number;
  sessions_ended: number;
  conversations_deleted: number;
  knowledge_bases_deleted: number;
}

/**
 * Deletes an account as an administrator would: first what lets it in (keys, sessions, password links), then its
 * conversations with their messages and feedback, its KBs (soft, as KB deletion does: the sweep purges them with
 * their documents and invitations), shares with it and invitations to and from it, and the user record last, so an
 * interrupted deletion is finished by running it again.
 */
export async function deleteAccount(store: Store, user: UserRecord): Promise<DeletedAccount> {
  const now = new Date();
  const apiKeysRevoked = await store.revokeApiKeysOfUser(user._id, now);
  const sessionsEnded = await store.deleteSessionsOfUser(user._id);
  await store.deletePasswordLinksOfUser(user._id);
  const conversationsDeleted = await store.deleteConversationsOfUser(user._id);
  let knowledgeBasesDeleted = 0;
  for (const knowledgeBase of await store.listKnowledgeBasesOwnedBy(user._id)) {
    if (knowledgeBase.deleted_at !== null) continue;
    // The default KB too: nobody is left to keep it.
    await store.softDeleteKnowledgeBase(knowledgeBase._id, now);
    knowledgeBasesDeleted += 1;
  }
  await store.removeSharedUserEverywhere(user._id);
  await store.deleteShareInvitationsOfUser(user._id, user.email);
  await store.deleteUsage(user._id);
  await store.deleteUser(user._id);
  return {
    api_keys_revoked: apiKeysRevoked,
    sessions_ended: sessionsEnded,
    conversations_deleted: conversationsDeleted,
    knowledge_bases_deleted: knowledgeBasesDeleted,
  };
}

/** An administrator deletes an account by id (never their own: policies/accounts.ts). */
export async function deleteAccountById(store: Store, userId: string): Promise<DeletedAccount> {
  const user = await store.findUserById(userId);
  if (!user) throw new NotFoundError(`user ${userId} not found`);
  return deleteAccount(store, user);
}

export const createOrganisation = (store: Store, name: string) => store.insertOrganisation(name);

export async function addOrganisationMember(store: Store, organisationName: string, email: string) {
  const organisation = await organisationNamed(store, organisationName);
  const user = await userWithEmail(store, email);
  await store.setUserOrganisation(user._id, organisation._id);
  return { organisation, user };
}

async function knowledgeBaseForAdmin(store: Store, id: string) {
  const record = await store.findKnowledgeBaseIncludingDeleted(id);
  if (!record) throw new NotFoundError(`knowledge base ${id} not found`);
  return record;
}

export async function shareKnowledgeBase(
  store: Store,
  id: string,
  target: { email?: string; organisation?: string },
  shared: boolean,
): Promise<void> {
  await knowledgeBaseForAdmin(store, id);
  if (target.email) {
    const user = await userWithEmail(store, target.email);
    // An operator's share is in force at once (no invitation): whoever runs the CLI is trusted to mean it.
    if (shared) await store.addSharedUser(id, user._id, true);
    else await store.removeSharedUser(id, user._id);
  } else if (target.organisation) {
    const organisation = await organisationNamed(store, target.organisation);
    await store.shareWithOrganisation(id, organisation._id, shared);
  } else {
    throw new BadRequestError('name a user (--email) or an organisation (--org)');
  }
}

export async function setKnowledgeBaseLibrary(store: Store, id: string, isLibrary: boolean): Promise<void> {
  await knowledgeBaseForAdmin(store, id);
  await store.setLibrary(id, isLibrary);
}
