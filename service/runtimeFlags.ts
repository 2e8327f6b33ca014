// How the API's Node process is started (docs/operations.md, "Memory"). `npm start` (stack/cli.ts), the bench's API
// process (bench/apiProcess.ts) and the Docker image's CMD pass these flags; test/unit/runtimeFlags.test.ts checks
// the Dockerfile against them. A process forked by KBQA_API_PROCESSES inherits them (node:cluster passes execArgv).
// V8 flags hold for every isolate of the process: the main thread and each model worker thread.

/**
 * `--max-semi-space-size=8`: V8's semi-spaces (the young generation is two of them) default to 32 MB here, and every
 * thread fills its own with short-lived garbage before collecting it. At 8 MB the API's idle RSS fell from 518 to
 * 420 MB and its peak during a 5 MiB ingest from 784 to 639 MB (one round against two), with embedding and query
 * speed within the runs' spread (bench/results/memory-2026-11-26.md).
 *
 * `--heap-growing-percent=50`: after a full collection V8 lets the old generation grow to ~4 times what was live
 * before the next one (its factor under a large heap limit). During a 5 MiB ingest the main thread's heap went from
 * ~54 MB live to 210–235 MB between collections: the largest piece of the API's RSS that comes and goes. At 1.5
 * times the peak over 240 s of that ingest fell from 632 to 535 MB (25 %: 539 MB), speed within the runs' spread
 * (bench/results/memory-heap-growth-2026-11-26.md). No limit is lowered: a large live set still fits.
 */
export const API_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8', '--heap-growing-percent=50'];

/** The environment the API runs with unless its caller sets them: two malloc arenas (glibc reads it at start). */
export const API_ENVIRONMENT_DEFAULTS: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };
