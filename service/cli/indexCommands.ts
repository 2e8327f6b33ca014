// `kbqa index status | migrate | drop-old | rollback | use INDEX`: the chunk index's versions behind its alias.
import { createInterface } from 'node:readline/promises';
import type { Config } from '../config.ts';
import { IndexMigrationError } from '../errors.ts';
import { formatIndexStatus } from '../operations/indexMigration/format.ts';
import { migrateIndex } from '../operations/indexMigration/migrate.ts';
import type { MigrationOutcome } from '../operations/indexMigration/plan.ts';
import { indexStatus } from '../operations/indexMigration/status.ts';
import { dropOldIndices, oldIndices, useIndex, type UseOutcome } from '../operations/indexMigration/swap.ts';
import type { Rag } from '../rag/index.ts';
import type { SearchIndex } from '../search/index.ts';
import type { Store } from '../store/index.ts';
import { progressBar, type Command } from './commandLine.ts';

export interface IndexCommandServices {
  config: Config;
  store(): Promise<Store>;
  search(): Promise<SearchIndex>;
  rag(): Promise<Rag>;
}

/** Asks on a terminal; elsewhere only --yes goes ahead (nothing is there to answer). */
async function confirmed(question: string, yes: boolean): Promise<boolean> {
  if (yes) return true;
  if (!process.stdin.isTTY)
    throw new IndexMigrationError(
      `stdin is not a terminal, so nothing can answer "${question.trimEnd()}": pass --yes to go ahead`,
    );
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await prompt.question(`${question} [y/N] `)).trim());
  } finally {
    prompt.close();
  }
}

function migrationText(outcome: MigrationOutcome): string {
  switch (outcome.outcome) {
    case 'up-to-date':
      return `${outcome.to} is live and matches the current template and embedder: nothing to migrate`;
    case 'stopped':
      return `stopped part-way (${outcome.copied} copied, ${outcome.rebuilt} rebuilt); run kbqa index migrate again to continue`;
    default: {
      const chunks =
        outcome.chunks.source === null
          ? `${outcome.chunks.target} chunks`
          : `${outcome.chunks.target} chunks (${outcome.from} had ${outcome.chunks.source})`;
      const lines = [
        `alias ${outcome.alias} now points to ${outcome.to}${outcome.from && outcome.outcome === 'migrated' ? ` (was ${outcome.from}, kept until kbqa index drop-old)` : ''}`,
        `filled by ${outcome.fill}: ${outcome.documents} documents, ${chunks}; ${outcome.copied} versions copied, ${outcome.rebuilt} rebuilt, ${outcome.removed} chunks removed, ${outcome.catch_up_passes} catch-up pass(es)`,
      ];
      if (outcome.chunk_counts_updated > 0)
        lines.push(`${outcome.chunk_counts_updated} document record(s) now carry their chunk count in ${outcome.to}`);
      if (outcome.left_in_flight > 0)
        lines.push(
          `${outcome.left_in_flight} ingestion(s) were still running: run kbqa index use ${outcome.to} once they end`,
        );
      if (outcome.unrebuildable.length > 0) lines.push(unrebuildableText(outcome.unrebuildable, outcome.to));
      lines.push('next: kbqa eval (compare), then kbqa index drop-old (keep) or kbqa index rollback');
      return lines.join('\n');
    }
  }
}

/** Versions the catch-up after a swap could not rebuild: the index stays unfinished (drop-old refuses), the exit code is 1. */
function unrebuildableText(versions: string[], index: string): string {
  return `${versions.length} document version(s) have no stored original to rebuild from and are missing from ${index} (${versions.slice(0, 10).join(', ')}${versions.length > 10 ? ', …' : ''}): run kbqa doctor --fix, then kbqa index use ${index}`;
}

