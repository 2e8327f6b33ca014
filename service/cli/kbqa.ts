// The `kbqa` admin command: accounts, keys, organisations, sharing, KB restore/purge, backups, and evaluation.
// Every command takes --json (one JSON object on stdout); failures exit non-zero with a message on stderr.
//
// It answers at once: this file imports only node:util, the usage text and the command table. A command's module,
// and the stores and models it asks for, are imported when that command runs (commandTable.ts, services.ts), so
// `kbqa --help` loads no package at all and `kbqa keys create` loads the MongoDB driver but never onnxruntime,
// pdfjs, LangChain or the OpenSearch client. test/cliStartup.test.ts pins this; the bench times it.
import { parseArgs } from 'node:util';
import { OPTIONS, UsageError } from './commandLine.ts';
import { commandFor } from './commandTable.ts';
import type { CliServices } from './services.ts';
import { escapeForTerminal, escapeJsonForTerminal } from './terminalText.ts';
import { USAGE } from './usage.ts';

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

  let services: CliServices | null = null;
  try {
    const load = commandFor(group, action ?? '');
    if (!load) throw new UsageError(`unknown command: ${action ? `${group} ${action}` : group}`);
    const [command, opened] = await Promise.all([
      load(),
      import('./services.ts').then(({ openCliServices }) => openCliServices()),
    ]);
    services = opened;
    const { json, text, exitCode } = await command({ action: action ?? '', options, operands: rest, services });
    console.log(options.json ? escapeJsonForTerminal(JSON.stringify(json)) : escapeForTerminal(text));
    return exitCode ?? 0;
  } catch (error) {
    console.error(
      escapeForTerminal(
        `kbqa: ${error instanceof Error ? error.message : String(error)}${error instanceof UsageError ? `\n${USAGE}` : ''}`,
      ),
    );
    return error instanceof UsageError ? 2 : 1;
  } finally {
    await services?.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
