// Builds the real app against the running stack (npm test starts OpenSearch and FerretDB first) and listens on an
// ephemeral port. One app per test file (ava runs files in separate processes); nothing is mocked.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import anyTest, { type TestFn } from 'ava';
import pino, { type Logger } from 'pino';
import { buildApp, type AppDeps } from '../../service/app.ts';
import { loadConfig, type Config } from '../../service/config.ts';
import { IngestRunner } from '../../service/jobs/runner.ts';
import { createMetrics } from '../../service/metrics.ts';
import { loadRag } from '../../service/rag/index.ts';
import { openConfiguredSearchIndex } from '../../service/search/index.ts';
import { openStore } from '../../service/store/index.ts';
import { callJson, type CallOptions, type CallResult } from './http.ts';
import { checkResponses, takeViolations } from './openapiCheck.ts';
import { dropDatabase, freshDatabaseUrl } from './webClient.ts';

export interface TestApp {
  baseUrl: string;
  deps: AppDeps;
  /** fetch() against the app with an optional API key; JSON bodies are encoded for you. */
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** The app's logger (default: pino at KBQA_LOG_LEVEL, silent in tests); pass one writing to a stream to read its lines. */
  logger?: Logger;
  /** Which queued jobs the app's runner takes: by default only its own (test files share one database). */
  claims?: 'all' | 'own';
}

export async function startTestApp(environment: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const config: Config = loadConfig({ ...process.env, KBQA_LOG_LEVEL: 'silent', ...environment });
  const logger = options.logger ?? pino({ level: config.logLevel });
  const rag = await loadRag(config);
  const store = await openStore(config.mongodb.url, config.mongodb.timeoutMs, {
    onMonitorRestart: (outcome) => logger.warn(outcome, 'mongodb monitoring restarted after a lost heartbeat check'),
  });
  const search = openConfiguredSearchIndex(config, rag.embedder);
  try {
    await search.applyAssets();
  } catch (error) {
    await Promise.allSettled([store.close(), search.close(), rag.close()]);
    throw error;
  }
  // Each app its own registry: its counters start at zero. Serve them with startMetricsServer(deps.metrics, …).
  const metrics = createMetrics();
  const jobs = new IngestRunner({ store, search, rag, logger, config, metrics }, { claims: options.claims ?? 'own' });
  metrics.collectFrom({ store, models: rag.models, jobs });
  jobs.start();
  const deps: AppDeps = { config, logger, store, search, rag, jobs, metrics };
  const server: Server = checkedApp(deps).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    deps,
    call: (method, path, options) => callJson(baseUrl, method, path, options),
    async close() {
      await jobs.stop(0);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.allSettled([store.close(), search.close(), rag.close()]);
      // Responses of the file's after hooks too (the hook openapiCheck.ts registers has run by then).
      const violations = takeViolations();
      if (violations) throw violations;
    },
  };
}

/** The real app, with every /api/v1 response checked against the OpenAPI description (helpers/openapiCheck.ts). */
function checkedApp(deps: AppDeps) {
  const app = buildApp(deps);
  app.middleware.unshift(checkResponses('in-process app'));
  return app;
}

/**
 * The same app (same stores, models and job runner) with some configuration changed, on a port of its own: for
 * limits and expiries too small or too large to set through the environment.
 */
export async function serveVariant(deps: AppDeps, change: (config: Config) => Config): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server: Server = checkedApp({ ...deps, config: change(deps.config) }).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * serveVariant on a database of its own, made now and dropped on close: for tests that count what one address or
 * user did (throttles, quotas), which other files' data in the shared database would disturb.
 */
export async function serveWithOwnDatabase(
  deps: AppDeps,
  label: string,
  change: (config: Config) => Config = (config) => config,
): Promise<{ baseUrl: string; store: AppDeps['store']; close(): Promise<void> }> {
  const databaseUrl = freshDatabaseUrl(label);
  const store = await openStore(databaseUrl, 5_000);
  const variant = await serveVariant({ ...deps, store }, change);
  return {
    baseUrl: variant.baseUrl,
    store,
    async close() {
      await variant.close();
      await store.close();
      await dropDatabase(databaseUrl);
    },
  };
}

/** ava's `test` for a file that needs one app: started before the file's tests, closed after them. */
export function testWithApp(environment: Record<string, string> = {}): TestFn<{ app: TestApp }> {
  const test = anyTest as TestFn<{ app: TestApp }>;
  test.before(async (t) => {
    t.context.app = await startTestApp(environment);
  });
  test.after.always(async (t) => {
    await t.context.app?.close();
  });
  return test;
}
