// `kbqa eval answers` end to end on a tiny subset of the committed benchmark (bench/answers/, two questions of each
// kind from the report split) against the real stack: PDFs drawn and uploaded through the web app, markdown twins
// through the Developer API, every answer scored, JSON and a markdown summary written.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runEvalCommand } from '../service/cli/eval.ts';
import { formatAnswerTable, runAnswerEval, type AnswerEvalResult } from '../service/cli/evalAnswers.ts';
import { createApiKey } from '../service/commands/apiKeys.ts';
import { testWithApp } from './helpers/app.ts';
import { makeWebUser } from './factories/accounts.ts';

const BENCH = fileURLToPath(new URL('../bench/answers/', import.meta.url));

const test = testWithApp<{ email: string; password: string; key: string; out: string; knowledgeBaseIds: string[] }>({
  beforeClose: async (t) => {
    for (const id of t.context.knowledgeBaseIds ?? []) await t.context.app.deps.search.deleteChunksOfKnowledgeBase(id);
  },
});

test.before(async (t) => {
  const user = await makeWebUser(t.context.app.deps.store, { label: 'eval-answers' });
  t.context.email = user.email;
  t.context.password = user.password;
  t.context.key = (await createApiKey(t.context.app.deps.store, user.email, 'eval answers')).key;
  t.context.out = mkdtempSync(join(tmpdir(), 'kbqa-eval-answers-'));
  t.context.knowledgeBaseIds = [];
});

test.after.always(async (t) => {
  rmSync(t.context.out, { recursive: true, force: true });
});

test.serial(
  'eval answers on a subset: both KBs filled, every question asked of each, scored, JSON and markdown written',
  async (t) => {
    const out = join(t.context.out, 'answers.json');
    const result: AnswerEvalResult = await runAnswerEval({
      directory: BENCH,
      url: t.context.app.baseUrl,
      apiKey: t.context.key,
      password: t.context.password,
      split: 'report',
      limit: 2,
      out,
      quiet: true,
    });
    t.context.knowledgeBaseIds.push(result.knowledge_bases.pdf, result.knowledge_bases.markdown);
    t.log(formatAnswerTable(result));
    t.not(result.knowledge_bases.pdf, result.knowledge_bases.markdown);
    t.is(result.questions.length, 12, '6 questions (2 of each kind) asked of each of the 2 KBs');
    t.deepEqual(
      result.documents.filter((document) => document.kind === 'pdf').map((document) => document.pages),
      [4, 9],
    );
    for (const kb of ['pdf', 'markdown'] as const) {
      const summary = result.summary.report[kb];
      t.is(summary.questions, 6, kb);
      t.is(summary.refused.off_topic.of, 2, kb);
      t.is(summary.refused.unanswerable.of, 2, kb);
      t.is(summary.gold_fact.pdf.of, 2, `${kb}: the first two report questions are the handbook's`);
      t.true(
        summary.latency_ms.p50 !== null &&
          summary.latency_ms.p95 !== null &&
          summary.latency_ms.p50 <= summary.latency_ms.p95,
        kb,
      );
    }
    const answerable = result.questions.filter((outcome) => outcome.kind === 'answerable');
    for (const outcome of answerable) {
      t.is(typeof outcome.holds_gold, 'boolean', outcome.id);
      t.is(typeof outcome.first_citation_right, 'boolean', outcome.id);
      t.is(
        outcome.page_right === null,
        outcome.knowledge_base === 'markdown',
        `${outcome.id}: a page is judged for PDFs only`,
      );
      // Every citation resolves to a benchmark document: the KBs hold nothing else.
      t.true(
        outcome.cited.every((cited) => cited.document !== null),
        outcome.id,
      );
    }
    // The PDFs were read: a PDF answer cites a passage with pages; its twin's never has any.
    t.true(answerable.some((outcome) => outcome.knowledge_base === 'pdf' && outcome.cited[0]?.pages !== null));
    t.true(
      answerable
        .filter((outcome) => outcome.knowledge_base === 'markdown')
        .every((outcome) => outcome.cited.every((cited) => cited.pages === null)),
    );
    // Off-topic questions are refused today (their best passages stay under the relevance floor).
    t.is(result.summary.report.pdf.refused.off_topic.hits, 2);

    t.true(existsSync(out));
    const written = JSON.parse(readFileSync(out, 'utf8')) as AnswerEvalResult;
    t.is(written.kind, 'answers');
    t.is(written.questions.length, 12);
    const markdown = readFileSync(join(t.context.out, 'answers.md'), 'utf8');
    t.true(markdown.includes('| split | KB | gold fact: PDF docs |'));
    t.true(markdown.includes('| report | PDFs |') && markdown.includes('| report | markdown twins |'));
  },
);