function useText(outcome: UseOutcome): string {
  const left =
    outcome.left_in_flight > 0
      ? `; ${outcome.left_in_flight} ingestion(s) were still running: run kbqa index use ${outcome.to} again later`
      : '';
  const counts =
    outcome.chunk_counts_updated > 0
      ? `; ${outcome.chunk_counts_updated} document record(s) now carry their chunk count in ${outcome.to}`
      : '';
  const moved =
    outcome.outcome === 'caught-up'
      ? `alias ${outcome.alias} points to ${outcome.to}; its catch-up after the swap from ${outcome.from ?? 'none'}`
      : `alias ${outcome.alias} now points to ${outcome.to} (was ${outcome.from ?? 'none'})`;
  const text = `${moved}; caught up: ${outcome.copied} copied, ${outcome.rebuilt} rebuilt, ${outcome.removed} chunks removed${counts}${left}`;
  return outcome.unrebuildable.length > 0 ? `${text}\n${unrebuildableText(outcome.unrebuildable, outcome.to)}` : text;
}

export async function runIndexCommand(
  action: string,
  operands: string[],
  options: { yes?: boolean },
  services: IndexCommandServices,
  progressBar: (label: string) => (finished: number, total: number) => void,
): Promise<{ json: unknown; text: string; exitCode?: number }> {
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const yes = options.yes === true;
  switch (action) {
    case 'status': {
      const rag = await services.rag();
      const status = await indexStatus({ search: await services.search(), embedder: rag.embedder });
      return { json: status, text: formatIndexStatus(status) };
    }
    case 'migrate': {
      const [store, rag] = [await services.store(), await services.rag()];
      const search = await services.search();
      const status = await indexStatus({ search, embedder: rag.embedder });
      if (
        status.live !== status.target &&
        !(await confirmed(`migrate ${status.alias} from ${status.live} to ${status.target}?`, yes))
      ) {
        return { json: { outcome: 'cancelled' }, text: 'cancelled', exitCode: 1 };
      }
      const outcome = await migrateIndex(
        { store, search, rag, config: services.config },
        { say, onProgress: progressBar('migrate') },
      );
      return {
        json: outcome,
        text: migrationText(outcome),
        exitCode: outcome.outcome === 'stopped' || outcome.unrebuildable.length > 0 ? 1 : 0,
      };
    }
    case 'drop-old': {
      const search = await services.search();
      const old = await oldIndices(search);
      if (old.length === 0)
        return { json: { dropped: [] }, text: `no index of ${search.indices.alias} besides the live one` };
      const listed = old
        .map((entry) => `  ${entry.index} (${entry.chunks} chunks${entry.state ? `, ${entry.state}` : ''})`)
        .join('\n');
      if (!(await confirmed(`delete these indices of ${search.indices.alias}?\n${listed}\n`, yes)))
        return { json: { dropped: [] }, text: 'cancelled', exitCode: 1 };
      const dropped = await dropOldIndices(
        search,
        old.map((entry) => entry.index),
        await services.store(),
      );
      return { json: { dropped }, text: `dropped ${dropped.join(', ')}` };
    }
    case 'rollback':
    case 'use': {
      const requested = action === 'use' ? operands[0] : null;
      if (action === 'use' && !requested)
        throw new IndexMigrationError(
          'kbqa index use takes the index to point the alias to (kbqa index status lists them)',
        );
      const [store, rag] = [await services.store(), await services.rag()];
      const search = await services.search();
      // Named in the question: the index the live one was migrated from, unless one is asked for.
      const live = (await search.indices.family()).find((entry) => entry.aliased);
      const to = requested ?? live?.meta?.migration.source ?? 'the index it was migrated from';
      const question =
        live && to === live.index
          ? `finish the catch-up of ${to} after its swap?`
          : `point ${search.indices.alias} from ${live?.index ?? '(no index)'} to ${to}?`;
      if (!(await confirmed(question, yes))) return { json: { outcome: 'cancelled' }, text: 'cancelled', exitCode: 1 };
      const outcome = await useIndex({ store, search, rag, config: services.config }, requested, { say });
      return { json: outcome, text: useText(outcome), exitCode: outcome.unrebuildable.length > 0 ? 1 : 0 };
    }
    default:
      throw new IndexMigrationError(
        `unknown command: index ${action} (status, migrate, drop-old, rollback, use INDEX)`,
      );
  }
}

export const indexCommand: Command = ({ action, operands, options, services }) =>
  runIndexCommand(action, operands, options, services, progressBar);
