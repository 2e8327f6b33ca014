// The one test harness: the real app against the running stack (npm test starts OpenSearch and FerretDB first),
// listening on an ephemeral port, on a database of the test file's own; nothing is mocked. A file asks for it with
// testWithApp (one app for its tests) or testWithDatabase (its tests start their own apps); testWithBrowser
// (browser.ts) adds Chromium. ava runs each file in a process of its own, so a file's database is its process's.
import { basename } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
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
  /** The MongoDB database the app runs on (the file's own under the harness). */
  databaseUrl: string;
  deps: AppDeps;
  /** fetch() against the app with an optional API key; JSON bodies are encoded for you. */
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** The app's logger (default: pino at KBQA_LOG_LEVEL, silent in tests); pass one writing to a stream to read its lines. */
  logger?: Logger;
  /** Which queued jobs the app's runner takes: by default only its own (another app of the file may share its database). */
  claims?: 'all' | 'own';
}

export async function startTestApp(
  environment: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<TestApp> {
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
    databaseUrl: config.mongodb.url,
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
export async function serveVariant(
  deps: AppDeps,
  change: (config: Config) => Config,
): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server: Server = checkedApp({ ...deps, config: change(deps.config) }).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * serveVariant on a database of its own, made now and dropped on close: for a test that counts what one address or
 * user did (throttles, quotas) from zero, whatever the file's other tests did on the file's database.
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

/** A database label from the test file's name: `apiKeyRevocation.test.ts` → `apikeyrevocation`. */
function fileLabel(): string {
  const file = anyTest.meta.file.startsWith('file:') ? fileURLToPath(anyTest.meta.file) : anyTest.meta.file;
  return basename(file, '.test.ts')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 40);
}

export interface HarnessOptions<Context> {
  /**
   * Environment over the process's for the file's app: values, or a function run in the harness's before hook
   * (after the file's database exists) that may start what the app needs first (a proxy, a fake model server),
   * keep it in the context, and return the environment that points the app at it.
   */
  env?:
    | Record<string, string>
    | ((t: ExecutionContext<Context>) => Record<string, string> | Promise<Record<string, string>>);
  /** The label the file's database is named with (default: the file's name). */
  ownDatabase?: string;
  /** The app's logger (see TestAppOptions). */
  logger?: Logger;
  /** Which queued jobs the app's runner takes (see TestAppOptions). */
  claims?: 'all' | 'own';
  /**
   * Clean-up that needs the app (deleting the chunks of the file's KBs from the shared index): run after the
   * file's tests, before the app closes. The file's own after hooks run later, once the app is closed.
   */
  beforeClose?: (t: ExecutionContext<Context>) => unknown;
}

/**
 * ava's `test` for a file whose tests start their own apps: a database of the file's own, made before its tests and
 * dropped after them. KBQA_MONGODB_URL names it for the file's whole process, so every app, `kbqa` command and API
 * process the file starts lands there without each call site saying so, and nothing another file writes (or
 * leaves behind) is ever seen.
 */
export function testWithDatabase<Context extends object = Record<never, never>>(
  options: Pick<HarnessOptions<Context & { databaseUrl: string }>, 'ownDatabase' | 'beforeClose'> = {},
): TestFn<{ databaseUrl: string } & Context> {
  const test = anyTest as TestFn<{ databaseUrl: string } & Context>;
  const shared = process.env.KBQA_MONGODB_URL;
  // Serial hooks run in declaration order and before the file's own (concurrent) hooks of the same kind: the
  // file's before hooks find the database (and the app) ready, its after hooks run once they are gone.
  test.serial.before((t) => {
    t.context.databaseUrl = freshDatabaseUrl(options.ownDatabase ?? fileLabel());
    process.env.KBQA_MONGODB_URL = t.context.databaseUrl;
  });
  test.serial.after.always(async (t) => {
    try {
      await options.beforeClose?.(t);
    } finally {
      try {
        // testWithApp's app, closed before its database is dropped.
        await (t.context as { app?: TestApp }).app?.close();
      } finally {
        if (shared === undefined) delete process.env.KBQA_MONGODB_URL;
        else process.env.KBQA_MONGODB_URL = shared;
        if (t.context.databaseUrl) await dropDatabase(t.context.databaseUrl);
      }
    }
  });
  return test;
}

/**
 * ava's `test` for a file that needs one app: its own database (testWithDatabase), and the app on it, started
 * before the file's tests and closed after them, then the database dropped. The file's own before hooks run once
 * the app is up, its after hooks once the app is closed (clean-up that needs the app: `beforeClose`).
 */
export function testWithApp<Context extends object = Record<never, never>>(
  options: HarnessOptions<Context & { app: TestApp; databaseUrl: string }> = {},
): TestFn<{ app: TestApp; databaseUrl: string } & Context> {
  const test = testWithDatabase<{ app: TestApp } & Context>(options);
  test.serial.before(async (t) => {
    const environment = typeof options.env === 'function' ? await options.env(t) : (options.env ?? {});
    t.context.app = await startTestApp(environment, { logger: options.logger, claims: options.claims });
  });
  return test;
}
