// `kbqa eval answers DIR`: the project's own answer benchmark (bench/answers/). It puts the benchmark's documents into
// two fresh KBs through the API — one with the printed documents as PDFs (uploaded through the web app, the only way
// PDFs enter), one with their markdown twins; markdown documents go into both — waits until they are ready, asks
// every question of the chosen split of both KBs one at a time through POST /api/v1/query, and scores each answer
// (service/eval/answerScoring.ts): the gold fact, whole source sentences, refusals, the first citation's document
// and page, the query call's latency. It prints a table and writes JSON and a markdown summary (--out). The
// `conversations` split asks the dialogues of DIR/conversations.json through the conversation API instead
// (evalConversations.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../config.ts';
import type { SentenceVectorRecipe } from '../configShape.ts';
import { createKbqaClient, type KbqaClient } from '../eval/apiClient.ts';
import {
  loadAnswerDataset,
  SPLITS,
  type AnswerDataset,
  type BenchQuestion,
  type Split,
} from '../eval/answerDataset.ts';
import {
  summarizeBySplit,
  summaryRows,
  type AnswerSummary,
  type BenchKnowledgeBase,
  type QuestionOutcome,
} from '../eval/answerReport.ts';
import {
  checkWholeSentences,
  citedPages,
  answeredByRow,
  citesGoldPage,
  goldTableRows,
  holdsGoldAnswer,
  isRefusal,
  sourceSentenceKeys,
} from '../eval/answerScoring.ts';
import {
  documentText,
  signInToWebApp,
  signOutOfWebApp,
  uploadPdf,
  waitUntilReady,
  type WebSession,
} from '../eval/webSession.ts';
import { loadDialogues } from '../eval/conversationDataset.ts';
import { conversationMisses, conversationRows, runDialogues, type ConversationResult } from './evalConversations.ts';
import { escapeForTerminal, escapeJsonForTerminal } from './terminalText.ts';

/** What `--split` takes: a question split, all of them, or the dialogues. */
export type AnswerSplit = Split | 'all' | 'conversations';

export interface AnswerEvalOptions {
  directory: string;
  url: string;
  apiKey: string;
  /** The API key's user's web password: PDFs are uploaded through the web app with a session of that user. */
  password: string;
  split: AnswerSplit;
  /** At most this many questions of each kind (answerable, unanswerable, off-topic), or dialogues: a quick subset. */
  limit?: number;
  /** The `conversations` split's dialogues: this file instead of DIR/conversations.json. */
  dialogues?: string;
  out?: string;
  quiet?: boolean;
}

export interface AnswerEvalResult {
  kind: 'answers';
  dataset: string;
  split: AnswerSplit;
  model: string;
  knowledge_bases: Record<BenchKnowledgeBase, string>;
  documents: Array<{ name: string; kind: 'pdf' | 'markdown'; pages: number | null }>;
  ingest_seconds: number;
  /** As this process's environment has them (start the eval with the service's). */
  config: { relevance_floor: number; chunk_tokens: number; sentence_vectors: SentenceVectorRecipe | 'off' };
  summary: Record<string, Record<BenchKnowledgeBase, AnswerSummary>>;
  questions: QuestionOutcome[];
  /** The `conversations` split only. */
  conversations?: ConversationResult;
  finished_at: string;
}

export interface IngestedDocument {
  name: string;
  kind: 'pdf' | 'markdown' | 'file';
  /** Its units as the one segmentation cuts its stored text. */
  source: ReturnType<typeof sourceSentenceKeys>;
}

export function log(options: { quiet?: boolean }, line: string): void {
  if (!options.quiet) process.stderr.write(`${escapeForTerminal(line)}\n`);
}

/** The questions asked: the split's, at most `limit` of each kind. */
export function selectQuestions(questions: BenchQuestion[], split: AnswerSplit, limit?: number): BenchQuestion[] {
  if (split === 'conversations') return [];
  const taken = new Map<string, number>();
  return questions.filter((question) => {
    if (split !== 'all' && question.split !== split) return false;
    const seen = taken.get(question.kind) ?? 0;
    if (limit !== undefined && seen >= limit) return false;
    taken.set(question.kind, seen + 1);
    return true;
  });
}

