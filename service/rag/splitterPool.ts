// The splitter behind one small interface, `split(content, markdown)`, run in a pool of worker threads: the event
// loop only posts the text and awaits the segments, so a huge document never stalls other requests.
import os from 'node:os';
import path from 'node:path';
import { Piscina } from 'piscina';
import { BGE_TOKENIZER_FILE } from './bgeEmbeddings.ts';
import type { SplitResult } from './splitter.ts';
import type { SplitTask } from './splitterWorker.ts';

export interface SplitterPool {
  split(content: string, markdown: boolean): Promise<SplitResult>;
  close(): Promise<void>;
}

export function startSplitterPool(options: { modelDir: string; chunkTokens: number; overlapTokens: number; maxChars: number; threads?: number }): SplitterPool {
  const pool = new Piscina<SplitTask, SplitResult>({
    filename: new URL('./splitterWorker.ts', import.meta.url).href,
    minThreads: 1,
    maxThreads: options.threads ?? os.availableParallelism(),
    // An idle worker costs a tokenizer's memory (~10 MB); let extra ones go.
    idleTimeout: 60_000,
  });
  const tokenizerPath = path.join(options.modelDir, BGE_TOKENIZER_FILE);
  return {
    split: (content, markdown) =>
      pool.run({ content, markdown, tokenizerPath, chunkTokens: options.chunkTokens, overlapTokens: options.overlapTokens, maxChars: options.maxChars }),
    close: () => pool.destroy(),
  };
}
