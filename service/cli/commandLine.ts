// What every `kbqa` command shares: its options, its usage error, the shape of a command and of what it returns.
// Nothing here imports beyond node: `kbqa --help` and a mistyped command load this and the usage text only.
import type { parseArgs } from 'node:util';
import type { CliServices } from './services.ts';

export const OPTIONS = {
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
  real: { type: 'boolean' },
  sweep: { type: 'string', multiple: true },
  split: { type: 'string' },
  limit: { type: 'string' },
  dialogues: { type: 'string' },
  concurrency: { type: 'string' },
  out: { type: 'string' },
  since: { type: 'string' },
  rating: { type: 'string' },
  help: { type: 'boolean' },
  yes: { type: 'boolean' },
} as const;

export type Options = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

/** Control-flow signal: the command line is wrong; caught by kbqa.ts main(), which prints it with the usage and exits 2. */
export class UsageError extends Error {}

export interface CommandContext {
  /** The word after the group (`create` in `keys create`); '' for a command of one word (`doctor`). */
  action: string;
  options: Options;
  /** The positionals after the action (`DIR` in `backup create DIR`). */
  operands: string[];
  services: CliServices;
}

export interface CommandResult {
  json: unknown;
  text: string;
  exitCode?: number;
}

export type Command = (context: CommandContext) => Promise<CommandResult>;

export function required(options: Options, name: keyof Options): string {
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

/** A progress bar on a terminal, a line per tenth otherwise (stderr: stdout stays the result). */
export function progressBar(label: string): (finished: number, total: number) => void {
  let lastTenth = -1;
  return (finished, total) => {
    if (total === 0) return;
    if (process.stderr.isTTY) {
      const width = 30;
      const filled = Math.round((finished / total) * width);
      process.stderr.write(
        `\r${label} [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${finished}/${total}${finished === total ? '\n' : ''}`,
      );
      return;
    }
    const tenth = Math.floor((finished / total) * 10);
    if (tenth !== lastTenth) {
      lastTenth = tenth;
      process.stderr.write(`${label}: ${finished}/${total}\n`);
    }
  };
}