/** One KB filled with the dataset's documents, each as `kind` says; returns its documents by id. */
async function fillKnowledgeBase(
  client: KbqaClient,
  session: WebSession,
  dataset: AnswerDataset,
  knowledgeBaseId: string,
  printedAs: 'pdf' | 'markdown',
): Promise<Map<string, IngestedDocument>> {
  const documents = new Map<string, IngestedDocument>();
  for (const document of dataset.documents) {
    let id: string;
    if (document.kind === 'pdf' && printedAs === 'pdf' && document.layout) {
      // Loaded here only: pdf-lib is a devDependency, and only this command draws PDFs.
      const { renderLayoutPdf } = await import('../eval/answerPdf.ts');
      const uploaded = await uploadPdf(
        session,
        knowledgeBaseId,
        `${document.name}.pdf`,
        await renderLayoutPdf(document.layout),
      );
      id = (await waitUntilReady(session, uploaded.id)).id;
    } else {
      id = (await client.ingestDocument(knowledgeBaseId, `${document.name}.md`, document.markdown)).id;
    }
    const kind = document.kind === 'pdf' && printedAs === 'pdf' ? 'pdf' : 'markdown';
    documents.set(id, { name: document.name, kind, source: sourceSentenceKeys([await documentText(session, id)]) });
  }
  return documents;
}

/** A table question's outcome (answered by its row, header names attached); null for any other question. */
export function tableRow(dataset: AnswerDataset, question: BenchQuestion, answer: string, refused: boolean) {
  if (question.kind !== 'answerable') return null;
  const twin = dataset.documents.find((document) => document.name === question.document)?.markdown ?? '';
  const rows = goldTableRows(twin, question.answers);
  if (rows.length === 0) return null;
  return !refused && answeredByRow(answer, rows);
}

export async function askQuestion(
  client: KbqaClient,
  question: BenchQuestion,
  knowledgeBase: { label: string; id: string; documents: Map<string, IngestedDocument> },
  dataset: AnswerDataset,
): Promise<{ outcome: QuestionOutcome; model: string }> {
  const started = performance.now();
  const { body } = await client.query({
    query: question.question,
    knowledge_base_ids: [knowledgeBase.id],
    include_chunks: true,
  });
  const ms = performance.now() - started;
  const chunks = body.chunks ?? [];
  const cited = body.citations.map((citation) => ({
    document: knowledgeBase.documents.get(citation.document_id)?.name ?? null,
    pages: citedPages(citation, chunks),
  }));
  const refused = isRefusal(body);
  const sources = body.citations.flatMap((citation) => {
    const document = knowledgeBase.documents.get(citation.document_id);
    return document ? [document.source] : [];
  });
  const source = {
    sentences: new Set(sources.flatMap((one) => [...one.sentences])),
    headings: new Set(sources.flatMap((one) => [...one.headings])),
  };
  const check = refused ? { sentences: 0, pieces: [] } : checkWholeSentences(body.answer, source);
  const answerable = question.kind === 'answerable' ? question : null;
  const goldKind = answerable
    ? (dataset.documents.find((document) => document.name === answerable.document)?.kind ?? null)
    : null;
  const firstRight = answerable ? cited[0]?.document === answerable.document : null;
  const pageRight =
    answerable && goldKind === 'pdf' && knowledgeBase.label === 'pdf'
      ? firstRight === true && citesGoldPage(cited[0].pages, answerable.pages)
      : null;
  return {
    model: body.model,
    outcome: {
      id: question.id,
      split: question.split,
      kind: question.kind,
      knowledge_base: knowledgeBase.label,
      gold_kind: goldKind,
      question: question.question,
      answer: body.answer,
      cited,
      refused,
      holds_gold: answerable ? holdsGoldAnswer(body.answer, answerable.answers) : null,
      table_row: tableRow(dataset, question, body.answer, refused),
      first_citation_right: firstRight,
      page_right: pageRight,
      sentences: check.sentences,
      pieces: check.pieces,
      ms: Math.round(ms * 10) / 10,
    },
  };
}

