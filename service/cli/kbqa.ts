// The `kbqa` admin command: accounts, keys, organisations, sharing, KB restore/purge, and evaluation.
// Every command takes --json (one JSON object on stdout); failures exit non-zero with a message on stderr.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { ApiError } from '../errors.ts';
import { addOrganisationMember, createOrganisation, createUser, setKnowledgeBaseLibrary, shareKnowledgeBase } from '../commands/accounts.ts';
import { createApiKey, listApiKeys, revokeApiKey } from '../commands/apiKeys.ts';
import { purgeDeletedKnowledgeBases, restoreKnowledgeBase } from '../commands/knowledgeBases.ts';
import { formatDoctorReport, runDoctor } from '../commands/doctor.ts';
import { BGE_SMALL_EN } from '../rag/bgeEmbeddings.ts';
import { loadRag, type Rag } from '../rag/index.ts';
import { openConfiguredSearchIndex, type SearchIndex } from '../search/index.ts';
import { DuplicateEmailError, DuplicateOrganisationError, openStore, type Store } from '../store/index.ts';

const USAGE = `usage: kbqa <command> [options] [--json]
  users create --email E [--org NAME]
  keys create --email E [--name N]        prints the key: the only time it is shown
  keys list --email E
  keys revoke --id KEY_ID
  orgs create --name N
  orgs add-member --org N --email E
  kbs share --kb ID (--email E | --org N)     read-only: viewer / org-member
  kbs unshare --kb ID (--email E | --org N)
  kbs library --kb ID [--off]
  kbs restore --kb ID                         undo a soft delete
  kbs purge --older-than 30d                  hard-delete soft-deleted KBs past retention
  doctor [--fix] [--kb ID] [--grace 15m]      find (and with --fix remove or rebuild) chunks, contents and
                                              documents whose document or KB record is missing
  eval beir DIR [--url U] [--api-key K] [--kb ID] [--ablate] [--split test] [--limit N] [--out FILE]`;

class UsageError extends Error {}

const OPTIONS = {
  json: { type: 'boolean' },
  email: { type: 'string' },
  org: { type: 'string' },
  name: { type: 'string' },
  id: { type: 'string' },
  kb: { type: 'string' },
  off: { type: 'boolean' },
  'older-than': { type: 'string' },
  fix: { type: 'boolean' },
  grace: { type: 'string' },
  url: { type: 'string' },
  'api-key': { type: 'string' },
  ablate: { type: 'boolean' },
  split: { type: 'string' },
  limit: { type: 'string' },
  concurrency: { type: 'string' },
  out: { type: 'string' },
  help: { type: 'boolean' },
} as const;

type Options = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function required(options: Options, name: keyof Options): string {
  const value = options[name];
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`--${name} is required`);
  return value;
}

export function parseDuration(text: string, option = 'older-than'): number {
  const match = /^(\d+)(d|h|m|s)$/.exec(text);
  if (!match) throw new UsageError(`--${option}: ${text} is not a duration like 30d, 12h, 15m or 90s`);
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 }[match[2] as 'd' | 'h' | 'm' | 's'];
  return Number(match[1]) * unit;
}

interface Services {
  store(): Promise<Store>;
  search(): SearchIndex;
  rag(): Promise<Rag>;
}

