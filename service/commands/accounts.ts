// Account administration (the `kbqa` CLI): users, organisations, sharing and the library flag.
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { OrganisationRecord, Store, UserRecord } from '../store/index.ts';
import { DEFAULT_KNOWLEDGE_BASE_NAME, newKnowledgeBaseRecord } from './knowledgeBases.ts';

// Linear: the domain's first dot is found once ([^\s@.]* cannot trade dots with the part after it), unlike
// /^[^\s@]+@[^\s@]+\.[^\s@]+$/, which backtracked polynomially on "a@" + ".".repeat(n) + "@". Same strings accepted.
const EMAIL = /^[^\s@]+@[^\s@][^\s@.]*\.[^\s@]+$/;

async function organisationNamed(store: Store, name: string): Promise<OrganisationRecord> {
  const organisation = await store.findOrganisationByName(name);
  if (!organisation) throw new NotFoundError(`no organisation named ${name}`);
  return organisation;
}

async function userWithEmail(store: Store, email: string): Promise<UserRecord> {
  const user = await store.findUserByEmail(email);
  if (!user) throw new NotFoundError(`no user with email ${email}`);
  return user;
}

/** A new user always gets one default KB, named Default. */
export async function createUser(store: Store, email: string, organisationName?: string) {
  if (!EMAIL.test(email)) throw new BadRequestError(`email: ${email} is not an e-mail address`);
  const organisation = organisationName ? await organisationNamed(store, organisationName) : null;
  const user = await store.insertUser(email, organisation?._id ?? null);
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
    await store.shareWithUser(id, user._id, shared);
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
