// ReDoS (issue 8 §1), the pure half: pathological documents and passages through every pure function on the ingest
// and answer paths that holds a regex (test/redos.test.ts sends the documents through the real ingest). Nothing is
// timed: the inputs are sized so that a super-linear pattern would not finish before ava's timeout, while the linear
// code takes milliseconds.
import test from 'ava';
import { bestSnippet, mapCitations, toPassageDocument } from '../../service/rag/answerChain.ts';
import { composeExtractiveAnswer } from '../../service/rag/extractiveAnswerer.ts';
import { contentTerms } from '../../service/rag/terms.ts';
import { atxHeading, markdownSections } from '../../service/rag/splitter.ts';
import { splitSentences } from '../../service/text/sentences.ts';
import { BLANKS, DOCUMENTS, LONG, RUN_CHARACTERS } from '../fixtures/redosInputs.ts';

// ── The heading parser on the same lines ─────────────────────────────────────────────────────────────────────────

test('atxHeading: long heading lines parse as the former regex would have, without its cost', (t) => {
  t.deepEqual(atxHeading(`# x${' '.repeat(BLANKS)}y`), { level: 1, text: `x${' '.repeat(BLANKS)}y` });
  t.deepEqual(atxHeading(`## x${'\t'.repeat(BLANKS)}y${'\t'.repeat(BLANKS)}`), {
    level: 2,
    text: `x${'\t'.repeat(BLANKS)}y`,
  });
  t.deepEqual(atxHeading(`# x${' \t#'.repeat(BLANKS / 2)}y`), { level: 1, text: `x${' \t#'.repeat(BLANKS / 2)}y` });
  t.deepEqual(atxHeading(`# x${' '.repeat(BLANKS)}${'#'.repeat(BLANKS)}${' '.repeat(BLANKS)}`), {
    level: 1,
    text: 'x',
  });
  t.deepEqual(atxHeading(`#${' '.repeat(BLANKS)}`), { level: 1, text: '' });
  t.is(atxHeading('#'.repeat(100_000)), null);
  t.is(atxHeading(`${'#'.repeat(100_000)} x`), null);
  t.deepEqual(atxHeading(`# x ${'#'.repeat(100_000)}`), { level: 1, text: 'x' });
  for (const character of RUN_CHARACTERS) {
    t.is(atxHeading(character.repeat(LONG)), null);
    t.deepEqual(atxHeading(`# ${character.repeat(LONG)}x`), { level: 1, text: `${character.repeat(LONG)}x` });
    t.deepEqual(atxHeading(`###### x${character.repeat(LONG)}`), { level: 6, text: `x${character.repeat(LONG)}` });
  }
});

test('markdownSections: every pathological document keeps its body', (t) => {
  for (const [label, content] of DOCUMENTS) {
    const sections = markdownSections(content);
    t.true(sections.length >= 1, label);
    t.true(sections[sections.length - 1].body.endsWith('body'), label);
  }
});

// ── The extractive answerer ──────────────────────────────────────────────────────────────────────────────────────

/** These tests time the text handling, not the decision to answer: every best sentence is taken. */
const ANY_SUPPORT = { minSupport: -Infinity };

const PASSAGE_CHARS = 100_000;

/** Passages that made the former sentence, heading and marker patterns rescan one run from each of its characters. */
const PASSAGES: Array<[string, string]> = [
  ['a heading line of spaces', `# a${' '.repeat(PASSAGE_CHARS)}b`],
  ['a heading line of spaces then #', `# a${' '.repeat(PASSAGE_CHARS)}#`],
  ['a run of sentence ends', `a${'!'.repeat(PASSAGE_CHARS)}x`],
  ['a run of periods', `a${'.'.repeat(PASSAGE_CHARS)}b`],
  ['a run of commas', `a${','.repeat(PASSAGE_CHARS)}b`],
  ['a period, then closing brackets', `a b c.${')'.repeat(PASSAGE_CHARS)}x`],
  ['initials that never end a sentence', 'A. '.repeat(PASSAGE_CHARS / 3)],
  ['one long word', 'x'.repeat(PASSAGE_CHARS)],
  ['a long word before a period', `${'x'.repeat(PASSAGE_CHARS)}. Next sentence here.`],
  ...RUN_CHARACTERS.map((character): [string, string] => [
    `a run of ${character}`,
    `a ${character.repeat(PASSAGE_CHARS)} b.`,
  ]),
];

