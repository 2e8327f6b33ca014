// The project's own fixture corpus (test/fixtures/corpus/ + corpus-questions.json) written out in BEIR layout, so
// `kbqa eval beir` can be exercised by `npm test` without any dataset from outside the repository.
//
// Layout (what service/eval/beir.ts reads): corpus.jsonl, queries.jsonl, qrels/<split>.tsv (with a header line).
// - document id = the fixture file's name without its extension (unique in the corpus; checked);
// - title = the file's first non-empty line (a Markdown heading's `#` marks dropped), text = the rest;
// - every question is a query (id q1, q2, … in file order) whose one relevant document (grade 1) is its `filename`;
//   a question with no expected document (an off-topic / "nothing relevant" question) is skipped.
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CORPUS_DIR = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));
const QUESTIONS_FILE = fileURLToPath(new URL('../fixtures/corpus-questions.json', import.meta.url));

/** The name of the dataset directory, hence of the eval's KB (`beir-fixture-corpus`): stable across runs. */
export const FIXTURE_BEIR_NAME = 'fixture-corpus';

interface CorpusQuestion {
  question: string;
  filename?: string | null;
}

export interface FixtureBeir {
  /** The dataset directory (inside a fresh temporary directory). */
  directory: string;
  split: string;
  /** Document ids in corpus.jsonl order. */
  documentIds: string[];
  /** Queries written (questions with an expected document). */
  queries: number;
  /** Questions skipped because they expect no document. */
  skipped: number;
  /** Removes the temporary directory. */
  cleanup(): Promise<void>;
}

function documentId(filename: string): string {
  const dot = filename.lastIndexOf('.');
  return dot > 0 ? filename.slice(0, dot) : filename;
}

function splitTitle(content: string): { title: string; text: string } {
  const lines = content.replace(/\r\n/g, '\n').split('\n');
  const first = lines.findIndex((line) => line.trim().length > 0);
  if (first === -1) return { title: '', text: '' };
  return {
    title: lines[first].replace(/^#+\s*/, '').trim(),
    text: lines
      .slice(first + 1)
      .join('\n')
      .trim(),
  };
}

export async function buildFixtureBeir(split = 'test'): Promise<FixtureBeir> {
  const filenames = (await readdir(CORPUS_DIR)).filter((name) => /\.(md|txt)$/.test(name)).sort();
  const ids = new Map<string, string>(); // file name → document id
  for (const filename of filenames) {
    const id = documentId(filename);
    if ([...ids.values()].includes(id)) throw new Error(`fixture corpus: two files share the document id ${id}`);
    ids.set(filename, id);
  }
  const questions = JSON.parse(await readFile(QUESTIONS_FILE, 'utf8')) as CorpusQuestion[];

  const root = await mkdtemp(join(tmpdir(), 'kbqa-fixture-beir-'));
  try {
    const directory = join(root, FIXTURE_BEIR_NAME);
    await mkdir(join(directory, 'qrels'), { recursive: true });

    const corpus: string[] = [];
    for (const filename of filenames) {
      const { title, text } = splitTitle(await readFile(join(CORPUS_DIR, filename), 'utf8'));
      corpus.push(JSON.stringify({ _id: ids.get(filename), title, text }));
    }

    const queries: string[] = [];
    const qrels: string[] = ['query-id\tcorpus-id\tscore'];
    let skipped = 0;
    questions.forEach((item, index) => {
      if (!item.filename) {
        skipped += 1;
        return;
      }
      const expected = ids.get(item.filename);
      if (!expected) throw new Error(`corpus-questions.json: ${item.filename} is not in the fixture corpus`);
      const queryId = `q${index + 1}`;
      queries.push(JSON.stringify({ _id: queryId, text: item.question }));
      qrels.push(`${queryId}\t${expected}\t1`);
    });

    await writeFile(join(directory, 'corpus.jsonl'), `${corpus.join('\n')}\n`);
    await writeFile(join(directory, 'queries.jsonl'), `${queries.join('\n')}\n`);
    await writeFile(join(directory, 'qrels', `${split}.tsv`), `${qrels.join('\n')}\n`);
    return {
      directory,
      split,
      documentIds: [...ids.values()],
      queries: queries.length,
      skipped,
      cleanup: () => rm(root, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
}