export async function runAnswerEval(options: AnswerEvalOptions): Promise<AnswerEvalResult> {
  const dataset = await loadAnswerDataset(options.directory);
  const questions = selectQuestions(dataset.questions, options.split, options.limit);
  const dialogues =
    options.split === 'conversations'
      ? (await loadDialogues(options.dialogues ?? join(options.directory, 'conversations.json'), dataset)).slice(
          0,
          options.limit,
        )
      : [];
  const client = createKbqaClient(options.url, options.apiKey);
  const me = await client.me();
  const session = await signInToWebApp(options.url, me.email, options.password);
  try {
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const started = Date.now();
    const knowledgeBases: Array<{ label: BenchKnowledgeBase; id: string; documents: Map<string, IngestedDocument> }> =
      [];
    for (const label of ['pdf', 'markdown'] as const) {
      const created = await client.createKnowledgeBase(
        `eval-${dataset.name}-${label}-${stamp}`,
        `kbqa eval answers: ${dataset.name}, printed documents as ${label}`,
      );
      log(options, `ingesting ${dataset.documents.length} documents into ${created.name} (${created.id})`);
      knowledgeBases.push({
        label,
        id: created.id,
        documents: await fillKnowledgeBase(client, session, dataset, created.id, label),
      });
    }
    const ingestSeconds = (Date.now() - started) / 1000;
    const outcomes: QuestionOutcome[] = [];
    let model = '';
    for (const knowledgeBase of questions.length > 0 ? knowledgeBases : []) {
      log(options, `asking ${questions.length} questions of the ${knowledgeBase.label} KB`);
      for (const question of questions) {
        const asked = await askQuestion(client, question, knowledgeBase, dataset);
        model = asked.model;
        outcomes.push(asked.outcome);
      }
    }
    const conversations =
      dialogues.length > 0
        ? await runDialogues(client, knowledgeBases, dialogues, (line) => log(options, line))
        : undefined;
    if (conversations) model = conversations.model;
    const config = loadConfig();
    const result: AnswerEvalResult = {
      kind: 'answers',
      dataset: dataset.name,
      split: options.split,
      model,
      knowledge_bases: { pdf: knowledgeBases[0].id, markdown: knowledgeBases[1].id },
      documents: dataset.documents.map((document) => ({
        name: document.name,
        kind: document.kind,
        pages: document.layout?.pages.length ?? null,
      })),
      ingest_seconds: ingestSeconds,
      config: {
        relevance_floor: config.retrieval.relevanceFloor,
        chunk_tokens: config.chunking.chunkTokens,
        sentence_vectors: config.chunking.sentenceVectorRecipe ?? 'off',
      },
      summary: summarizeBySplit(outcomes),
      questions: outcomes,
      ...(conversations ? { conversations } : {}),
      finished_at: new Date().toISOString(),
    };
    writeResult(options.out, result);
    return result;
  } finally {
    await signOutOfWebApp(session).catch(() => undefined);
  }
}

export function formatAnswerTable(result: AnswerEvalResult): string {
  const pages = result.documents.reduce((sum, document) => sum + (document.pages ?? 0), 0);
  const { conversations } = result;
  if (conversations)
    return [
      `${result.dataset} (conversations): ${result.documents.length} documents (${pages} PDF pages), ` +
        `${conversations.dialogues} dialogues, ${conversations.follow_ups} follow-ups, ${conversations.topic_changes} topic changes; ` +
        `model ${result.model}; KBs ${result.knowledge_bases.pdf} (PDFs), ${result.knowledge_bases.markdown} (markdown twins)`,
      ...conversationRows(conversations),
    ].join('\n');
  const kinds = (kind: string) =>
    result.questions.filter((question) => question.kind === kind && question.knowledge_base === 'pdf').length;
  return [
    `${result.dataset} (${result.split}): ${result.documents.length} documents (${pages} PDF pages), ` +
      `${kinds('answerable')} answerable, ${kinds('unanswerable')} unanswerable, ${kinds('off_topic')} off-topic questions; model ${result.model}; ` +
      `KBs ${result.knowledge_bases.pdf} (PDFs), ${result.knowledge_bases.markdown} (markdown twins)`,
    ...summaryRows(result.summary),
  ].join('\n');
}

