// `kbqa backup create DIR` and `backup restore DIR`: the only commands that load the backup code.
import { createBackup } from '../operations/backup/create.ts';
import { formatBackupManifest } from '../operations/backup/manifest.ts';
import { formatRestoreSummary, restoreBackup } from '../operations/backup/restore.ts';
import { BGE_SMALL_EN } from '../rag/embedderIdentity.ts';
import { progressBar, UsageError, type Command } from './commandLine.ts';

export const backup: Command = async ({ action, operands, services }) => {
  const [dir, ...extra] = operands;
  if (!dir || extra.length > 0) throw new UsageError(`backup ${action} takes one directory`);
  // The OpenAI-compatible embedder's vector length is read from the model (rag loads it): restore checks it.
  const embedder = services.config.embedder.selected === 'openai' ? (await services.rag()).embedder : BGE_SMALL_EN;
  const deps = { store: await services.store(), search: await services.search(), config: services.config, embedder };
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  if (action === 'create') {
    const manifest = await createBackup(deps, dir, { progress });
    return { json: manifest, text: formatBackupManifest(dir, manifest) };
  }
  const summary = await restoreBackup({ ...deps, documentDeps: () => services.documentDeps() }, dir, {
    progress,
    rebuildProgress: progressBar,
  });
  // Restored, but something the reconcile could not mend: say so in the exit status too.
  return { json: summary, text: formatRestoreSummary(summary), exitCode: summary.consistent ? 0 : 1 };
};
