// Reads config, connects the stores, bootstraps OpenSearch assets, then listens. With KBQA_API_PROCESSES > 1 this
// process is the node:cluster primary (apiProcesses.ts), and each process it forks runs the API below.
import cluster from 'node:cluster';
import pino, { type Logger } from 'pino';
import { buildApp } from './app.ts';
import { runPrimary } from './apiProcesses.ts';
import { IngestRunner } from './jobs/runner.ts';
import { loadConfig, type Config } from './config.ts';
import { errorSummary } from './errors.ts';
import { startMetricsServer } from './http/metricsServer.ts';
import { answerMetricsRequests, createMetrics } from './metrics.ts';
import { purgeExpiredWebRecords } from './commands/sessions.ts';
import { purgeFailedUploads } from './commands/quotas.ts';
import { loadRag } from './rag/index.ts';
import { openConfiguredSearchIndex, resolvingCommand } from './search/index.ts';
import { openStore } from './store/index.ts';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = pino({ level: config.logLevel, redact: ['req.headers.authorization', 'authorization', 'key'] });
  if (cluster.isPrimary && config.apiProcesses > 1) return runPrimary(config, logger);
  return runApi(config, logger);
}

/** One API process: the only one, or one of the primary's (then its metrics are served by the primary). */
async function runApi(config: Config, logger: Logger): Promise<void> {
  const rag = await loadRag(config);
  const store = await openStore(config.mongodb.url, config.mongodb.timeoutMs, {
    onMonitorRestart: (outcome) => logger.warn(outcome, 'mongodb monitoring restarted after a lost heartbeat check'),
  });
  // Never rag.embedder here: an OpenAI-compatible embedder's dimensions are unknown until it answers, and the API
  // starts (reporting the embedder unready) while its endpoint is down. They are read only if an index is created.
  const search = openConfiguredSearchIndex(config, {
    modelName: rag.embedderName,
    get dimensions() {
      return rag.embedder.dimensions;
    },
  });
  const { index, drift } = await search.applyAssets();
  logger.info({ index }, 'search assets applied');
  // Never fixed at start-up (an index's analysis cannot change in place): said, and shown by /readyz.
  if (drift.length > 0) {
    const assets = search.indices.assets();
    const command = resolvingCommand(
      drift,
      index,
      search.indices.indexNameFor(assets.version, rag.embedderName),
      assets,
    );
    logger.warn({ index, drift, command }, 'the chunk index differs from the search asset files');
  }

  const metrics = createMetrics();
  const jobs = new IngestRunner({ store, search, rag, logger, config, metrics });
  metrics.collectFrom({ store, models: rag.models, jobs });
  if (cluster.isWorker) answerMetricsRequests(metrics);
  // Before the API listens: a busy metrics port stops start-up, naming the variable that moves it.
  const metricsServer =
    config.metrics && cluster.isPrimary
      ? await startMetricsServer(metrics, config.metrics, (error) =>
          logger.error({ error: errorSummary(error) }, 'collecting metrics failed'),
        )
      : null;
  if (metricsServer) logger.info(`kbqa metrics on ${metricsServer.url}/metrics`);
  const app = buildApp({ config, logger, store, search, rag, jobs, metrics });
  const server = app.listen(config.port, config.host, () => {
    logger.info(`kbqa API listening on http://${config.host}:${config.port}`);
  });
  jobs.start();

  // Expired sessions, failure windows and links: swept at start and hourly (no TTL index on FerretDB).
  const sweep = () =>
    purgeExpiredWebRecords(store, config.web).then(
      (removed) => logger.info({ removed }, 'expired web sessions and links swept'),
      (error: unknown) => logger.warn({ error: errorSummary(error) }, 'sweeping expired web sessions failed'),
    );
  // Failed uploads' originals past KBQA_FAILED_UPLOAD_RETENTION_DAYS, on the same clock (commands/quotas.ts).
  const purgeFailed = () =>
    purgeFailedUploads(store, config.quotas.failedUploadRetentionMs).then(
      (removed) => logger.info({ removed: removed.length }, 'failed uploads past their retention removed'),
      (error: unknown) => logger.warn({ error: errorSummary(error) }, 'removing failed uploads failed'),
    );
  void sweep().then(purgeFailed);
  setInterval(() => void sweep().then(purgeFailed), 3_600_000).unref();

  // SIGTERM: stop accepting connections, finish the ingestion jobs in hand within the grace period or give them
  // back (their leases are released, so another process takes them at once), then close the stores and exit.
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, jobs: jobs.runningJobs().length }, 'shutting down');
    server.close();
    void jobs
      .stop()
      .then(() => new Promise((resolve) => server.close(() => resolve(undefined))))
      .finally(() => {
        server.closeAllConnections();
        void Promise.allSettled([metricsServer?.close(), store.close(), search.close(), rag.close()]).then(() =>
          process.exit(0),
        );
      });
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  // The primary died (its IPC channel closed): nothing hands this process connections any more.
  if (cluster.isWorker) process.on('disconnect', () => shutdown('primary gone'));
}

main().catch((error: unknown) => {
  console.error(`[kbqa] could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
