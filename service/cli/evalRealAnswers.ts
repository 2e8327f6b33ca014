// `kbqa eval answers DIR --real`: the answer benchmark on the documents real programs made (DIR/real/, listed in
// DIR/real/MANIFEST.json). Every file of the manifest but the sources is a kind's document; a kind is its folder and
// the file's ending after the document's name ("chromium-pdf/*.pdf", "libreoffice/*.docx.pdf", "sheets/*.xlsx",
// "scanned/*-p3.png"); the markdown twins are "sources/*.md". Each kind gets a fresh KB, filled the way the web app
// fills one: text and markdown as JSON, every other file through the web app's upload route (multipart). A kind the
// upload refuses (a 4xx) is reported as not accepted, with the API's message, and asked nothing: when the upload
// takes it, it is measured with no change here. Each kind is asked the questions its files can answer (answerable
// ones whose gold document it holds; for a file of one page, "-pN", those with a gold page N; for `sheets`, which
// hold a document's tables only, the table questions), all unanswerable and off-topic ones, and the markdown twins'
// answers to the same questions are its reference.
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { percentile } from '../../bench/stats.ts';
import { createKbqaClient, type KbqaClient } from '../eval/apiClient.ts';
import { loadAnswerDataset, type AnswerDataset, type BenchQuestion, type Split } from '../eval/answerDataset.ts';
import { summarize, type AnswerSummary, type QuestionOutcome } from '../eval/answerReport.ts';
import { citesGoldPage, goldTableRows, sourceSentenceKeys } from '../eval/answerScoring.ts';
import {
  documentText,
  signInToWebApp,
  signOutOfWebApp,
  uploadFile,
  UploadRefused,
  waitUntilReady,
  type WebSession,
} from '../eval/webSession.ts';
import {
  askQuestion,
  log,
  selectQuestions,
  type AnswerEvalOptions,
  type AnswerSplit,
  type IngestedDocument,
} from './evalAnswers.ts';

/** Folders whose files hold a document's tables only: asked the table questions alone. */
const TABLES_ONLY = new Set(['sheets']);
/** Files the web app sends as JSON text, not through the upload route. */
const TEXT_ENDINGS = ['.md', '.txt'];

interface ManifestFile {
  file: string;
  pages?: number;
  layoutPageStarts?: number[];
}

export interface RealFile {
  file: string;
  document: string;
  /** The one layout page a "-pN" file holds; null: the whole document. */
  page: number | null;
  /** PDF pages (null for files without pages). */
  pages: number | null;
  layoutPageStarts: number[] | null;
}

export interface RealKind {
  kind: string;
  folder: string;
  files: RealFile[];
}

/**
 * The manifest's files grouped by kind: folder and ending after the document's name. Sources are skipped but the
 * markdown twins ("sources/*.md"); files that are not of a benchmark document are skipped.
 */
export function realKinds(manifest: { files: ManifestFile[] }, documents: string[]): RealKind[] {
  const kinds = new Map<string, RealKind>();
  // Longest names first: "water-board-field-handbook" before a shorter name it starts with.
  const names = [...documents].sort((a, b) => b.length - a.length);
  for (const entry of manifest.files) {
    const folder = dirname(entry.file);
    const file = basename(entry.file);
    const document = names.find((name) => file.startsWith(name));
    if (!document) continue;
    const ending = file.slice(document.length);
    if (folder === 'sources' && ending !== '.md') continue;
    const single = /^-p(\d+)\./.exec(ending);
    const kind = `${folder}/*${ending}`;
    const group = kinds.get(kind) ?? { kind, folder, files: [] };
    group.files.push({
      file: entry.file,
      document,
      page: single ? Number(single[1]) : null,
      pages: entry.pages ?? null,
      layoutPageStarts: entry.layoutPageStarts ?? null,
    });
    kinds.set(kind, group);
  }
  // The twins first: every other kind is compared with them.
  return [...kinds.values()].sort((a, b) => Number(b.kind === TWIN) - Number(a.kind === TWIN));
}

const TWIN = 'sources/*.md';

/** The PDF pages a layout page's gold lies on: from where it begins to where the next begins (at least its first). */
export function goldPdfPages(layoutPages: number[], starts: number[] | null): number[] {
  if (!starts) return layoutPages;
  return layoutPages.flatMap((page) => {
    const first = starts[page - 1];
    const last = Math.max(first, (starts[page] ?? first + 1) - 1);
    return Array.from({ length: last - first + 1 }, (_, index) => first + index);
  });
}

