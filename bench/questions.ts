// The judged questions of a BEIR split, embedded as the API embeds a question (rag embedQuestion): what the search
// benches send as the query's text and vector, without an API in the way.
import type { Config } from '../service/config.ts';
import { loadBeirDataset } from '../service/eval/beir.ts';

export interface EmbeddedQuestion {
  text: string;
  vector: number[];
}

export async function embeddedQuestions(
  config: Config,
  dataset: string,
  split: string,
  count: number,
): Promise<EmbeddedQuestion[]> {
  const loaded = await loadBeirDataset(dataset, split);
  const texts = [...loaded.qrels.keys()]
    .filter((id) => loaded.queries.has(id))
    .map((id) => loaded.queries.get(id) as string)
    .slice(0, count);
  const { loadRag } = await import('../service/rag/index.ts');
  const rag = await loadRag(config);
  const questions: EmbeddedQuestion[] = [];
  for (const text of texts) questions.push({ text, vector: await rag.embedQuestion(text) });
  await rag.close();
  return questions;
}
