// The answer benchmark's figures (`kbqa eval answers`): each question's outcome in each KB, summed up per split and
// KB, and printed as a table (terminal) and a markdown summary (bench/results/).
import { percentile } from '../../bench/stats.ts';
import { SPLITS, type BenchQuestion, type Split } from './answerDataset.ts';

/** The KB a question was asked of: PDFs as uploaded, or the same documents as markdown twins. */
export type BenchKnowledgeBase = 'pdf' | 'markdown';

export interface QuestionOutcome {
  id: string;
  split: Split;
  kind: BenchQuestion['kind'];
  /** 'pdf' or 'markdown' (the two KBs of the default run), or a real producer's kind (`--real`). */
  knowledge_base: string;
  /** Answerable questions: the kind of the gold document (in the markdown KB a 'pdf' document is its twin). */
  gold_kind: 'pdf' | 'markdown' | null;
  question: string;
  answer: string;
  /** Cited documents in citation order (benchmark document names; null for a document that is not the benchmark's). */
  cited: Array<{ document: string | null; pages: { start: number; end: number } | null }>;
  refused: boolean;
  holds_gold: boolean | null;
  first_citation_right: boolean | null;
  /** PDF gold in the PDF KB only: the first citation's passage holds a gold page. */
  page_right: boolean | null;
  sentences: number;
  pieces: string[];
  /** A table question (its fact a table cell of the twin): answered with that row, header names attached; else null. */
  table_row: boolean | null;
  ms: number;
}

export interface Share {
  hits: number;
  of: number;
  /** hits / of, 3 decimals; null when there is nothing to count. */
  share: number | null;
}

export interface AnswerSummary {
  questions: number;
  gold_fact: { pdf: Share; markdown: Share; all: Share };
  /** Answers that cite something and whose every unit is a whole source unit. */
  whole_sentences: Share & { pieces: number };
  /** Table questions answered by their row with its header names. */
  table_rows: Share;
  first_citation_right: Share;
  page_right: Share;
  refused: { unanswerable: Share; off_topic: Share; answerable: Share };
  latency_ms: { p50: number | null; p95: number | null };
}

function share(hits: number, of: number): Share {
  return { hits, of, share: of > 0 ? Math.round((hits / of) * 1000) / 1000 : null };
}

const count = (outcomes: QuestionOutcome[], test: (outcome: QuestionOutcome) => boolean | null) =>
  outcomes.filter((outcome) => test(outcome) === true).length;

export function summarize(outcomes: QuestionOutcome[]): AnswerSummary {
  const answerable = outcomes.filter((outcome) => outcome.kind === 'answerable');
  const ofKind = (kind: QuestionOutcome['kind']) => outcomes.filter((outcome) => outcome.kind === kind);
  const goldShare = (list: QuestionOutcome[]) =>
    share(
      count(list, (outcome) => outcome.holds_gold),
      list.length,
    );
  const answered = outcomes.filter((outcome) => !outcome.refused);
  const paged = answerable.filter((outcome) => outcome.page_right !== null);
  const refusals = (list: QuestionOutcome[]) =>
    share(
      count(list, (outcome) => outcome.refused),
      list.length,
    );
  const latencies = outcomes.map((outcome) => outcome.ms);
  const rounded = (value: number) => (Number.isFinite(value) ? Math.round(value * 10) / 10 : null);
  return {
    questions: outcomes.length,
    gold_fact: {
      pdf: goldShare(answerable.filter((outcome) => outcome.gold_kind === 'pdf')),
      markdown: goldShare(answerable.filter((outcome) => outcome.gold_kind === 'markdown')),
      all: goldShare(answerable),
    },
    whole_sentences: {
      ...share(
        count(answered, (outcome) => outcome.pieces.length === 0),
        answered.length,
      ),
      pieces: answered.reduce((sum, outcome) => sum + outcome.pieces.length, 0),
    },
    table_rows: share(
      count(answerable, (outcome) => outcome.table_row),
      answerable.filter((outcome) => outcome.table_row !== null).length,
    ),
    first_citation_right: share(
      count(answerable, (outcome) => outcome.first_citation_right),
      answerable.length,
    ),
    page_right: share(
      count(paged, (outcome) => outcome.page_right),
      paged.length,
    ),
    refused: {
      unanswerable: refusals(ofKind('unanswerable')),
      off_topic: refusals(ofKind('off_topic')),
      answerable: refusals(answerable),
    },
    latency_ms: { p50: rounded(percentile(latencies, 50)), p95: rounded(percentile(latencies, 95)) },
  };
}

/** Summaries per split (SPLITS; only those asked) and KB. */
export function summarizeBySplit(
  outcomes: QuestionOutcome[],
): Record<string, Record<BenchKnowledgeBase, AnswerSummary>> {
  const out: Record<string, Record<BenchKnowledgeBase, AnswerSummary>> = {};
  for (const split of SPLITS) {
    const inSplit = outcomes.filter((outcome) => outcome.split === split);
    if (inSplit.length === 0) continue;
    out[split] = {
      pdf: summarize(inSplit.filter((outcome) => outcome.knowledge_base === 'pdf')),
      markdown: summarize(inSplit.filter((outcome) => outcome.knowledge_base === 'markdown')),
    };
  }
  return out;
}

const cell = (value: Share) =>
  value.of === 0 ? '–' : `${value.hits}/${value.of} (${((value.share ?? 0) * 100).toFixed(1)} %)`;

export const TABLE_HEADER = [
  'split',
  'KB',
  'gold fact: PDF docs',
  'gold fact: markdown docs',
  'whole sentences',
  'table row',
  'right source first',
  'right page (PDF)',
  'refused: unanswerable',
  'refused: off-topic',
  'refused: answerable',
  'p50 ms',
  'p95 ms',
];

/** One row per split and KB; in the markdown KB the "PDF docs" column holds the PDFs' markdown twins. */
export function summaryRows(bySplit: Record<string, Record<BenchKnowledgeBase, AnswerSummary>>): string[] {
  const rows: string[] = [`| ${TABLE_HEADER.join(' | ')} |`, `|${TABLE_HEADER.map(() => '---').join('|')}|`];
  for (const [split, kbs] of Object.entries(bySplit)) {
    for (const kb of ['pdf', 'markdown'] as const) {
      const summary = kbs[kb];
      rows.push(
        `| ${[
          split,
          kb === 'pdf' ? 'PDFs' : 'markdown twins',
          cell(summary.gold_fact.pdf),
          cell(summary.gold_fact.markdown),
          cell(summary.whole_sentences),
          cell(summary.table_rows),
          cell(summary.first_citation_right),
          cell(summary.page_right),
          cell(summary.refused.unanswerable),
          cell(summary.refused.off_topic),
          cell(summary.refused.answerable),
          summary.latency_ms.p50 ?? '–',
          summary.latency_ms.p95 ?? '–',
        ].join(' | ')} |`,
      );
    }
  }
  return rows;
}
