// The `kbqa` admin command: accounts, keys, organisations, sharing, KB restore/purge, backups, and evaluation.
// Every command takes --json (one JSON object on stdout); failures exit non-zero with a message on stderr.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { AdminCommandError, ApiError } from '../errors.ts';
import {
  addOrganisationMember,
  createOrganisation,
  createPasswordResetLink,
  inviteUser,
  setKnowledgeBaseLibrary,
  shareKnowledgeBase,
  userWithEmail,
} from '../commands/accounts.ts';
import { purgeFailedUploads, recountUsage } from '../commands/quotas.ts';
import { presentApiKey } from '../presenters/apiKeys.ts';
import { createApiKey, listApiKeys, revokeApiKey } from '../commands/apiKeys.ts';
import { purgeDeletedKnowledgeBases, restoreKnowledgeBase } from '../commands/knowledgeBases.ts';
import { formatDoctorReport, runDoctor } from '../operations/doctor.ts';
import { createBackup } from '../operations/backup/create.ts';
import { formatBackupManifest } from '../operations/backup/manifest.ts';
import { formatRestoreSummary, restoreBackup } from '../operations/backup/restore.ts';
import { reindexDocuments } from '../commands/documents.ts';
import { INDEX_USAGE, runIndexCommand } from './indexCommands.ts';
import { escapeForTerminal, escapeJsonForTerminal } from './terminalText.ts';
import { nameCharacterProblem } from '../http/validation.ts';
import { IngestRunner } from '../jobs/runner.ts';
import type { Config } from '../config.ts';
import pino from 'pino';
import { BGE_SMALL_EN } from '../rag/embedderIdentity.ts';
import { loadRag, type Rag } from '../rag/index.ts';
import { openConfiguredSearchIndex, type SearchIndex } from '../search/index.ts';
import { DuplicateEmailError, DuplicateOrganisationError, openStore, type Store } from '../store/index.ts';

const USAGE = `usage: kbqa <command> [options] [--json]
  users create --email E [--org NAME] [--admin]
                                          prints a one-time link to set a password (the invitation)
  users reset-password --email E          prints a one-time link to set a new password (using it
                                          revokes the user's API keys unless its page is told not to)
  users recount-usage --email E           set the user's quota usage from their documents again (a repair)
  keys create --email E [--name N]        prints the key: the only time it is shown
  keys list --email E
  keys revoke --id KEY_ID
  orgs create --name N
  orgs add-member --org N --email E
  kbs share --kb ID (--email E | --org N)     read-only: viewer / org-member, in force at once
  kbs unshare --kb ID (--email E | --org N)
  kbs library --kb ID [--off]
  kbs restore --kb ID                         undo a soft delete
  kbs purge [--older-than 30d]                hard-delete soft-deleted KBs past retention
                                              (default KBQA_DELETED_RETENTION_DAYS)
  doctor [--fix] [--kb ID] [--grace 15m]      find (and with --fix remove, queue again or rebuild) chunks,
                                              contents, jobs and documents that do not match their records
  docs purge-failed [--older-than 7d]         remove failed uploads and their originals past retention
                                              (default KBQA_FAILED_UPLOAD_RETENTION_DAYS; also hourly in the API)
  docs reindex (--kb ID | --all)              rebuild documents' chunks from their stored text, as ingestion
                                              jobs (running API processes share them), with a progress bar
  backup create DIR                           a chunk snapshot, a MongoDB export (records, texts,
                                              files) and a manifest, into DIR (new or empty)
  backup restore DIR                          into an empty stack, its API stopped, then reconciled
                                              (missing chunks rebuilt from the stored originals, orphans
                                              removed); a failure before the reconcile is undone
  eval beir DIR [--url U] [--api-key K] [--kb ID] [--ablate] [--split test] [--limit N] [--out FILE]
  eval beir DIR --sweep 'knob=v1,v2' [--sweep …]  a grid of query-time fusion knobs (fusion, rrf_rank_constant,
                                              weights, bm25_depth, knn_depth, bm25_fields, sentence_weight) over
                                              the ingested KB
  eval answers DIR [--url U] [--api-key K] [--split report|tune|all] [--limit N] [--out FILE.json]
                                              the answer benchmark (bench/answers): gold facts, whole
                                              sentences, refusals, citations, latency; the key's user's
                                              password in KBQA_EVAL_PASSWORD (PDFs enter via the web app)
${INDEX_USAGE}`;

class UsageError extends Error {}