/** The questions a kind's files can answer (see the top of this file). */
export function questionsFor(kind: RealKind, questions: BenchQuestion[], dataset: AnswerDataset): BenchQuestion[] {
  return questions.filter((question) => {
    if (question.kind !== 'answerable') return true;
    const file = kind.files.find((candidate) => candidate.document === question.document);
    if (!file) return false;
    if (file.page !== null && !question.pages.includes(file.page)) return false;
    if (TABLES_ONLY.has(kind.folder)) {
      const twin = dataset.documents.find((document) => document.name === question.document)?.markdown ?? '';
      return goldTableRows(twin, question.answers).length > 0;
    }
    return true;
  });
}

export interface RealKindResult {
  kind: string;
  files: number;
  /** Files the upload took (202) and that became ready. */
  accepted: number;
  /** The API's message for the first file it refused or that failed; null when all went in. */
  refusal: string | null;
  knowledge_base: string | null;
  /** Request → ready per file, seconds: median and slowest. */
  ready_seconds: { median: number | null; max: number | null };
  summary: Record<string, AnswerSummary>;
  /** The markdown twins' figures on the same questions. */
  twin: Record<string, AnswerSummary>;
}

export interface RealAnswerEvalResult {
  kind: 'answers-real';
  dataset: string;
  split: AnswerSplit;
  model: string;
  kinds: RealKindResult[];
  questions: QuestionOutcome[];
  finished_at: string;
}

/** Fills a kind's KB: returns the documents by id, or why the upload refused the kind. */
async function fillKind(
  client: KbqaClient,
  session: WebSession,
  real: string,
  kind: RealKind,
  knowledgeBaseId: string,
): Promise<{ documents: Map<string, IngestedDocument>; seconds: number[]; refusal: string | null }> {
  const documents = new Map<string, IngestedDocument>();
  const seconds: number[] = [];
  for (const file of kind.files) {
    const bytes = await readFile(join(real, file.file));
    const filename = basename(file.file);
    const started = Date.now();
    let id: string;
    try {
      if (TEXT_ENDINGS.some((ending) => filename.endsWith(ending))) {
        id = (await client.ingestDocument(knowledgeBaseId, filename, bytes.toString('utf8'))).id;
      } else {
        const uploaded = await uploadFile(session, knowledgeBaseId, filename, bytes);
        id = (await waitUntilReady(session, uploaded.id)).id;
      }
    } catch (error) {
      if (error instanceof UploadRefused || (error instanceof Error && error.message.includes(' failed: ')))
        return { documents, seconds, refusal: `${filename}: ${error.message}` };
      throw error;
    }
    seconds.push((Date.now() - started) / 1000);
    documents.set(id, {
      name: file.document,
      kind: 'file',
      source: sourceSentenceKeys([await documentText(session, id)]),
    });
  }
  return { documents, seconds, refusal: null };
}

const bySplit = (outcomes: QuestionOutcome[]) => {
  const out: Record<string, AnswerSummary> = { all: summarize(outcomes) };
  for (const split of new Set(outcomes.map((outcome) => outcome.split)))
    out[split] = summarize(outcomes.filter((outcome) => outcome.split === split));
  return out;
};

