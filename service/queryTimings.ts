// A question's stage timings: measured by the query command, reported by the route (Server-Timing) and the metrics.
// A leaf of its own, so metrics.ts needs nothing from commands/ (no arrow up).
export interface QueryTimings {
  embedMs: number;
  searchMs: number;
  answerMs: number;
  /** Streamed answers only: from the start of the answer model's call to its first piece of text. */
  firstDeltaMs?: number;
}
