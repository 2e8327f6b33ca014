// Which module runs each `kbqa` command. A module is imported only when its command runs, so `kbqa --help` or a
// mistyped command imports none of them, and each command loads its own code only: `keys create` never loads the
// backup, index-migration or evaluation code (and, through services.ts, never the models or the OpenSearch client).
import type { Command } from './commandLine.ts';

const accounts = () => import('./accountCommands.ts');
const knowledgeBases = () => import('./knowledgeBaseCommands.ts');

/** `group action` (or the group alone, for one-word commands) → its command. `eval` is dispatched before this table. */
export const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  'users create': async () => (await accounts()).createUser,
  'users reset-password': async () => (await accounts()).resetPassword,
  'users recount-usage': async () => (await accounts()).recountUserUsage,
  'users delete': async () => (await accounts()).deleteUser,
  'keys create': async () => (await accounts()).createKey,
  'keys list': async () => (await accounts()).listKeys,
  'keys revoke': async () => (await accounts()).revokeKey,
  'orgs create': async () => (await accounts()).createOrg,
  'orgs add-member': async () => (await accounts()).addOrgMember,
  'kbs share': async () => (await knowledgeBases()).shareKnowledgeBaseCommand,
  'kbs unshare': async () => (await knowledgeBases()).shareKnowledgeBaseCommand,
  'kbs library': async () => (await knowledgeBases()).setLibrary,
  'kbs restore': async () => (await knowledgeBases()).restore,
  'kbs purge': async () => (await knowledgeBases()).purgeDeleted,
  'docs purge-failed': async () => (await knowledgeBases()).purgeFailed,
  'docs reindex': async () => (await knowledgeBases()).reindex,
  'backup create': async () => (await import('./backupCommands.ts')).backup,
  'backup restore': async () => (await import('./backupCommands.ts')).backup,
  doctor: async () => (await import('./doctorCommand.ts')).doctor,
  'feedback export': async () => (await import('./feedbackCommands.ts')).exportFeedback,
};

/** Every `index …` action goes to one module, which names the actions it knows when given another. */
export const indexCommand = async (): Promise<Command> => (await import('./indexCommands.ts')).indexCommand;

/** The command a command line names, or null when it names none. */
export function commandFor(group: string, action: string): (() => Promise<Command>) | null {
  if (group === 'index') return indexCommand;
  const name = action ? `${group} ${action}` : group;
  return Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : null;
}
