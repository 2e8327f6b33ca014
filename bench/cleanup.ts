// What the bench must undo however it ends: its API process, the chunks of its KBs in the shared index, its model
// pool, clients and database. The set-up records each in `toCleanUp` as it makes it; cleanup() undoes them at the
// end, on failure, or on Ctrl-C (the handlers below).
import type { Rag } from '../service/rag/index.ts';
import type { SearchIndex } from '../service/search/index.ts';
import type { Store } from '../service/store/index.ts';
import type { ApiProcess } from './apiProcess.ts';
import { dropDatabase } from './database.ts';
import { log } from './progress.ts';

export const toCleanUp: {
  api: ApiProcess | null;
  store: Store | null;
  search: SearchIndex | null;
  rag: Rag | null;
  createdKnowledgeBases: string[];
  /** The bench's own database, once it may exist (see database.ts): dropped at the end. */
  benchDatabase: { url: string; name: string; timeoutMs: number } | null;
  /** Set by Ctrl-C (SIGINT) or SIGTERM: a phase failing under the clean-up is not news. */
  interrupted: boolean;
} = {
  api: null,
  store: null,
  search: null,
  rag: null,
  createdKnowledgeBases: [],
  benchDatabase: null,
  interrupted: false,
};

let cleanupPromise: Promise<void> | null = null;
export function cleanup(): Promise<void> {
  cleanupPromise ??= (async () => {
    const step = async (label: string, work: () => Promise<unknown>) => {
      try {
        await work();
      } catch (error) {
        console.error(`[bench] clean-up: ${label} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    };
    if (toCleanUp.api) {
      const running = toCleanUp.api;
      await step('stopping the API process', () => running.stop());
    }
    // The chunk index is shared: the bench's chunks go one KB at a time. Its records go with its database.
    if (toCleanUp.search) {
      const index = toCleanUp.search;
      for (const knowledgeBaseId of toCleanUp.createdKnowledgeBases) {
        await step(`deleting the chunks of KB ${knowledgeBaseId}`, async () => {
          const deleted = await index.deleteChunksOfKnowledgeBase(knowledgeBaseId);
          if (deleted > 0) log(`clean-up: removed ${deleted} chunks of KB ${knowledgeBaseId}`);
        });
      }
    }
    if (toCleanUp.rag) {
      const models = toCleanUp.rag;
      await step('stopping the model pool', () => models.close());
    }
    if (toCleanUp.search) await step('closing the OpenSearch client', () => (toCleanUp.search as SearchIndex).close());
    if (toCleanUp.store) await step('closing the store', () => (toCleanUp.store as Store).close());
    if (toCleanUp.benchDatabase) {
      const database = toCleanUp.benchDatabase;
      await step(`dropping the database ${database.name}`, async () => {
        await dropDatabase(database.url, database.timeoutMs);
        log(`clean-up: dropped the database ${database.name}`);
      });
    }
  })();
  return cleanupPromise;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    toCleanUp.interrupted = true;
    console.error(`[bench] ${signal}: cleaning up…`);
    void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}
// Last resort if the process exits without the clean-up having stopped the API (sync: SIGKILL only).
process.on('exit', () => toCleanUp.api?.kill());
