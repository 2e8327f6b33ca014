// A process's memory as the kernel counts it, for the tests that hold the API's memory still while a reader child
// meets a hostile file (pdfMemoryBound.test.ts, documentBounds.test.ts).
import { readFileSync } from 'node:fs';

/** VmRSS and VmHWM (the peak RSS since the process started) in MiB, from /proc/<pid>/status. */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(
      status
        .split('\n')
        .find((line) => line.startsWith(`${field}:`))
        ?.split(/\s+/)[1] ?? Number.NaN,
    );
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}
