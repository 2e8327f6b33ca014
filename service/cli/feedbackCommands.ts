// `kbqa feedback export [--kb ID] [--since DATE] [--rating up|down] [--out FILE]`: the rated answers of every
// conversation as JSONL (question, standalone query, answer, citations, model, rating, comment), never who asked.
import { writeFileSync } from 'node:fs';
import { exportRatedAnswers } from '../commands/conversations.ts';
import { UsageError, type Command } from './commandLine.ts';
import { escapeJsonForTerminal } from './terminalText.ts';

const DATE = /^\d{4}-\d{2}-\d{2}(?:T[\d:.]+Z)?$/;

export const exportFeedback: Command = async ({ options, services }) => {
  const since = options.since;
  if (since !== undefined && (!DATE.test(since) || Number.isNaN(Date.parse(since))))
    throw new UsageError(`--since ${since}: give a date, YYYY-MM-DD (UTC) or an ISO timestamp`);
  const rating = options.rating;
  if (rating !== undefined && rating !== 'up' && rating !== 'down')
    throw new UsageError(`--rating ${rating}: give up or down`);
  const answers = await exportRatedAnswers(await services.store(), {
    ...(options.kb ? { knowledgeBaseId: options.kb } : {}),
    ...(since ? { since: new Date(since) } : {}),
    ...(rating ? { rating } : {}),
  });
  const lines = answers.map((answer) => JSON.stringify(answer));
  if (options.out) {
    writeFileSync(options.out, lines.map((line) => `${line}\n`).join(''), { mode: 0o600 });
    return {
      json: { exported: answers.length, out: options.out },
      text: `${answers.length} rated answers → ${options.out}`,
    };
  }
  // On the terminal, each line still parses the same (escapeJsonForTerminal keeps it JSON).
  return { json: { exported: answers.length, answers }, text: lines.map(escapeJsonForTerminal).join('\n') };
};
