// The citation check as the answer chain runs it (service/rag/sentenceChecks.ts behind CitationMarkers), pure: no
// server, no model. Where the mark goes, what is never checked, and that the streamed pieces add up to exactly the
// whole answer however the model's text is cut.
import test from 'ava';
import { CitationMarkers, mapCitations, toPassageDocument, type AnswerDelta } from '../../service/rag/answerChain.ts';
import { SentenceChecker, UNVERIFIED_MARK } from '../../service/rag/sentenceChecks.ts';
import { passageFacts } from '../../service/rag/citationSupport.ts';
import { LIGHTHOUSE, TIDES } from '../fixtures/corranPoint.ts';
import { mulberry32, randomSplit } from '../helpers/random.ts';

const passage = (n: number, text: string, title: string) =>
  toPassageDocument(text, {
    chunk_id: `chunk-${n}`,
    document_id: `document-${n}`,
    knowledge_base_id: 'kb',
    title,
    filename: `${title}.md`,
    heading_path: [],
    chunk_index: 0,
    page_start: null,
    page_end: null,
    similarity: 0.8,
  });
const PASSAGES = [passage(1, LIGHTHOUSE, 'corran-lighthouse'), passage(2, TIDES, 'corran-tides')];

const checked = (raw: string) => new CitationMarkers(PASSAGES, 'question', true).invoke(raw);

async function* pieces(parts: string[]): AsyncGenerator<string> {
  for (const part of parts) yield part;
}

async function streamedDeltas(parts: string[]): Promise<AnswerDelta[]> {
  const deltas: AnswerDelta[] = [];
  for await (const delta of new CitationMarkers(PASSAGES, 'question', true).transform(pieces(parts)))
    deltas.push(delta);
  return deltas;
}

test('supported, unsupported, uncited, a marker naming no passage: the answer keeps every sentence, the unverified marked', async (t) => {
  const answer = await checked(
    'The lighthouse was automated in 1987 [1]. The spring tide range reaches 5.2 metres [2]. ' +
      'The causeway is the only road to the lighthouse. Its lamp flashes white twice every fifteen seconds [7].',
  );
  t.is(
    answer.text,
    'The lighthouse was automated in 1987 [1]. The spring tide range reaches 5.2 metres [2][unverified]. ' +
      'The causeway is the only road to the lighthouse [unverified]. Its lamp flashes white twice every fifteen seconds [unverified].',
  );
  t.deepEqual(
    answer.citations.map((citation) => citation.document_id),
    ['document-1', 'document-2'],
  );
  t.deepEqual(answer.sentences, { supported: 1, unsupported: 1, uncited: 2 });
});

test('where the mark goes: after the markers, before the end punctuation, after a closing quote, at a line end', async (t) => {
  const cases: Array<[string, string]> = [
    ['Automated in 1990 [1].', 'Automated in 1990 [1][unverified].'],
    [
      'Automated in 1990. [1] Tides reach 4.2 metres [2]!',
      'Automated in 1990. [1][unverified] Tides reach 4.2 metres [2]!',
    ],
    ['Open 24 hours (approx.).', 'Open 24 hours (approx.) [unverified].'],
    ['The keeper said "no."', 'The keeper said "no." [unverified]'],
    [
      '- Automated in 1990 [1]\n- Tides reach 4.2 metres [2]',
      '- Automated in 1990 [1][unverified]\n- Tides reach 4.2 metres [2]',
    ],
    ['Automated in 1987 [1] and closed to cars.', 'Automated in 1987 [1] and closed to cars [unverified].'],
    [
      '[1] The lighthouse was automated in 1990.\n  [2] Tides reach 4.2 metres.',
      '[1] The lighthouse was automated in 1990 [unverified].\n [2] Tides reach 4.2 metres.',
    ],
  ];
  for (const [raw, expected] of cases) t.is((await checked(raw)).text, expected, raw);
});

test('the one segmentation: abbreviations, decimals, times and list numbers do not end or start a sentence', async (t) => {
  // One sentence each, supported as a whole: a cut at "approx." or "4.2" would leave a piece with nothing to check.
  const answer = await checked(
    'At Corran Point the range reaches approx. 4.2 metres [2].\n2. The lighthouse was automated in 1987 [1].',
  );
  t.is(
    answer.text,
    'At Corran Point the range reaches approx. 4.2 metres [1].\n2. The lighthouse was automated in 1987 [2].',
  );
  t.deepEqual(answer.sentences, { supported: 2, unsupported: 0, uncited: 0 });
});

