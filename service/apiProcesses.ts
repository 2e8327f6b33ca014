// KBQA_API_PROCESSES > 1: the node:cluster primary. It forks the API processes, each running main.ts's API with its
// own stores, model pool and job runner (they share the ingestion jobs through the store, and the port through the
// primary, which hands each new connection to one of them in turn). It opens no store and loads no model: it
// replaces an API process that dies, serves every process's metrics as one, and on SIGTERM or SIGINT stops them
// and exits once they have finished or given back their jobs.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { errorSummary } from './errors.ts';
import { startMetricsServer, type MetricsServer } from './http/metricsServer.ts';
import { createClusterMetrics, type ClusterMetrics } from './metrics.ts';

/** A process that ran this long before it died was not crash-looping: its replacement starts at once. */
const STABLE_AFTER_MS = 60_000;
const MAX_RESTART_DELAY_MS = 30_000;
/** On stop, how long after the grace period (KBQA_SHUTDOWN_GRACE_MS) a process still running is killed. */
const STOP_MARGIN_MS = 30_000;

/**
 * How long the replacement of a process waits, after `quickExits` deaths in a row each within STABLE_AFTER_MS of
 * its start: the first at once, then 1 s, 2 s, 4 s … up to 30 s, so a crash loop does not spin.
 */
export function restartDelayMs(quickExits: number): number {
  return quickExits <= 1 ? 0 : Math.min(MAX_RESTART_DELAY_MS, 1_000 * 2 ** (quickExits - 2));
}

/** One of the KBQA_API_PROCESSES places: the process in it now, or the replacement it waits for. */
interface Slot {
  worker: Worker | null;
  listening: boolean;
  startedAt: number;
  quickExits: number;
  restart: NodeJS.Timeout | undefined;
}

export async function runPrimary(config: Config, logger: Logger): Promise<void> {
  // Structured clone over IPC: metric values such as NaN (an event-loop lag before its first sample) survive.
  cluster.setupPrimary({ serialization: 'advanced' });
  const slots: Slot[] = Array.from({ length: config.apiProcesses }, () => ({
    worker: null,
    listening: false,
    startedAt: 0,
    quickExits: 0,
    restart: undefined,
  }));
  const listening = () => slots.flatMap((slot) => (slot.worker && slot.listening ? [slot.worker] : []));

  const metrics = createClusterMetrics(listening);
  // Before any process starts: a busy metrics port stops start-up, naming the variable that moves it.
  const metricsServer = config.metrics
    ? await startMetricsServer(metrics, config.metrics, (error) =>
        logger.error({ error: errorSummary(error) }, 'collecting metrics failed'),
      )
    : null;
  if (metricsServer) logger.info(`kbqa metrics on ${metricsServer.url}/metrics (every API process's, aggregated)`);

  const supervisor = new ApiProcesses(slots, { config, logger, metrics, metricsServer });
  logger.info(
    { processes: config.apiProcesses, modelWorkersEach: config.embedder.workers },
    'starting the API processes',
  );
  for (const slot of slots) supervisor.fork(slot);

  process.on('SIGINT', () => supervisor.stop('SIGINT', 0));
  process.on('SIGTERM', () => supervisor.stop('SIGTERM', 0));
}

/** The primary's running state: the slots' processes, replaced when they die, and stopped together. */
class ApiProcesses {
  readonly #slots: Slot[];
  readonly #config: Config;
  readonly #logger: Logger;
  readonly #metrics: ClusterMetrics;
  readonly #metricsServer: MetricsServer | null;
  // Until one process listens, a process that exits means start-up failed (configuration, stores, models, port):
  // every process would fail alike, so the primary stops, as a single process would.
  #started = false;
  #stopping = false;
  #exitCode = 0;

  constructor(
    slots: Slot[],
    parts: { config: Config; logger: Logger; metrics: ClusterMetrics; metricsServer: MetricsServer | null },
  ) {
    this.#slots = slots;
    this.#config = parts.config;
    this.#logger = parts.logger;
    this.#metrics = parts.metrics;
    this.#metricsServer = parts.metricsServer;
  }

  fork(slot: Slot): void {
    slot.restart = undefined;
    if (this.#stopping) return;
    const worker = cluster.fork();
    slot.worker = worker;
    slot.listening = false;
    slot.startedAt = Date.now();
    worker.once('listening', () => {
      slot.listening = true;
      this.#started = true;
      this.#logger.info({ apiPid: worker.process.pid }, 'API process listening');
    });
    worker.once('exit', (code, signal) => this.#onExit(slot, worker, code, signal));
  }

  stop(reason: string, code: number): void {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#exitCode = code;
    const running = this.#slots.filter((slot) => slot.worker !== null).map((slot) => slot.worker!);
    this.#logger.info({ reason, apiPids: running.map((worker) => worker.process.pid) }, 'stopping the API processes');
    for (const slot of this.#slots) clearTimeout(slot.restart);
    // Each finishes its jobs within KBQA_SHUTDOWN_GRACE_MS or gives them back, then exits (main.ts).
    for (const worker of running) worker.process.kill('SIGTERM');
    setTimeout(() => {
      for (const slot of this.#slots) {
        if (!slot.worker) continue;
        this.#logger.warn({ apiPid: slot.worker.process.pid }, 'an API process did not stop in time; killing it');
        slot.worker.process.kill('SIGKILL');
      }
    }, this.#config.ingestion.shutdownGraceMs + STOP_MARGIN_MS).unref();
    this.#finishIfStopped();
  }

  #finishIfStopped(): void {
    if (!this.#stopping || this.#slots.some((slot) => slot.worker !== null)) return;
    void (this.#metricsServer?.close() ?? Promise.resolve()).finally(() => process.exit(this.#exitCode));
  }

  #onExit(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    if (slot.worker === worker) {
      slot.worker = null;
      slot.listening = false;
    }
    // Its counters stay in the sums (metrics.ts): its replacement starts from 0, and the sums must not fall.
    this.#metrics.retireProcess(worker);
    // apiPid, not pid: pino puts the primary's own pid on every line.
    const apiPid = worker.process.pid;
    if (this.#stopping) {
      this.#logger.info({ apiPid, code, signal }, 'API process stopped');
      this.#finishIfStopped();
      return;
    }
    if (!this.#started) {
      this.#logger.error({ apiPid, code, signal }, 'an API process exited during start-up: stopping the others');
      this.stop('start-up failed', 1);
      return;
    }
    this.#metrics.countProcessExit();
    const livedMs = Date.now() - slot.startedAt;
    slot.quickExits = livedMs < STABLE_AFTER_MS ? slot.quickExits + 1 : 1;
    const restartInMs = restartDelayMs(slot.quickExits);
    this.#logger.error(
      { apiPid, code, signal, livedMs, restartInMs },
      'an API process exited unexpectedly: replacing it',
    );
    slot.restart = setTimeout(() => this.fork(slot), restartInMs);
  }
}
