// The one sentence segmentation (service/text/sentences.ts): what ingestion embeds per sentence and what the
// extractive answerer quotes. Pure: no stack needed.
import test from 'ava';
import { splitSentences } from '../../service/text/sentences.ts';

const texts = (text: string) => splitSentences(text).map((sentence) => sentence.text);

test('abbreviations, decimals, "(max.)", times and initials do not end a sentence', (t) => {
  const cases: Array<[string, string[]]> = [
    [
      'Bring warm clothes, e.g. a fleece. Dr. Hale runs the clinic.',
      ['Bring warm clothes, e.g. a fleece.', 'Dr. Hale runs the clinic.'],
    ],
    ['The walk is approx. 5 km long. It takes 3.5 hours.', ['The walk is approx. 5 km long.', 'It takes 3.5 hours.']],
    [
      'The car park holds 40 cars (max.) Overflow parking is on the beach road.',
      ['The car park holds 40 cars (max.) Overflow parking is on the beach road.'],
    ],
    ['Each room sleeps four people (max.). Cots are free.', ['Each room sleeps four people (max.).', 'Cots are free.']],
    [
      'The ferry leaves at 07:15. The bus leaves at 7.45 a.m. every day.',
      ['The ferry leaves at 07:15.', 'The bus leaves at 7.45 a.m. every day.'],
    ],
    [
      'The Hobbit was written by J. R. R. Tolkien. It appeared in 1937.',
      ['The Hobbit was written by J. R. R. Tolkien.', 'It appeared in 1937.'],
    ],
    ['See Fig. 3 and No. 12 on the map. Prof. Ng agrees.', ['See Fig. 3 and No. 12 on the map.', 'Prof. Ng agrees.']],
    [
      'He asked: "Is it open?" The guard said no. "Yes!" she replied.',
      ['He asked: "Is it open?"', 'The guard said no.', '"Yes!" she replied.'],
    ],
    [
      'It was over... Then it rained. Version 2.1.3 fixed it.',
      ['It was over...', 'Then it rained.', 'Version 2.1.3 fixed it.'],
    ],
    [
      'A bracket (never closed. The next sentence still starts here.',
      ['A bracket (never closed.', 'The next sentence still starts here.'],
    ],
  ];
  for (const [text, expected] of cases) t.deepEqual(texts(text), expected, text);
});

test("a line is a unit: list items and table rows are whole units, table rows carry their header cells' names", (t) => {
  const text = [
    'Before winter:',
    '1. Close the main valve.',
    '2. Drain the pipes in the cellar',
    '- Check the e.g. boiler',
    '',
    '| Route | Distance | Time |',
    '| --- | ---: | --- |',
    '| Harbour to lighthouse | 4 km | 50 min |',
    '| Lighthouse to the old mill | 2.5 km | 30 min |',
  ].join('\n');
  t.deepEqual(texts(text), [
    'Before winter:',
    'Close the main valve.',
    'Drain the pipes in the cellar',
    'Check the e.g. boiler',
    'Route | Distance | Time',
    'Route: Harbour to lighthouse; Distance: 4 km; Time: 50 min',
    'Route: Lighthouse to the old mill; Distance: 2.5 km; Time: 30 min',
  ]);
  const kinds = splitSentences(text).map((sentence) => sentence.heading);
  t.deepEqual(kinds, [false, false, false, false, true, false, false], 'the header row is not an answer of its own');
});

test("a short line alone at the text's end is a heading too (a page ending on one); a text of that line alone is not", (t) => {
  t.deepEqual(
    splitSentences('The harbour is busiest in summer.\n\nThe Kelp Festival\n').map(({ text, heading }) => [
      text,
      heading,
    ]),
    [
      ['The harbour is busiest in summer.', false],
      ['The Kelp Festival', true],
    ],
  );
  t.deepEqual(
    splitSentences('Page 1 of 1').map(({ heading }) => heading),
    [false],
    'one line is the whole text',
  );
  t.deepEqual(
    splitSentences('Close the valve.\nThe Kelp Festival').map(({ heading }) => heading),
    [false, false],
    'a line right under a sentence is not alone',
  );
});

test('a short line standing alone without end punctuation is a heading; markdown headings stay headings', (t) => {
  const sentences = splitSentences(
    'Opening hours\n\nThe museum opens at ten. It closes at six.\n\n## Tickets ##\nAdults pay 14 euros.',
  );
  t.deepEqual(
    sentences.map(({ text, heading }) => [text, heading]),
    [
      ['Opening hours', true],
      ['The museum opens at ten.', false],
      ['It closes at six.', false],
      ['Tickets', true],
      ['Adults pay 14 euros.', false],
    ],
  );
});
