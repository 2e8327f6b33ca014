// Runs in a worker thread (see splitterPool.ts): splitting a document is CPU-bound on user content (a 5 MiB text
// takes seconds), so it never runs on the event loop. Each worker loads the embedder's tokenizer once.
import { readFileSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import { splitDocument, type SplitResult } from './splitter.ts';

export interface SplitTask {
  content: string;
  markdown: boolean;
  tokenizerPath: string;
  chunkTokens: number;
  overlapTokens: number;
  maxChars: number;
}

const tokenizers = new Map<string, Tokenizer>();

function tokenizerAt(path: string): Tokenizer {
  let tokenizer = tokenizers.get(path);
  if (!tokenizer) {
    tokenizer = new Tokenizer(JSON.parse(readFileSync(path, 'utf8')) as object, {});
    tokenizers.set(path, tokenizer);
  }
  return tokenizer;
}

export default async function split(task: SplitTask): Promise<SplitResult> {
  const tokenizer = tokenizerAt(task.tokenizerPath);
  return splitDocument(task.content, task.markdown, {
    chunkTokens: task.chunkTokens,
    overlapTokens: task.overlapTokens,
    maxChars: task.maxChars,
    countTokens: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids.length,
  });
}