async function runAdmin(group: string, action: string, options: Options, services: Services): Promise<{ json: unknown; text: string }> {
  const command = action ? `${group} ${action}` : group;
  switch (command) {
    case 'users create': {
      const { user, defaultKnowledgeBase } = await createUser(await services.store(), required(options, 'email'), options.org);
      const json = { id: user._id, email: user.email, default_knowledge_base_id: defaultKnowledgeBase._id };
      return { json, text: `created user ${user.email} (${user._id}); default knowledge base ${defaultKnowledgeBase._id}` };
    }
    case 'keys create': {
      const { record, key } = await createApiKey(await services.store(), required(options, 'email'), options.name ?? 'default');
      return { json: { id: record.id, key, name: record.name }, text: `${key}\n(key id ${record.id}; shown once — store it now)` };
    }
    case 'keys list': {
      const keys = await listApiKeys(await services.store(), required(options, 'email'));
      const json = {
        keys: keys.map((key) => ({
          id: key.id,
          name: key.name,
          masked: key.masked,
          created_at: key.created_at.toISOString(),
          last_used_at: key.last_used_at?.toISOString() ?? null,
          revoked_at: key.revoked_at?.toISOString() ?? null,
        })),
      };
      const text = json.keys.map((key) => `${key.id}  ${key.masked}  ${key.name}  ${key.revoked_at ? 'revoked' : 'live'}`).join('\n');
      return { json, text: text || '(no keys)' };
    }
    case 'keys revoke': {
      const id = required(options, 'id');
      await revokeApiKey(await services.store(), id);
      return { json: { id, revoked: true }, text: `revoked key ${id}` };
    }
    case 'orgs create': {
      const organisation = await createOrganisation(await services.store(), required(options, 'name'));
      return { json: { id: organisation._id, name: organisation.name }, text: `created organisation ${organisation.name}` };
    }
    case 'orgs add-member': {
      const { organisation, user } = await addOrganisationMember(await services.store(), required(options, 'org'), required(options, 'email'));
      return { json: { organisation_id: organisation._id, user_id: user._id }, text: `${user.email} is now in ${organisation.name}` };
    }
    case 'kbs share':
    case 'kbs unshare': {
      const kb = required(options, 'kb');
      const shared = action === 'share';
      await shareKnowledgeBase(await services.store(), kb, { email: options.email, organisation: options.org }, shared);
      const target = options.email ? { email: options.email } : { org: options.org };
      return { json: { knowledge_base_id: kb, ...target, shared }, text: `${shared ? 'shared' : 'unshared'} ${kb}` };
    }
    case 'kbs library': {
      const kb = required(options, 'kb');
      const isLibrary = !options.off;
      await setKnowledgeBaseLibrary(await services.store(), kb, isLibrary);
      return { json: { knowledge_base_id: kb, library: isLibrary }, text: `${kb} is ${isLibrary ? 'now' : 'no longer'} a library KB` };
    }
    case 'kbs restore': {
      const record = await restoreKnowledgeBase(await services.store(), required(options, 'kb'));
      return { json: { knowledge_base_id: record._id, restored: true }, text: `restored ${record._id}` };
    }
    case 'kbs purge': {
      const olderThan = parseDuration(required(options, 'older-than'));
      const purged = await purgeDeletedKnowledgeBases(await services.store(), services.search(), olderThan);
      return { json: { purged }, text: `purged ${purged.length} knowledge base(s)` };
    }
    case 'doctor': {
      const report = await runDoctor(
        { store: await services.store(), search: services.search(), ...(options.fix ? { rag: await services.rag() } : {}) },
        {
          fix: options.fix === true,
          ...(options.kb ? { knowledgeBaseIds: [options.kb] } : {}),
          ...(options.grace ? { graceMs: parseDuration(options.grace, 'grace') } : {}),
        },
      );
      return { json: report, text: formatDoctorReport(report) };
    }
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    console.error(`kbqa: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values: options, positionals } = parsed;
  const [group, action, ...rest] = positionals;
  if (options.help || !group) {
    console.log(USAGE);
    return options.help ? 0 : 2;
  }

  if (group === 'eval') {
    const { runEvalCommand } = await import('./eval.ts');
    return runEvalCommand(action, rest, options as Record<string, unknown>);
  }

  const config = loadConfig();
  let store: Store | null = null;
  let search: SearchIndex | null = null;
  let rag: Rag | null = null;
  const services: Services = {
    store: async () => (store ??= await openStore(config.mongodb.url, config.mongodb.timeoutMs)),
    search: () =>
      (search ??= openConfiguredSearchIndex(config, BGE_SMALL_EN)),
    rag: async () => (rag ??= await loadRag(config)),
  };
  try {
    const { json, text } = await runAdmin(group, action ?? '', options, services);
    console.log(options.json ? JSON.stringify(json) : text);
    return 0;
  } catch (error) {
    const known =
      error instanceof UsageError ||
      error instanceof ApiError ||
      error instanceof DuplicateEmailError ||
      error instanceof DuplicateOrganisationError;
    console.error(`kbqa: ${error instanceof Error ? error.message : String(error)}${error instanceof UsageError ? `\n${USAGE}` : ''}`);
    return known ? (error instanceof UsageError ? 2 : 1) : 1;
  } finally {
    await Promise.allSettled([(store as Store | null)?.close(), (search as SearchIndex | null)?.close(), (rag as Rag | null)?.close()]);
  }
}

process.exitCode = await main(process.argv.slice(2));
