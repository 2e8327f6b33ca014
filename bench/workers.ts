// The API's worker processes under a node:cluster primary (KBQA_API_PROCESSES > 1), read from /proc.
import { readFileSync } from 'node:fs';

/** The primary's child processes (its workers), in the kernel's order; [] when there are none or /proc says nothing. */
export function workerPids(primaryPid: number): number[] {
  try {
    return readFileSync(`/proc/${primaryPid}/task/${primaryPid}/children`, 'utf8')
      .trim()
      .split(' ')
      .filter((entry) => entry.length > 0)
      .map(Number);
  } catch {
    return [];
  }
}
