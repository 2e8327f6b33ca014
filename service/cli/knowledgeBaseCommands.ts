// `kbqa kbs …` and `docs …`: sharing, restore and purge of knowledge bases; failed uploads; rebuilding chunks.
import { setKnowledgeBaseLibrary, shareKnowledgeBase } from '../commands/accounts.ts';
import { reindexDocuments } from '../commands/documents.ts';
import { purgeDeletedKnowledgeBases, restoreKnowledgeBase } from '../commands/knowledgeBases.ts';
import { purgeFailedUploads } from '../commands/quotas.ts';
import { parseDuration, progressBar, required, UsageError, type Command } from './commandLine.ts';

/** `kbs share` and `kbs unshare`. */
export const shareKnowledgeBaseCommand: Command = async ({ action, options, services }) => {
  const kb = required(options, 'kb');
  const shared = action === 'share';
  await shareKnowledgeBase(await services.store(), kb, { email: options.email, organisation: options.org }, shared);
  const target = options.email ? { email: options.email } : { org: options.org };
  return { json: { knowledge_base_id: kb, ...target, shared }, text: `${shared ? 'shared' : 'unshared'} ${kb}` };
};

export const setLibrary: Command = async ({ options, services }) => {
  const kb = required(options, 'kb');
  const isLibrary = !options.off;
  await setKnowledgeBaseLibrary(await services.store(), kb, isLibrary);
  return {
    json: { knowledge_base_id: kb, library: isLibrary },
    text: `${kb} is ${isLibrary ? 'now' : 'no longer'} a library KB`,
  };
};

export const restore: Command = async ({ options, services }) => {
  const record = await restoreKnowledgeBase(await services.store(), required(options, 'kb'));
  return { json: { knowledge_base_id: record._id, restored: true }, text: `restored ${record._id}` };
};

export const purgeDeleted: Command = async ({ options, services }) => {
  // By default exactly the web app's "restorable until": what its owners were promised, and not a day less.
  const olderThan = options['older-than'] ? parseDuration(options['older-than']) : services.config.deletedRetentionMs;
  const purged = await purgeDeletedKnowledgeBases(await services.store(), await services.search(), olderThan);
  return { json: { purged }, text: `purged ${purged.length} knowledge base(s)` };
};

export const purgeFailed: Command = async ({ options, services }) => {
  const olderThan = options['older-than']
    ? parseDuration(options['older-than'])
    : services.config.quotas.failedUploadRetentionMs;
  const removed = await purgeFailedUploads(await services.store(), olderThan);
  return { json: { removed }, text: `removed ${removed.length} failed upload(s)` };
};

export const reindex: Command = async ({ options, services }) => {
  if (!options.all && !options.kb) throw new UsageError('docs reindex needs --kb ID or --all');
  const deps = await services.documentDeps();
  const documents = await deps.store.listDocumentSummaries(options.all ? undefined : [required(options, 'kb')]);
  const outcome = await reindexDocuments(
    deps,
    documents.map((document) => document._id),
    progressBar('reindex'),
  );
  return {
    json: outcome,
    text: `rebuilt ${outcome.rebuilt.length}, failed ${outcome.failed.length}, skipped ${outcome.skipped.length} (no live version or text, or in flight)`,
  };
};
