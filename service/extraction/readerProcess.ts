// What every reader child process does around its reading (pdfWorker.ts for PDFs, documentWorker.ts for the other
// file kinds): it limits its own address space, takes the file's bytes on stdin, and talks to its parent (pdf.ts)
// over IPC. Why a process and an address-space limit measured from inside: the top of pdfWorker.ts.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Lowers this process's address-space limit to what it has mapped now plus the budget (see pdfWorker.ts). */
export function limitAddressSpace(budgetMiB: number): void {
  const mappedKiB = Number(/VmSize:\s*(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
  if (!Number.isFinite(mappedKiB)) throw new Error('cannot read VmSize from /proc/self/status');
  const limit = mappedKiB * 1024 + budgetMiB * 1024 * 1024;
  execFileSync('prlimit', [`--pid=${process.pid}`, `--as=${limit}:${limit}`], { stdio: 'ignore' });
}

/** One message to the parent, resolved once it is written. */
export function sendToParent(message: unknown): Promise<void> {
  return new Promise((resolve, reject) =>
    process.send!(message as object, undefined, {}, (error) => (error ? reject(error) : resolve())),
  );
}

/** The file, whole, from stdin (the parent has checked its size). */
export async function readStdin(): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of process.stdin) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** An allocation that failed under the address-space limit (V8's and the libraries' messages for it). */
export function isAllocationFailure(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return (
    typeof message === 'string' &&
    (message.includes('Array buffer allocation failed') || message.includes('out of memory'))
  );
}