export async function runRealAnswerEval(options: AnswerEvalOptions): Promise<RealAnswerEvalResult> {
  const dataset = await loadAnswerDataset(options.directory);
  const real = join(options.directory, 'real');
  const manifest = JSON.parse(await readFile(join(real, 'MANIFEST.json'), 'utf8')) as { files: ManifestFile[] };
  const kinds = realKinds(
    manifest,
    dataset.documents.map((document) => document.name),
  );
  const questions = selectQuestions(dataset.questions, options.split, options.limit);
  const client = createKbqaClient(options.url, options.apiKey);
  const me = await client.me();
  const session = await signInToWebApp(options.url, me.email, options.password);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const outcomes: QuestionOutcome[] = [];
  const results: RealKindResult[] = [];
  let model = '';
  try {
    for (const kind of kinds) {
      const created = await client.createKnowledgeBase(
        `eval-real-${kind.kind.replace(/[^a-z0-9.-]+/gi, '-')}-${stamp}`,
        `kbqa eval answers --real: ${kind.kind}`,
      );
      log(options, `${kind.kind}: ${kind.files.length} files into ${created.name}`);
      const filled = await fillKind(client, session, real, kind, created.id);
      const accepted = filled.refusal === null;
      const mine: QuestionOutcome[] = [];
      if (accepted) {
        for (const question of questionsFor(kind, questions, dataset)) {
          const asked = await askQuestion(
            client,
            question,
            { label: kind.kind, id: created.id, documents: filled.documents },
            dataset,
          );
          model = asked.model;
          const outcome = asked.outcome;
          const file = question.kind === 'answerable' ? kind.files.find((f) => f.document === question.document) : null;
          // A page is judged where the file has pages and the question gold pages (printed documents).
          outcome.page_right =
            question.kind === 'answerable' && file && file.pages !== null && question.pages.length > 0
              ? outcome.first_citation_right === true &&
                citesGoldPage(
                  outcome.cited[0].pages,
                  file.page !== null ? [1] : goldPdfPages(question.pages, file.layoutPageStarts),
                )
              : null;
          mine.push(outcome);
        }
      }
      outcomes.push(...mine);
      const ids = new Set(mine.map((outcome) => outcome.id));
      const twin = outcomes.filter((outcome) => outcome.knowledge_base === TWIN && ids.has(outcome.id));
      results.push({
        kind: kind.kind,
        files: kind.files.length,
        accepted: filled.seconds.length,
        refusal: filled.refusal,
        knowledge_base: created.id,
        ready_seconds: {
          median: filled.seconds.length ? Math.round(percentile(filled.seconds, 50) * 100) / 100 : null,
          max: filled.seconds.length ? Math.round(Math.max(...filled.seconds) * 100) / 100 : null,
        },
        summary: mine.length ? bySplit(mine) : {},
        twin: twin.length ? bySplit(twin) : {},
      });
    }
  } finally {
    await signOutOfWebApp(session).catch(() => undefined);
  }
  const result: RealAnswerEvalResult = {
    kind: 'answers-real',
    dataset: dataset.name,
    split: options.split,
    model,
    kinds: results,
    questions: outcomes,
    finished_at: new Date().toISOString(),
  };
  if (options.out) {
    mkdirSync(dirname(options.out), { recursive: true });
    writeFileSync(options.out, `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(options.out.replace(/\.json$/, '') + '.md', formatRealMarkdown(result));
  }
  return result;
}

const cell = (value: { hits: number; of: number; share: number | null } | undefined) =>
  !value || value.of === 0 ? '–' : `${value.hits}/${value.of} (${((value.share ?? 0) * 100).toFixed(1)} %)`;

/** Gold fact minus the twin's on the same questions, in points. */
const gap = (summary: AnswerSummary | undefined, twin: AnswerSummary | undefined) =>
  summary?.gold_fact.all.share == null || twin?.gold_fact.all.share == null
    ? '–'
    : `${((summary.gold_fact.all.share - twin.gold_fact.all.share) * 100).toFixed(1)}`;

/** One row per kind for a split ('all' for every question asked). */
export function formatRealTable(result: RealAnswerEvalResult, split = 'all'): string {
  const header = [
    'kind',
    'accepted',
    'ready s (median / max)',
    'gold fact',
    'twin, same questions',
    'points',
    'whole sentences',
    'table row',
    'right source first',
    'right page',
    'refused: unanswerable',
    'refused: off-topic',
    'refused: answerable',
  ];
  const rows = result.kinds.map((kind) => {
    const summary = kind.summary[split];
    const twin = kind.twin[split];
    return `| ${[
      kind.kind,
      `${kind.accepted}/${kind.files}${kind.refusal ? ` (${kind.refusal.replace(/\|/g, '/')})` : ''}`,
      kind.ready_seconds.median === null ? '–' : `${kind.ready_seconds.median} / ${kind.ready_seconds.max}`,
      cell(summary?.gold_fact.all),
      kind.kind === TWIN ? '–' : cell(twin?.gold_fact.all),
      kind.kind === TWIN ? '–' : gap(summary, twin),
      cell(summary?.whole_sentences),
      cell(summary?.table_rows),
      cell(summary?.first_citation_right),
      cell(summary?.page_right),
      cell(summary?.refused.unanswerable),
      cell(summary?.refused.off_topic),
      cell(summary?.refused.answerable),
    ].join(' | ')} |`;
  });
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows].join('\n');
}

export function formatRealMarkdown(result: RealAnswerEvalResult): string {
  const splits = ['all', ...new Set(result.questions.map((outcome) => outcome.split))];
  const quote = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const missed = result.questions.filter(
    (outcome) => outcome.holds_gold === false || outcome.pieces.length > 0 || outcome.table_row === false,
  );
  return [
    `# kbqa eval answers --real: ${result.dataset}`,
    '',
    `${result.finished_at}; split ${result.split}; model ${result.model}. One KB per kind (bench/answers/real/MANIFEST.json);`,
    "'twin, same questions' is the markdown twins' gold fact on the questions that kind was asked; 'points' the kind's minus the twin's.",
    '',
    ...splits.flatMap((split) => [`## ${split}`, '', formatRealTable(result, split), '']),
    '## Misses (gold fact missed, a piece of a sentence, or a table question not answered by its row)',
    '',
    '| kind | id | question | answer | gold fact | table row | pieces |',
    '|---|---|---|---|---|---|---|',
    ...missed.map(
      (outcome) =>
        `| ${outcome.knowledge_base} | ${outcome.id} | ${quote(outcome.question)} | ${quote(outcome.answer)} | ${outcome.holds_gold ?? '–'} | ${outcome.table_row ?? '–'} | ${quote(outcome.pieces.join(' / '))} |`,
    ),
    '',
  ].join('\n');
}
