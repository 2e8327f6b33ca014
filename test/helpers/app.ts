// Builds the real app against the running stack (npm test starts OpenSearch and FerretDB first) and listens on an
// ephemeral port. One app per test file (ava runs files in separate processes); nothing is mocked.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import pino, { type Logger } from 'pino';
import { buildApp, type AppDeps } from '../../service/app.ts';
import { loadConfig, type Config } from '../../service/config.ts';
import { IngestRunner } from '../../service/commands/ingestJobs.ts';
import { loadRag } from '../../service/rag/index.ts';
import { openConfiguredSearchIndex } from '../../service/search/index.ts';
import { openStore } from '../../service/store/index.ts';
import { callJson, type CallOptions, type CallResult } from './http.ts';

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
  const store = await openStore(config.mongodb.url, config.mongodb.timeoutMs);
  const search = openConfiguredSearchIndex(config, rag.embedder);
  try {
    await search.applyAssets();
  } catch (error) {
    await Promise.allSettled([store.close(), search.close(), rag.close()]);
    throw error;
  }
  const jobs = new IngestRunner({ store, search, rag, logger, config }, { claims: options.claims ?? 'own' });
  jobs.start();
  const deps: AppDeps = { config, logger, store, search, rag, jobs };
  const server: Server = buildApp(deps).listen(0, '127.0.0.1');
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
    },
  };
}

/**
 * The same app (same stores, models and job runner) with some configuration changed, on a port of its own: for
 * limits and expiries too small or too large to set through the environment.
 */
export async function serveVariant(deps: AppDeps, change: (config: Config) => Config): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server: Server = buildApp({ ...deps, config: change(deps.config) }).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