const OPTIONS = {
  json: { type: 'boolean' },
  email: { type: 'string' },
  org: { type: 'string' },
  name: { type: 'string' },
  id: { type: 'string' },
  kb: { type: 'string' },
  off: { type: 'boolean' },
  admin: { type: 'boolean' },
  'older-than': { type: 'string' },
  fix: { type: 'boolean' },
  all: { type: 'boolean' },
  grace: { type: 'string' },
  url: { type: 'string' },
  'api-key': { type: 'string' },
  ablate: { type: 'boolean' },
  sweep: { type: 'string', multiple: true },
  split: { type: 'string' },
  limit: { type: 'string' },
  concurrency: { type: 'string' },
  out: { type: 'string' },
  help: { type: 'boolean' },
  yes: { type: 'boolean' },
} as const;

type Options = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function required(options: Options, name: keyof Options): string {
  const value = options[name];
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`--${name} is required`);
  return value;
}

/** A required option that names something (a key, an organisation, an email): the API's names rule applies here too. */
function requiredName(options: Options, name: keyof Options): string {
  const value = required(options, name);
  const problem = nameCharacterProblem(value);
  if (problem) throw new UsageError(`--${name}: ${problem}`);
  return value;
}

export function parseDuration(text: string, option = 'older-than'): number {
  const match = /^(\d+)(d|h|m|s)$/.exec(text);
  if (!match) throw new UsageError(`--${option}: ${text} is not a duration like 30d, 12h, 15m or 90s`);
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 }[match[2] as 'd' | 'h' | 'm' | 's'];
  return Number(match[1]) * unit;
}

interface Services {
  config: Config;
  store(): Promise<Store>;
  search(): SearchIndex;
  rag(): Promise<Rag>;
  /** An ingestion runner in this process, for the jobs it queues (API processes take them too). */
  jobs(): Promise<IngestRunner>;
}

/** A progress bar on a terminal, a line per tenth otherwise (stderr: stdout stays the result). */
function progressBar(label: string): (finished: number, total: number) => void {
  let lastTenth = -1;
  return (finished, total) => {
    if (total === 0) return;
    if (process.stderr.isTTY) {
      const width = 30;
      const filled = Math.round((finished / total) * width);
      process.stderr.write(`\r${label} [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${finished}/${total}${finished === total ? '\n' : ''}`);
      return;
    }
    const tenth = Math.floor((finished / total) * 10);
    if (tenth !== lastTenth) {
      lastTenth = tenth;
      process.stderr.write(`${label}: ${finished}/${total}\n`);
    }
  };
}

async function documentDeps(services: Services) {
  const [store, rag, jobs] = [await services.store(), await services.rag(), await services.jobs()];
  return { store, search: services.search(), rag, jobs, logger: pino({ level: 'warn' }), config: services.config };
}

