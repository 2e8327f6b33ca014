// Which modules a command loads: runs it with moduleTraceHook.ts preloaded and reads back the list. For the pinned
// property "`kbqa --help` imports nothing heavy" (test/cliStartup.test.ts) and the bench's module counts.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HOOK = fileURLToPath(new URL('./moduleTraceHook.ts', import.meta.url));

/** Packages whose loading takes hundreds of milliseconds or more: models, PDF reading, the search client, the store's driver. */
export const HEAVY_PACKAGES = [
  'onnxruntime-node',
  'onnxruntime-common',
  '@huggingface/tokenizers',
  'pdfjs-dist',
  '@opensearch-project/opensearch',
  'mongodb',
  '@langchain/core',
  '@langchain/openai',
  '@langchain/textsplitters',
  'openai',
  'piscina',
] as const;

export interface TracedRun {
  code: number;
  stdout: string;
  stderr: string;
  /** file: URLs of every module the process loaded, in load order. */
  modules: string[];
}

/** The package a module URL belongs to (`@scope/name` or `name`), or null for a module outside node_modules. */
export function packageOf(url: string): string | null {
  const path = decodeURIComponent(new URL(url).pathname);
  const at = path.lastIndexOf('/node_modules/');
  if (at < 0) return null;
  const parts = path.slice(at + '/node_modules/'.length).split('/');
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** The distinct packages among loaded modules, sorted. */
export function packagesOf(modules: string[]): string[] {
  return [...new Set(modules.map(packageOf).filter((name): name is string => name !== null))].sort();
}

/** Runs `node --import moduleTraceHook.ts ...args` (on this process's Node) and returns what it printed and loaded. */
export async function runTraced(
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<TracedRun> {
  const directory = mkdtempSync(join(tmpdir(), 'kbqa-module-trace-'));
  const traceFile = join(directory, 'modules.txt');
  try {
    const outcome = await new Promise<Omit<TracedRun, 'modules'>>((resolve, reject) => {
      execFile(
        process.execPath,
        ['--import', HOOK, ...args],
        {
          cwd: options.cwd,
          env: { ...(options.env ?? process.env), MODULE_TRACE_FILE: traceFile },
          timeout: options.timeoutMs ?? 120_000,
        },
        (error, stdout, stderr) => {
          const code = error ? (error as { code?: unknown }).code : 0;
          if (typeof code !== 'number') reject(error ?? new Error('no exit code'));
          else resolve({ code, stdout, stderr });
        },
      );
    });
    const modules = readFileSync(traceFile, 'utf8')
      .split('\n')
      .filter((line) => line.length > 0);
    return { ...outcome, modules };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
