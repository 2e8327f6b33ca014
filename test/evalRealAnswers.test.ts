// `kbqa eval answers --real` end to end on a subset (one question of each kind, the report split) against the real
// stack: one KB per kind of bench/answers/real/MANIFEST.json, files through the web app's upload route (the twins as
// JSON), a kind the upload refuses reported as such, every answer scored.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatRealTable, runRealAnswerEval, type RealAnswerEvalResult } from '../service/cli/evalRealAnswers.ts';
import { createApiKey } from '../service/commands/apiKeys.ts';
import { testWithApp } from './helpers/app.ts';
import { makeWebUser } from './factories/accounts.ts';

const BENCH = fileURLToPath(new URL('../bench/answers/', import.meta.url));

const test = testWithApp<{ email: string; password: string; key: string; out: string }>({
  beforeClose: async (t) => {
    const written = JSON.parse(readFileSync(join(t.context.out, 'real.json'), 'utf8')) as RealAnswerEvalResult;
    for (const kind of written.kinds)
      if (kind.knowledge_base) await t.context.app.deps.search.deleteChunksOfKnowledgeBase(kind.knowledge_base);
    rmSync(t.context.out, { recursive: true, force: true });
  },
});

test.before(async (t) => {
  const user = await makeWebUser(t.context.app.deps.store, { label: 'eval-real' });
  t.context.email = user.email;
  t.context.password = user.password;
  t.context.key = (await createApiKey(t.context.app.deps.store, user.email, 'eval real')).key;
  t.context.out = mkdtempSync(join(tmpdir(), 'kbqa-eval-real-'));
});

test.serial(
  'eval answers --real: a KB per kind, PDFs through the upload route, other kinds accepted or refused',
  async (t) => {
    // The full run for bench/results (KBQA_EVAL_REAL_SPLIT=all): every question of the split, not one of each kind.
    const full = process.env.KBQA_EVAL_REAL_SPLIT as 'all' | undefined;
    const result = await runRealAnswerEval({
      directory: BENCH,
      url: t.context.app.baseUrl,
      apiKey: t.context.key,
      password: t.context.password,
      split: full ?? 'report',
      limit: full ? undefined : 1,
      out: join(t.context.out, 'real.json'),
      quiet: true,
    });
    t.log(formatRealTable(result));
    if (process.env.KBQA_EVAL_REAL_OUT) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(process.env.KBQA_EVAL_REAL_OUT, readFileSync(join(t.context.out, 'real.json')));
      writeFileSync(
        process.env.KBQA_EVAL_REAL_OUT.replace(/\.json$/, '.md'),
        readFileSync(join(t.context.out, 'real.md')),
      );
    }
    const kinds = new Map(result.kinds.map((kind) => [kind.kind, kind]));
    t.is(result.kinds[0].kind, 'sources/*.md', 'the twins first');
    for (const name of [
      'sources/*.md',
      'chromium-pdf/*.pdf',
      'libreoffice/*.libreoffice.pdf',
      'libreoffice/*.docx.pdf',
      'ghostscript-pdf/*.pdf',
      'pdftex-pdf/*.pdf',
    ]) {
      const kind = kinds.get(name);
      t.truthy(kind, name);
      t.is(kind?.accepted, 5, `${name}: all five documents ingested`);
      t.is(kind?.refusal, null, name);
      if (!full) t.is(kind?.summary.all.questions, 3, `${name}: one question of each kind`);
    }
    // Kinds the upload does not take yet are listed with the API's reason and asked nothing.
    for (const kind of result.kinds.filter((candidate) => candidate.refusal !== null)) {
      t.is(kind.accepted, 0, kind.kind);
      t.deepEqual(kind.summary, {}, kind.kind);
    }
    const chromium = result.questions.filter(
      (outcome) => outcome.knowledge_base === 'chromium-pdf/*.pdf' && outcome.gold_kind === 'pdf',
    );
    t.true(chromium.length > 0);
    t.true(
      chromium.every((outcome) => outcome.page_right !== null),
      'a PDF answer of a printed document is paged',
    );
    t.truthy(kinds.get('chromium-pdf/*.pdf')?.twin.all, 'the twins answered the same questions');
  },
);