async function runAdmin(
  group: string,
  action: string,
  options: Options,
  services: Services,
  operands: string[] = [],
): Promise<{ json: unknown; text: string; exitCode?: number }> {
  const command = action ? `${group} ${action}` : group;
  if (group === 'index') return runIndexCommand(action, operands, options, services, progressBar);
  switch (command) {
    case 'users create': {
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
    }
    case 'users reset-password': {
      const link = await createPasswordResetLink(await services.store(), services.config.web, required(options, 'email'));
      const json = { password_link: link.url, password_link_expires_at: link.expiresAt.toISOString() };
      const text = `one-time link to set a new password (shown once; until ${link.expiresAt.toISOString()}; using it signs out every session):\n${link.url}`;
      return { json, text };
    }
    case 'users recount-usage': {
      const store = await services.store();
      const user = await userWithEmail(store, required(options, 'email'));
      const usage = await recountUsage(store, user._id);
      return { json: { user_id: user._id, ...usage }, text: `${user.email}: ${usage.documents} document(s), ${usage.bytes} bytes stored` };
    }
    case 'keys create': {
      const name = options.name === undefined ? 'default' : requiredName(options, 'name');
      const { record, key } = await createApiKey(await services.store(), required(options, 'email'), name);
      return { json: { id: record.id, key, name: record.name }, text: `${key}\n(key id ${record.id}; shown once — store it now)` };
    }
    case 'keys list': {
      const keys = await listApiKeys(await services.store(), required(options, 'email'));
      const json = { keys: keys.map(presentApiKey) };
      const text = json.keys.map((key) => `${key.id}  ${key.masked}  ${key.name}  ${key.revoked_at ? 'revoked' : 'live'}`).join('\n');
      return { json, text: text || '(no keys)' };
    }
    case 'keys revoke': {
      const id = required(options, 'id');
      await revokeApiKey(await services.store(), id);
      return { json: { id, revoked: true }, text: `revoked key ${id}` };
    }
    case 'orgs create': {
      const organisation = await createOrganisation(await services.store(), requiredName(options, 'name'));
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
      // By default exactly the web app's "restorable until": what its owners were promised, and not a day less.
      const olderThan = options['older-than'] ? parseDuration(options['older-than']) : services.config.deletedRetentionMs;
      const purged = await purgeDeletedKnowledgeBases(await services.store(), services.search(), olderThan);
      return { json: { purged }, text: `purged ${purged.length} knowledge base(s)` };
    }
    case 'docs purge-failed': {
      const olderThan = options['older-than'] ? parseDuration(options['older-than']) : services.config.quotas.failedUploadRetentionMs;
      const removed = await purgeFailedUploads(await services.store(), olderThan);
      return { json: { removed }, text: `removed ${removed.length} failed upload(s)` };
    }
    case 'docs reindex': {
      if (!options.all && !options.kb) throw new UsageError('docs reindex needs --kb ID or --all');
      const deps = await documentDeps(services);
      const documents = await deps.store.listDocumentSummaries(options.all ? undefined : [required(options, 'kb')]);
      const outcome = await reindexDocuments(deps, documents.map((document) => document._id), progressBar('reindex'));
      return {
        json: outcome,
        text: `rebuilt ${outcome.rebuilt.length}, failed ${outcome.failed.length}, skipped ${outcome.skipped.length} (no live version or text, or in flight)`,
      };
    }
    case 'backup create':
    case 'backup restore': {
      const [dir, ...extra] = operands;
      if (!dir || extra.length > 0) throw new UsageError(`backup ${action} takes one directory`);
      // The OpenAI-compatible embedder's vector length is read from the model (rag loads it): restore checks it.
      const embedder = services.config.embedder.selected === 'openai' ? (await services.rag()).embedder : BGE_SMALL_EN;
      const deps = { store: await services.store(), search: services.search(), config: services.config, embedder };
      const progress = (line: string) => process.stderr.write(`${line}\n`);
      if (action === 'create') {
        const manifest = await createBackup(deps, dir, { progress });
        return { json: manifest, text: formatBackupManifest(dir, manifest) };
      }
      const summary = await restoreBackup({ ...deps, documentDeps: () => documentDeps(services) }, dir, { progress, rebuildProgress: progressBar });
      // Restored, but something the reconcile could not mend: say so in the exit status too.
      return { json: summary, text: formatRestoreSummary(summary), exitCode: summary.consistent ? 0 : 1 };
    }
    case 'doctor': {
      const report = await runDoctor(
        { store: await services.store(), search: services.search() },
        {
          fix: options.fix === true,
          leaseMs: services.config.ingestion.leaseMs,
          rebuild: async (ids) => {
            const outcome = await reindexDocuments(await documentDeps(services), ids, progressBar('rebuild'));
            return [...outcome.failed, ...outcome.skipped];
          },
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
  let jobs: IngestRunner | null = null;
  const services: Services = {
    config,
    store: async () => (store ??= await openStore(config.mongodb.url, config.mongodb.timeoutMs)),
    search: () =>
      (search ??= openConfiguredSearchIndex(config, BGE_SMALL_EN)),
    rag: async () => (rag ??= await loadRag(config)),
    async jobs() {
      if (!jobs) {
        jobs = new IngestRunner({ store: await services.store(), search: services.search(), rag: await services.rag(), logger: pino({ level: 'warn' }), config }, { claims: 'own' });
        jobs.start();
      }
      return jobs;
    },
  };
  try {
    const { json, text, exitCode } = await runAdmin(group, action ?? '', options, services, rest);
    console.log(options.json ? escapeJsonForTerminal(JSON.stringify(json)) : escapeForTerminal(text));
    return exitCode ?? 0;
  } catch (error) {
    const known =
      error instanceof UsageError ||
      error instanceof ApiError ||
      error instanceof DuplicateEmailError ||
      error instanceof AdminCommandError ||
      error instanceof DuplicateOrganisationError;
    console.error(escapeForTerminal(`kbqa: ${error instanceof Error ? error.message : String(error)}${error instanceof UsageError ? `\n${USAGE}` : ''}`));
    return known ? (error instanceof UsageError ? 2 : 1) : 1;
  } finally {
    await (jobs as IngestRunner | null)?.stop();
    await Promise.allSettled([(store as Store | null)?.close(), (search as SearchIndex | null)?.close(), (rag as Rag | null)?.close()]);
  }
}

process.exitCode = await main(process.argv.slice(2));
