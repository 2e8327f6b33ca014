// The RAG module: the embedder, the splitters and the answer models. Only service/rag/ talks to models.
import type { Config } from '../config.ts';
import { BgeOnnxEmbeddings } from './bgeEmbeddings.ts';

export interface Rag {
  embedder: BgeOnnxEmbeddings;
  /** For /readyz: null when the embedder is loaded and answers. */
  embedderProblem(): string | null;
}

export async function loadRag(config: Config): Promise<Rag> {
  const embedder = await BgeOnnxEmbeddings.load({
    modelDir: config.embedder.modelDir,
    batchSize: config.embedder.batchSize,
    ...(config.embedder.threads > 0 ? { threads: config.embedder.threads } : {}),
  });
  return {
    embedder,
    embedderProblem: () => null,
  };
}
