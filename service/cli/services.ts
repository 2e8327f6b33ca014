// The stores and models a `kbqa` command uses, each opened on first use through a dynamic import: a command that
// never asks for the models never loads onnxruntime or LangChain, one that never asks for the chunk index never
// loads the OpenSearch client (`kbqa keys create` loads the MongoDB driver and nothing heavier).
import type { IngestRunner } from '../jobs/runner.ts';
import type { DocumentDeps } from '../commands/documents.ts';
import type { Config } from '../config.ts';
import type { Rag } from '../rag/index.ts';
import type { SearchIndex } from '../search/index.ts';
import type { Store } from '../store/index.ts';

export interface CliServices {
  config: Config;
  store(): Promise<Store>;
  search(): Promise<SearchIndex>;
  rag(): Promise<Rag>;
  /** An ingestion runner in this process, for the jobs it queues (API processes take them too). */
  jobs(): Promise<IngestRunner>;
  /** What rebuilding documents needs: store, index, models and a runner. */
  documentDeps(): Promise<DocumentDeps>;
  /** Stops the runner, then closes whatever was opened. */
  close(): Promise<void>;
}

async function warnLogger() {
  const { default: pino } = await import('pino');
  return pino({ level: 'warn' });
}

export async function openCliServices(): Promise<CliServices> {
  const { loadConfig } = await import('../config.ts');
  const config = loadConfig();
  let store: Promise<Store> | null = null;
  let search: Promise<SearchIndex> | null = null;
  let rag: Promise<Rag> | null = null;
  let jobs: Promise<IngestRunner> | null = null;
  const services: CliServices = {
    config,
    store: () =>
      (store ??= import('../store/index.ts').then(({ openStore }) =>
        openStore(config.mongodb.url, config.mongodb.timeoutMs),
      )),
    search: () =>
      (search ??= Promise.all([import('../search/index.ts'), import('../rag/embedderIdentity.ts')]).then(
        ([{ openConfiguredSearchIndex }, { BGE_SMALL_EN }]) => openConfiguredSearchIndex(config, BGE_SMALL_EN),
      )),
    rag: () => (rag ??= import('../rag/index.ts').then(({ loadRag }) => loadRag(config))),
    jobs: () =>
      (jobs ??= (async () => {
        const { IngestRunner } = await import('../jobs/runner.ts');
        const runner = new IngestRunner(
          {
            store: await services.store(),
            search: await services.search(),
            rag: await services.rag(),
            logger: await warnLogger(),
            config,
          },
          { claims: 'own' },
        );
        runner.start();
        return runner;
      })()),
    async documentDeps() {
      const [store, rag, jobs] = [await services.store(), await services.rag(), await services.jobs()];
      return { store, search: await services.search(), rag, jobs, logger: await warnLogger(), config };
    },
    async close() {
      await jobs?.then((runner) => runner.stop()).catch(() => undefined);
      await Promise.allSettled([
        store?.then((opened) => opened.close()),
        search?.then((opened) => opened.close()),
        rag?.then((opened) => opened.close()),
      ]);
    },
  };
  return services;
}