test('splitSentences and contentTerms: pathological passages split into the expected sentences', (t) => {
  t.deepEqual(splitSentences(`# a${' '.repeat(PASSAGE_CHARS)}b`), [{ text: 'a b', heading: true }]);
  t.deepEqual(splitSentences(`# a${' '.repeat(PASSAGE_CHARS)}##${' '.repeat(PASSAGE_CHARS)}`), [
    { text: 'a', heading: true },
  ]);
  t.deepEqual(splitSentences(`a${'!'.repeat(PASSAGE_CHARS)}x`), [
    { text: `a${'!'.repeat(PASSAGE_CHARS)}x`, heading: false },
  ]);
  // No split at initials: one run-on sentence, cut into 50-word windows only.
  t.is(splitSentences('A. '.repeat(PASSAGE_CHARS / 3)).length, Math.ceil(Math.floor(PASSAGE_CHARS / 3) / 50));
  for (const [label, text] of PASSAGES) {
    const sentences = splitSentences(text);
    t.true(sentences.length >= 1, label);
    for (const sentence of sentences) contentTerms(sentence.text);
  }
  t.deepEqual([...contentTerms(`${'x'.repeat(PASSAGE_CHARS)}ches`)], [`${'x'.repeat(PASSAGE_CHARS)}ch`]);
});

const onePassage = (text: string) => ({
  question: 'What does it say about x?',
  questionEmbedding: [1, 0],
  passages: [{ n: 1, title: 'T', text, similarity: 0.9 }],
});

test('composeExtractiveAnswer: one marked sentence from each pathological passage', async (t) => {
  for (const [label, text] of PASSAGES) {
    // A heading is never an answer on its own (issue 32): the heading passages get a sentence under them.
    const passage = label.startsWith('a heading line') ? `${text}\nx is said here.` : text;
    const answer = await composeExtractiveAnswer(onePassage(passage), ANY_SUPPORT);
    t.true(answer.includes('[1]'), `${label}: ${answer.slice(0, 80)}`);
  }
  const periods = await composeExtractiveAnswer(onePassage(`a b${'.'.repeat(PASSAGE_CHARS)}`), ANY_SUPPORT);
  t.is(periods, `a b [1]${'.'.repeat(PASSAGE_CHARS)}`);
  const commas = await composeExtractiveAnswer(onePassage(`a b${','.repeat(PASSAGE_CHARS)}`), ANY_SUPPORT);
  t.is(commas, 'a b [1].');
});

// ── Citations: marker mapping and snippets ───────────────────────────────────────────────────────────────────────

const passageDocument = (text: string) =>
  toPassageDocument(text, {
    chunk_id: 'chunk',
    document_id: 'document',
    knowledge_base_id: 'kb',
    title: 'T',
    filename: 't.md',
    heading_path: [],
    chunk_index: 0,
    page_start: null,
    page_end: null,
    similarity: 0.9,
  });

test('mapCitations: long blank runs, unclosed and endless markers', (t) => {
  const passages = [passageDocument('x')];
  const blanks = ' \t'.repeat(PASSAGE_CHARS / 2);
  t.is(mapCitations(`a${blanks}b [1]`, passages, 'q').answer, 'a b [1]');
  t.is(mapCitations(`a${blanks}. [1]`, passages, 'q').answer, 'a. [1]');
  t.is(
    mapCitations(`a [1${', 1'.repeat(PASSAGE_CHARS / 3)}`, passages, 'q').answer,
    `a [1${', 1'.repeat(PASSAGE_CHARS / 3)}`,
  );
  t.is(mapCitations(`a [1${', 1'.repeat(PASSAGE_CHARS / 3)}]`, passages, 'q').answer, 'a [1]');
  for (const character of [...RUN_CHARACTERS, '[', '1', ',']) {
    const answer = `${character.repeat(PASSAGE_CHARS)} [1]`;
    t.is(mapCitations(answer, passages, 'q').citations.length, 1, character);
  }
});

test('bestSnippet: pathological passages give a snippet of at most 500 characters', (t) => {
  const texts = [
    ...PASSAGES.map(([, text]) => text),
    'a. '.repeat(PASSAGE_CHARS / 3),
    ' '.repeat(PASSAGE_CHARS) + 'x',
    `${'!'.repeat(PASSAGE_CHARS)} question words here.`,
  ];
  for (const text of texts) {
    const snippet = bestSnippet(text, 'what about the question words?');
    t.true(snippet.length > 0 && snippet.length <= 500, `${snippet.length}`);
  }
  const snippet = bestSnippet(
    `${'Filler sentence. '.repeat(PASSAGE_CHARS / 17)}The question words here.`,
    'question words',
  );
  t.true(snippet.endsWith('The question words here.'), snippet);
});