test('not checked, so never marked: headings, lead-ins, the refusal the prompt asks for, text with no letter', async (t) => {
  const raw =
    '## Corran Point\nHere is what the passages say:\nThe lighthouse was automated in 1987 [1].\n---\n' +
    'The knowledge bases you can access hold nothing on this question.';
  const answer = await checked(raw);
  t.is(answer.text, raw);
  t.deepEqual(answer.sentences, { supported: 1, unsupported: 0, uncited: 0 });
  t.false(
    (await checked('The knowledge bases hold nothing.')).text === 'The knowledge bases hold nothing.',
    'only the exact refusal is exempt',
  );
});

test('streaming: text goes out as it arrives; only the end where a mark may go waits, and a citation goes with its marker', async (t) => {
  const deltas = await streamedDeltas([
    'The lighthouse was',
    ' automated in 1990',
    ' [1]',
    '.',
    ' The',
    ' causeway floods.',
  ]);
  t.deepEqual(
    deltas.map((delta) => delta.text),
    [
      'The lighthouse was',
      ' automated in 1990',
      ` [1]${UNVERIFIED_MARK}. The`,
      ' causeway floods',
      ` ${UNVERIFIED_MARK}.`,
    ],
  );
  t.deepEqual(
    deltas.map((delta) => delta.citations.map((citation) => citation.document_id)),
    [[], [], ['document-1'], [], []],
  );
  t.deepEqual(deltas.at(-1)?.sentences, { supported: 0, unsupported: 1, uncited: 1 });
});

const PIECES = [
  '[1] ',
  '[2]  The',
  'The lighthouse',
  ' was automated',
  ' in 1987',
  ' 1990',
  ' metres',
  ' 4.2',
  ' approx.',
  ' Dr.',
  ' e.g.',
  ' (max.)',
  ' "no."',
  ' [1]',
  ' [2]',
  '[1][2]',
  ' [7]',
  ' [x]',
  ' [1234]',
  '.',
  '!',
  '?',
  '…',
  ':',
  ' ',
  '  ',
  '\n',
  '\n\n',
  '- ',
  '2. ',
  '## ',
  'Tides',
  ' reach',
  ' the causeway',
  ' floods',
  ' two hours',
  ' 😀',
  ' é',
];

test('property: over random answers cut at random points, the streamed deltas add up to the whole answer and its citations', async (t) => {
  for (let seed = 1; seed <= 1000; seed += 1) {
    const random = mulberry32(seed);
    let raw = '';
    const length = Math.floor(random() * 30);
    for (let index = 0; index < length; index += 1) raw += PIECES[Math.floor(random() * PIECES.length)];
    const whole = await checked(raw);
    const parts = randomSplit(raw, random);
    const deltas = await streamedDeltas(parts);
    const context = `seed ${seed}: ${JSON.stringify(raw)}`;
    const text = deltas.map((delta) => delta.text).join('');
    if (text !== whole.text)
      return t.fail(`${context}: streamed ${JSON.stringify(text)} ≠ ${JSON.stringify(whole.text)}`);
    t.deepEqual(
      deltas.flatMap((delta) => delta.citations),
      whole.citations,
      context,
    );
    t.deepEqual(deltas.at(-1)?.sentences, whole.sentences, context);
    // Nothing dropped, moved or added but the marks: without them (and blanks, since a mark may bring one), the
    // answer is the mapped answer as it was.
    const visible = (text: string) =>
      [...text.replaceAll(UNVERIFIED_MARK, '')].filter((char) => char.trim() !== '').join('');
    if (visible(whole.text) !== visible(mapCitations(raw, PASSAGES, 'question').answer))
      return t.fail(`${context}: ${JSON.stringify(whole.text)}`);
    // Every sentence the check counted as unverified carries a mark.
    const marks = whole.text.split(UNVERIFIED_MARK).length - 1;
    t.is(marks, (whole.sentences?.unsupported ?? 0) + (whole.sentences?.uncited ?? 0), context);
  }
});

test('the checker alone: a [k] naming no passage counts as uncited', (t) => {
  const checker = new SentenceChecker<string>((k) => (k === 1 ? passageFacts(LIGHTHOUSE) : null));
  const first = checker.push('Automated in 1987 [1]. Automated in 1987 [3].', ['citation-1']);
  const last = checker.end();
  t.is(first.text + last.text, `Automated in 1987 [1]. Automated in 1987 [3]${UNVERIFIED_MARK}.`);
  t.deepEqual([...first.citations, ...last.citations], ['citation-1']);
  t.deepEqual(checker.counts, { supported: 1, unsupported: 0, uncited: 1 });
});
