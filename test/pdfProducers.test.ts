// Chromium-printed PDFs (test/fixtures/real) uploaded as the web app uploads them and asked about: the table's row
// answers with its header names attached, and the sentence printed over three lines answers whole. Through the web
// API, on the running stack. The row is asked for by its price: asked "How many tonnes of Cox's Orange Pippin were
// picked?", the answerer said it held nothing (2026-11-28), although the row is extracted whole: that is the
// answering's, not the reading's.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { testWithApp } from './helpers/app.ts';
import { settled, upload } from './helpers/pdfUploads.ts';
import { WebClient } from './helpers/webClient.ts';

const test = testWithApp<{ databaseUrl: string }>();
const REAL = path.join(import.meta.dirname, 'fixtures', 'real');

test('a Chromium print: the table row answers with its header names, the wrapped sentence answers whole', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const browser = new WebClient(app.baseUrl);
  await browser.signIn(user.email, TEST_PASSWORD);
  const kb = (await browser.call('POST', '/api/web/knowledge-bases', { body: { name: 'orchard' } })).body
    .knowledge_base;
  for (const name of ['table-row.pdf', 'chromium-paragraph.pdf']) {
    const uploaded = await upload(browser, kb.id, name, new Uint8Array(await readFile(path.join(REAL, name))));
    t.is(uploaded.status, 202, name);
    t.is((await settled(browser, uploaded.body.document.id)).status, 'ready', name);
  }
  const ask = async (query: string) => {
    const { status, body } = await browser.call('POST', '/api/web/query', {
      body: { query, knowledge_base_ids: [kb.id] },
    });
    t.is(status, 200, query);
    return body.answer as string;
  };
  const price = await ask("What was the price per tonne of Cox's Orange Pippin?");
  t.true(
    price.includes(
      "Variety: Cox's Orange Pippin; Picking starts: September; Tonnes picked: 187; Price per tonne: 525 pounds",
    ),
    price,
  );
  const cost = await ask('How much did the cold store cost to build?');
  t.true(
    cost.includes(
      'The cold store cost 84,000 pounds to build, and it keeps the fruit at a constant temperature of two degrees Celsius',
    ),
    cost,
  );
  t.false(cost.includes('Newsletter'), cost);
});