test.serial(
  'the conversation split: each dialogue asked in a conversation, the follow-up carries the topic, a topic change does not',
  async (t) => {
    const dialogues = join(t.context.out, 'dialogues.json');
    const followUp = 'And for children?';
    const change = 'Where does Lowmoor Rovers football club play its home games?';
    writeFileSync(
      dialogues,
      JSON.stringify({
        dialogues: [
          {
            id: 'castle',
            split: 'held_out',
            turns: [
              { kind: 'opening', query: 'How much is an adult ticket to Lowmoor Castle?', fact: 'f58' },
              {
                kind: 'follow_up',
                query: followUp,
                standalone: 'Do children pay to visit Lowmoor Castle?',
                answers: ['children under 5 go free'],
                document: 'lowmoor-visitor-guide',
              },
              { kind: 'topic_change', query: change, fact: 'f69' },
            ],
          },
        ],
      }),
    );
    const out = join(t.context.out, 'conversations.json');
    const result = await runAnswerEval({
      directory: BENCH,
      url: t.context.app.baseUrl,
      apiKey: t.context.key,
      password: t.context.password,
      split: 'conversations',
      dialogues,
      out,
      quiet: true,
    });
    t.context.knowledgeBaseIds.push(result.knowledge_bases.pdf, result.knowledge_bases.markdown);
    t.log(formatAnswerTable(result));
    t.deepEqual(result.questions, [], 'the question splits are not asked');
    const conversations = result.conversations!;
    t.like(conversations, { dialogues: 1, follow_ups: 1, topic_changes: 1, model: 'kbqa-extractive' });
    t.is(conversations.turns.length, 6, '3 turns in a conversation of each of the 2 KBs');
    t.is(conversations.alone.length, 6, 'each turn also asked alone of each KB');
    for (const kb of ['pdf', 'markdown'] as const) {
      const turns = conversations.turns.filter((turn) => turn.knowledge_base === kb);
      t.deepEqual(
        turns.map((turn) => turn.kind),
        ['opening', 'follow_up', 'topic_change'],
      );
      const [, carried, changed] = turns;
      t.true(carried.standalone_query.startsWith(followUp), carried.standalone_query);
      t.regex(carried.standalone_query, /castle/i, `${kb}: the follow-up searched the castle`);
      t.true(carried.holds_gold, `${kb}: ${carried.answer}`);
      t.is(changed.standalone_query, change, `${kb}: the topic change is searched as written`);
      t.true(changed.holds_gold, `${kb}: ${changed.answer}`);
      const asWritten = conversations.alone.find((entry) => entry.knowledge_base === kb && entry.turn === 2)!;
      t.is(asWritten.as_written.question, followUp);
      t.false(asWritten.as_written.holds_gold, `${kb}: asked alone, "${followUp}" does not find the castle`);
      const summary = conversations.summary.held_out[kb];
      t.like(summary, { dialogues: 1, follow_ups: { hits: 1, of: 1 }, topic_changes: { hits: 1, of: 1 } });
      t.is(summary.follow_ups_standalone.of, 1);
      t.is(summary.topic_changes_searched_as_written.hits, 1);
    }
    t.false('tune' in conversations.summary, 'no tune dialogue in the file');
    const markdown = readFileSync(join(t.context.out, 'conversations.md'), 'utf8');
    t.true(markdown.includes('| dialogues | KB | follow-ups: gold fact | same facts standalone | ratio |'));
    t.true(markdown.includes('| KB | dialogue | turn | kind | question | standalone_query |'));
  },
);

test.serial(
  'eval answers without the web password, or with an unknown split, exits 2 saying what is missing',
  async (t) => {
    const errors: string[] = [];
    const original = console.error;
    const password = process.env.KBQA_EVAL_PASSWORD;
    console.error = (...parts: unknown[]) => errors.push(parts.map(String).join(' '));
    delete process.env.KBQA_EVAL_PASSWORD;
    try {
      t.is(await runEvalCommand('answers', [BENCH], { 'api-key': t.context.key, url: t.context.app.baseUrl }), 2);
      t.regex(errors.join('\n'), /KBQA_EVAL_PASSWORD/);
      t.is(await runEvalCommand('answers', [BENCH], { split: 'test' }), 2);
      t.regex(errors.join('\n'), /--split report\|tune\|report-2\|tune-2\|all\|conversations/);
    } finally {
      console.error = original;
      if (password !== undefined) process.env.KBQA_EVAL_PASSWORD = password;
    }
  },
);