/** The markdown summary beside the JSON: the table, then every answer that missed, so a reader sees why. */
export function formatAnswerMarkdown(result: AnswerEvalResult): string {
  const heading = [
    `# kbqa eval answers: ${result.dataset}`,
    '',
    `${result.finished_at}; split ${result.split}; model ${result.model}; relevance floor ${result.config.relevance_floor}; ` +
      `${result.config.chunk_tokens}-token chunks; ingest ${result.ingest_seconds.toFixed(1)} s.`,
    '',
    formatAnswerTable(result),
    '',
    '## Misses',
    '',
  ];
  if (result.conversations) return [...heading, ...conversationMisses(result.conversations), ''].join('\n');
  const missed = result.questions.filter(
    (outcome) =>
      outcome.holds_gold === false || outcome.pieces.length > 0 || (outcome.kind !== 'answerable') !== outcome.refused,
  );
  const quote = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [
    ...heading,
    '| KB | id | kind | question | answer | gold fact | pieces |',
    '|---|---|---|---|---|---|---|',
    ...missed.map(
      (outcome) =>
        `| ${outcome.knowledge_base} | ${outcome.id} | ${outcome.kind} | ${quote(outcome.question)} | ${quote(outcome.answer)} | ${outcome.holds_gold ?? '–'} | ${quote(outcome.pieces.join(' / '))} |`,
    ),
    '',
  ].join('\n');
}

function writeResult(out: string | undefined, result: AnswerEvalResult): void {
  if (!out) return;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(out.replace(/\.json$/, '') + '.md', formatAnswerMarkdown(result));
}

export const ANSWERS_USAGE =
  'usage: kbqa eval answers DIR [--real] [--url U] [--api-key K] [--split report|tune|report-2|tune-2|all|conversations] [--limit N] [--dialogues FILE] [--out FILE.json] [--json]\n' +
  '       (--real: one KB per kind of DIR/real/MANIFEST.json, the files real programs made, through the web app)\n' +
  "       (the API key's user's web password in KBQA_EVAL_PASSWORD: PDFs are uploaded through the web app)";

export async function runAnswersCommand(positionals: string[], options: Record<string, unknown>): Promise<number> {
  const split = (options.split as string | undefined) ?? 'report';
  if (positionals.length !== 1 || ![...SPLITS, 'all', 'conversations'].includes(split)) {
    console.error(ANSWERS_USAGE);
    return 2;
  }
  if (options.real && split === 'conversations') {
    console.error('kbqa eval answers: --real asks the question splits; the conversations split runs without it');
    return 2;
  }
  const apiKey = (options['api-key'] as string | undefined) ?? process.env.KBQA_API_KEY;
  const password = process.env.KBQA_EVAL_PASSWORD;
  if (!apiKey || !password) {
    console.error(
      "kbqa eval answers: an API key (--api-key or KBQA_API_KEY) and its user's password (KBQA_EVAL_PASSWORD) are required",
    );
    return 2;
  }
  const limit = options.limit === undefined ? undefined : Number(options.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
    console.error('kbqa eval answers: --limit must be a whole number above 0');
    return 2;
  }
  const directory = resolve(positionals[0]);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  try {
    const run: AnswerEvalOptions = {
      directory,
      url: (options.url as string | undefined) ?? process.env.KBQA_URL ?? 'http://127.0.0.1:8080',
      apiKey,
      password,
      split: split as AnswerEvalOptions['split'],
      limit,
      dialogues: options.dialogues as string | undefined,
      out:
        (options.out as string | undefined) ??
        join('bench', 'results', `eval-answers-${options.real ? 'real-' : ''}${stamp}.json`),
      quiet: Boolean(options.json),
    };
    if (options.real) {
      const { runRealAnswerEval, formatRealTable } = await import('./evalRealAnswers.ts');
      const real = await runRealAnswerEval(run);
      console.log(
        options.json ? escapeJsonForTerminal(JSON.stringify(real)) : escapeForTerminal(formatRealTable(real)),
      );
      return 0;
    }
    const result = await runAnswerEval(run);
    console.log(
      options.json ? escapeJsonForTerminal(JSON.stringify(result)) : escapeForTerminal(formatAnswerTable(result)),
    );
    return 0;
  } catch (error) {
    console.error(escapeForTerminal(`kbqa eval answers: ${error instanceof Error ? error.message : String(error)}`));
    return 1;
  }
}
