// ReDoS (issue 8 §1): every regular expression that sees user input runs in time linear in it. A 3.2 KB markdown
// heading ("# x" + 3200 spaces + "y") took 5.4 s to ingest, because the heading regex backtracked polynomially.
// Pathological documents go through the real ingest (POST /api/v1/documents, as markdown and as text) and
// pathological passages through every pure function on the ingest and answer paths that holds a regex (those in
// test/unit/redos.test.ts).
// Nothing is timed: the inputs are sized so that a super-linear pattern would not finish before ava's timeout (the
// former heading regex needs ~25 s for 3,200 spaces and grows faster than the square of the line; the 50,000 here
// would take hours), while the linear code takes milliseconds. The lint (eslint.config.mjs) keeps such patterns
// out; these tests check the behaviour the lint cannot see (a hand-written scan, a pattern built at run time).
import { makeUser, type TestUser } from './factories/accounts.ts';
import { DOCUMENTS, RUN_CHARACTERS } from './fixtures/redosInputs.ts';
import { testWithApp } from './helpers/app.ts';
import { createKb } from './helpers/documentsApi.ts';

const test = testWithApp<{ user: TestUser }>();

test.before(async (t) => {
  t.context.user = await makeUser(t.context.app.deps.store, { label: 'redos' });
});

// ── Ingest: 201, at least one chunk, and the document is listed ─────────────────────────────────────────────────

test('the ingest tests below cover every pathological document: six, and two for each run character', (t) => {
  t.is(RUN_CHARACTERS.length, 6);
  t.is(DOCUMENTS.length, 6 + 2 * RUN_CHARACTERS.length);
});

for (const [label, content] of DOCUMENTS) {
  for (const extension of ['md', 'txt']) {
    test.serial(`ingest .${extension}: ${label} (${content.length} characters)`, async (t) => {
      const { app, user } = t.context;
      const kbId = await createKb(app, user.key, `redos ${extension} ${label}`.slice(0, 100));
      const filename = `redos.${extension}`;
      const ingested = await app.call('POST', '/api/v1/documents', {
        key: user.key,
        body: { kb_id: kbId, filename, content },
      });
      t.is(ingested.status, 201, JSON.stringify(ingested.body));
      t.true(ingested.body.document.chunks >= 1, JSON.stringify(ingested.body.document));
      const listed = await app.call('GET', `/api/v1/knowledge-bases/${kbId}/documents`, { key: user.key });
      t.is(listed.status, 200);
      t.deepEqual(
        listed.body.documents.map((document: { id: string; filename: string }) => [document.id, document.filename]),
        [[ingested.body.document.id, filename]],
      );
    });
  }
}
