// The bench's log lines (seconds since it started), progress lines of a long step, and an error as one line.
const benchStarted = performance.now();
export function log(message: string): void {
  console.log(`[bench +${((performance.now() - benchStarted) / 1000).toFixed(1).padStart(6)}s] ${message}`);
}

export function progress(label: string, every = 10) {
  let last = -1;
  return (done: number, total: number, extra = '') => {
    const percent = Math.floor((done / total) * 100);
    if (done === total || percent >= last + every) {
      last = percent;
      log(`${label}: ${done}/${total}${extra}`);
    }
  };
}

export const failure = (error: unknown) => (error instanceof Error ? error.message : String(error));
