// Reading a dataset in BEIR layout: corpus.jsonl, queries.jsonl, qrels/<split>.tsv.
import { createReadStream, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface CorpusEntry {
  _id: string;
  title: string;
  text: string;
}

export interface BeirDataset {
  name: string;
  corpus: CorpusEntry[];
  queries: Map<string, string>;
  /** query id → (document id → relevance grade) */
  qrels: Map<string, Map<string, number>>;
}

async function readJsonLines<T>(file: string): Promise<T[]> {
  const rows: T[] = [];
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) if (line.trim().length > 0) rows.push(JSON.parse(line) as T);
  return rows;
}

export async function loadBeirDataset(directory: string, split = 'test'): Promise<BeirDataset> {
  for (const file of ['corpus.jsonl', 'queries.jsonl', join('qrels', `${split}.tsv`)]) {
    if (!existsSync(join(directory, file)))
      throw new Error(`${join(directory, file)} is missing: not a BEIR dataset directory`);
  }
  const corpus = (
    await readJsonLines<{ _id: string; title?: string; text?: string }>(join(directory, 'corpus.jsonl'))
  ).map((entry) => ({
    _id: String(entry._id),
    title: entry.title ?? '',
    text: entry.text ?? '',
  }));
  const queries = new Map(
    (await readJsonLines<{ _id: string; text: string }>(join(directory, 'queries.jsonl'))).map((query) => [
      String(query._id),
      query.text,
    ]),
  );
  const qrels = new Map<string, Map<string, number>>();
  const lines = (await readFile(join(directory, 'qrels', `${split}.tsv`), 'utf8')).split('\n');
  for (const line of lines.slice(1)) {
    const [queryId, documentId, score] = line.trim().split('\t');
    if (!queryId || !documentId) continue;
    if (!qrels.has(queryId)) qrels.set(queryId, new Map());
    qrels.get(queryId)?.set(documentId, Number(score));
  }
  // Trailing slashes dropped by a walk back from the end: /\/+$/ would rescan a run of slashes from each of them.
  let end = directory.length;
  while (end > 0 && directory[end - 1] === '/') end -= 1;
  const name = directory.slice(0, end).split('/').pop() ?? 'dataset';
  return { name, corpus, queries, qrels };
}

/** The document a BEIR corpus entry becomes: filename `<_id>.txt`, content = title, blank line, text. */
export function corpusDocument(entry: CorpusEntry): { filename: string; content: string } {
  return { filename: `${entry._id}.txt`, content: entry.title ? `${entry.title}\n\n${entry.text}` : entry.text };
}

export function corpusIdFromFilename(filename: string): string {
  return filename.replace(/\.txt$/, '');
}

/**
 * A slice for smoke runs: the first `size` corpus entries that some judged query needs, topped up with others,
 * and the queries whose relevant documents are all in the slice.
 */
export function sliceDataset(dataset: BeirDataset, size: number): BeirDataset {
  const judged = new Set<string>();
  for (const relevant of dataset.qrels.values()) for (const id of relevant.keys()) judged.add(id);
  const first = dataset.corpus.filter((entry) => judged.has(entry._id)).slice(0, size);
  const rest = dataset.corpus.filter((entry) => !judged.has(entry._id)).slice(0, Math.max(0, size - first.length));
  const corpus = [...first, ...rest];
  const kept = new Set(corpus.map((entry) => entry._id));
  const qrels = new Map([...dataset.qrels].filter(([, relevant]) => [...relevant.keys()].every((id) => kept.has(id))));
  return { ...dataset, corpus, qrels };
}
