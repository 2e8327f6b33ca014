// `kbqa doctor [--fix]`: records, contents, jobs and chunks that do not match, found (and mended).
import { reindexDocuments } from '../commands/documents.ts';
import { formatDoctorReport, runDoctor } from '../operations/doctor.ts';
import { parseDuration, progressBar, type Command } from './commandLine.ts';

export const doctor: Command = async ({ options, services }) => {
  const report = await runDoctor(
    { store: await services.store(), search: await services.search() },
    {
      fix: options.fix === true,
      leaseMs: services.config.ingestion.leaseMs,
      rebuild: async (ids) => {
        const outcome = await reindexDocuments(await services.documentDeps(), ids, progressBar('rebuild'));
        return [...outcome.failed, ...outcome.skipped];
      },
      ...(options.kb ? { knowledgeBaseIds: [options.kb] } : {}),
      ...(options.grace ? { graceMs: parseDuration(options.grace, 'grace') } : {}),
    },
  );
  return { json: report, text: formatDoctorReport(report) };
};
