// `kbqa users …`, `keys …`, `orgs …`: accounts, API keys and organisations, in MongoDB only.
import {
  addOrganisationMember,
  createOrganisation,
  createPasswordResetLink,
  deleteAccount,
  inviteUser,
  userWithEmail,
} from '../commands/accounts.ts';
import { createApiKey, listApiKeys, revokeApiKey } from '../commands/apiKeys.ts';
import { recountUsage } from '../commands/quotas.ts';
import { nameCharacterProblem } from '../http/validation.ts';
import { presentApiKey } from '../presenters/apiKeys.ts';
import { required, UsageError, type Command, type Options } from './commandLine.ts';

/** A required option that names something (a key, an organisation, an email): the API's names rule applies here too. */
function requiredName(options: Options, name: keyof Options): string {
  const value = required(options, name);
  const problem = nameCharacterProblem(value);
  if (problem) throw new UsageError(`--${name}: ${problem}`);
  return value;
}

export const createUser: Command = async ({ options, services }) => {
  const { user, defaultKnowledgeBase, link } = await inviteUser(await services.store(), services.config.web, {
    email: requiredName(options, 'email'),
    organisation: options.org,
    isAdmin: options.admin === true,
  });
  const json = {
    id: user._id,
    email: user.email,
    is_admin: user.is_admin === true,
    default_knowledge_base_id: defaultKnowledgeBase._id,
    password_link: link.url,
    password_link_expires_at: link.expiresAt.toISOString(),
  };
  const text =
    `created user ${user.email} (${user._id})${user.is_admin ? ', an administrator' : ''}; default knowledge base ${defaultKnowledgeBase._id}\n` +
    `send them this link to set a password (shown once; works once, until ${link.expiresAt.toISOString()}):\n${link.url}`;
  return { json, text };
};

export const resetPassword: Command = async ({ options, services }) => {
  const link = await createPasswordResetLink(await services.store(), services.config.web, required(options, 'email'));
  const json = { password_link: link.url, password_link_expires_at: link.expiresAt.toISOString() };
  const text = `one-time link to set a new password (shown once; until ${link.expiresAt.toISOString()}; using it signs out every session):\n${link.url}`;
  return { json, text };
};

/** `kbqa users delete --email E`: the account, its keys and sessions, conversations and KBs (docs/operations.md). */
export const deleteUser: Command = async ({ options, services }) => {
  const store = await services.store();
  const user = await userWithEmail(store, required(options, 'email'));
  const deleted = await deleteAccount(store, user);
  return {
    json: { id: user._id, email: user.email, deleted: true, ...deleted },
    text:
      `deleted user ${user.email} (${user._id}): ${deleted.api_keys_revoked} API key(s) revoked, ` +
      `${deleted.sessions_ended} session(s) ended, ${deleted.conversations_deleted} conversation(s) removed, ` +
      `${deleted.knowledge_bases_deleted} knowledge base(s) deleted (purged with their documents after the retention period)`,
  };
};

export const recountUserUsage: Command = async ({ options, services }) => {
  const store = await services.store();
  const user = await userWithEmail(store, required(options, 'email'));
  const usage = await recountUsage(store, user._id);
  return {
    json: { user_id: user._id, ...usage },
    text: `${user.email}: ${usage.documents} document(s), ${usage.bytes} bytes stored`,
  };
};

export const createKey: Command = async ({ options, services }) => {
  const name = options.name === undefined ? 'default' : requiredName(options, 'name');
  const { record, key } = await createApiKey(await services.store(), required(options, 'email'), name);
  return {
    json: { id: record.id, key, name: record.name },
    text: `${key}\n(key id ${record.id}; shown once — store it now)`,
  };
};

export const listKeys: Command = async ({ options, services }) => {
  const keys = await listApiKeys(await services.store(), required(options, 'email'));
  const json = { keys: keys.map(presentApiKey) };
  const text = json.keys
    .map((key) => `${key.id}  ${key.masked}  ${key.name}  ${key.revoked_at ? 'revoked' : 'live'}`)
    .join('\n');
  return { json, text: text || '(no keys)' };
};

export const revokeKey: Command = async ({ options, services }) => {
  const id = required(options, 'id');
  await revokeApiKey(await services.store(), id);
  return { json: { id, revoked: true }, text: `revoked key ${id}` };
};

export const createOrg: Command = async ({ options, services }) => {
  const organisation = await createOrganisation(await services.store(), requiredName(options, 'name'));
  return { json: { id: organisation._id, name: organisation.name }, text: `created organisation ${organisation.name}` };
};

export const addOrgMember: Command = async ({ options, services }) => {
  const { organisation, user } = await addOrganisationMember(
    await services.store(),
    required(options, 'org'),
    required(options, 'email'),
  );
  return {
    json: { organisation_id: organisation._id, user_id: user._id },
    text: `${user.email} is now in ${organisation.name}`,
  };
};
