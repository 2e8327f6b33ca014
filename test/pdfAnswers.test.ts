// What a person reads when asking about a PDF: every sentence of the default answerer's answer is a whole unit of
// the source (a sentence, a list item, a table row with its header cells' names), never a printed line's piece
// such as "The only petrol station in Corran closes at [1].". Through the web API, as the web app asks.
import {
  GUTTER_PARAGRAPHS,
  LIST_ITEMS,
  LIST_LEAD,
  TABLE_INTRO,
  TABLE_ROWS,
  VILLAGE_GUIDE,
  gutterPdf,
  tableAndListPdf,
  villageGuidePdf,
} from './fixtures/readingPdfs.ts';
import { makeWebUser, TEST_PASSWORD } from './factories/accounts.ts';
import { testWithApp } from './helpers/app.ts';
import { settled, upload } from './helpers/pdfUploads.ts';
import { WebClient } from './helpers/webClient.ts';

const test = testWithApp<{ databaseUrl: string }>();

/** Sentences split where the fixtures' authors ended them (each fixture sentence ends in ". " and starts uppercase). */
function authoredSentences(paragraph: string): string[] {
  return paragraph.split(/(?<=[a-z]\.) (?=[A-Z])/u);
}

/** Every unit a whole answer sentence may be, as the source's author wrote it. */
const SOURCE_UNITS = new Set([
  ...VILLAGE_GUIDE.flat(),
  ...GUTTER_PARAGRAPHS.flatMap(authoredSentences),
  ...authoredSentences(TABLE_INTRO),
  LIST_LEAD,
  ...LIST_ITEMS,
  ...TABLE_ROWS.slice(1).map((row) => row.map((cell, index) => `${TABLE_ROWS[0][index]}: ${cell}`).join('; ')),
]);

/** "A [1]. B [2]." → ["A.", "B."]: each answer sentence without its marker. */
function answerSentences(answer: string): string[] {
  const sentences: string[] = [];
  let rest = answer;
  for (let marker = rest.search(/ \[\d{1,3}\]/u); marker >= 0; marker = rest.search(/ \[\d{1,3}\]/u)) {
    const close = rest.indexOf(']', marker);
    let end = close + 1;
    while (end < rest.length && rest[end] !== ' ') end += 1;
    sentences.push(rest.slice(0, marker) + rest.slice(close + 1, end));
    rest = rest.slice(end).trimStart();
  }
  if (rest !== '') sentences.push(rest);
  return sentences;
}

const QUESTIONS: Array<{ question: string; fact: string }> = [
  { question: 'When does the petrol station close?', fact: 'closes at eight in the evening' },
  { question: 'When does the ferry to the island leave?', fact: '07:15' },
  { question: 'When does the summer market open?', fact: '3 October' },
  { question: 'How long does the walk from the harbour to the lighthouse take?', fact: '50 min' },
  { question: 'How is the hot water cylinder drained before the first frost?', fact: 'Drain the hot water cylinder' },
  {
    question: 'How many moorings did the survey teams count in the northern harbour?',
    fact: 'forty moorings before the data extraction began',
  },
];

test('every answer sentence is a whole sentence, list item or table row of the PDF, and holds the fact', async (t) => {
  const { app } = t.context;
  const user = await makeWebUser(app.deps.store);
  const browser = new WebClient(app.baseUrl);
  await browser.signIn(user.email, TEST_PASSWORD);
  const kb = (await browser.call('POST', '/api/web/knowledge-bases', { body: { name: 'village' } })).body
    .knowledge_base;
  for (const [filename, build] of [
    ['village-guide.pdf', villageGuidePdf],
    ['survey.pdf', gutterPdf],
    ['coastal-path.pdf', tableAndListPdf],
  ] as const) {
    const uploaded = await upload(browser, kb.id, filename, (await build()).pdf);
    t.is((await settled(browser, uploaded.body.document.id)).status, 'ready', filename);
  }
  for (const { question, fact } of QUESTIONS) {
    const { status, body } = await browser.call('POST', '/api/web/query', {
      body: { query: question, knowledge_base_ids: [kb.id] },
    });
    t.is(status, 200, question);
    const answer: string = body.answer;
    t.true(answer.includes(fact), `${question} → ${answer}`);
    for (const sentence of answerSentences(answer)) {
      // The answer ends a unit without end punctuation (a list item, a table row) with a '.' after its marker, and
      // one ending in ':' (a list's lead line) the same way (withMarker drops the ':').
      const bare = sentence.endsWith('.') ? sentence.slice(0, -1) : null;
      const whole =
        SOURCE_UNITS.has(sentence) || (bare !== null && (SOURCE_UNITS.has(bare) || SOURCE_UNITS.has(`${bare}:`)));
      t.true(whole, `${question} → "${sentence}" is not a whole unit of the source`);
    }
  }
});
