// The markdown-aware splitter: heading paths, heading-only sections, fenced code, dropped segments.
import { RecursiveCharacterTextSplitter } from '@langchain/textsplitters';
import test from 'ava';
import {
  MARKDOWN_SEPARATORS,
  RecursiveSplitter,
  splitBeforeSeparator,
  TEXT_SEPARATORS,
} from '../../service/rag/recursiveSplitter.ts';
import { atxHeading, markdownSections, splitDocument } from '../../service/rag/splitter.ts';

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

test('sections carry the path of headings above them; skipped levels do not leave gaps', (t) => {
  const sections = markdownSections('intro line\n# A\nbody a\n### A.c\nbody c\n## B\nbody b\n# D\nbody d');
  t.deepEqual(sections, [
    { heading_path: [], body: 'intro line' },
    { heading_path: ['A'], body: 'body a' },
    { heading_path: ['A', 'A.c'], body: 'body c' },
    { heading_path: ['A', 'B'], body: 'body b' },
    { heading_path: ['D'], body: 'body d' },
  ]);
});

test('a heading with nothing under it becomes its own section; a parent heading does not', (t) => {
  const sections = markdownSections(
    '# Holiday policy\n\n## Every employee gets 22 days\n## Carry over up to 5 days\n# Other\ntext',
  );
  t.deepEqual(sections, [
    { heading_path: ['Holiday policy'], body: 'Every employee gets 22 days' },
    { heading_path: ['Holiday policy'], body: 'Carry over up to 5 days' },
    { heading_path: ['Other'], body: 'text' },
  ]);
});

test('hashes inside fenced code are not headings', (t) => {
  const sections = markdownSections('# Setup\n```sh\n# install it\nnpm ci\n```\n');
  t.is(sections.length, 1);
  t.deepEqual(sections[0].heading_path, ['Setup']);
  t.regex(sections[0].body, /# install it/);
});

test('splitDocument keeps chunks within the token budget, drops contentless and duplicate pieces', async (t) => {
  const paragraph = Array.from({ length: 60 }, (_, index) => `word${index}`).join(' ');
  const markdown = `# T\n${paragraph}\n\n${paragraph}\n\n---\n\n# T\n${paragraph}`;
  const result = await splitDocument(markdown, true, {
    chunkTokens: 64,
    overlapTokens: 0,
    maxChars: 4096,
    countTokens: words,
  });
  t.true(result.segments.length >= 2, `${result.segments.length} segments`);
  for (const segment of result.segments) t.true(words(segment.text) <= 64);
  t.true(result.segments.every((segment) => /\w/.test(segment.text)));
  t.true(result.segments.length < result.total, `${result.segments.length} of ${result.total}`);
});

test('atxHeading reads ATX headings: 1–6 #, a blank, the text without its closing #s', (t) => {
  t.deepEqual(atxHeading('# Title'), { level: 1, text: 'Title' });
  t.deepEqual(atxHeading('## Title ##'), { level: 2, text: 'Title' });
  t.deepEqual(atxHeading('###   spaced   '), { level: 3, text: 'spaced' });
  t.deepEqual(atxHeading('######\tTabbed\t#\t'), { level: 6, text: 'Tabbed' });
  t.deepEqual(atxHeading('## a # b ##'), { level: 2, text: 'a # b' });
  t.is(atxHeading('#no-space'), null);
  t.is(atxHeading('####### seven'), null);
  t.is(atxHeading(' # indented'), null);
  t.is(atxHeading('#'), null);
  t.is(atxHeading('# '), null);
  t.is(atxHeading('plain text'), null);
  // Kept exactly as the former regex read them (CommonMark differs on the first two):
  t.deepEqual(atxHeading('# About C#'), { level: 1, text: 'About C' }); // closing #s need no blank before them
  t.deepEqual(atxHeading('#  '), { level: 1, text: '' }); // two blanks and nothing else: a heading with no text
  t.deepEqual(atxHeading('# #'), { level: 1, text: '#' }); // the text keeps at least one character
  t.is(atxHeading('# Title\rmore'), null); // a lone carriage return: not a heading
});

test('atxHeading agrees with the regex it replaced on every short line', (t) => {
  // The oracle: the former pattern, polynomial on long lines (issue 8), harmless on these ≤ 6-character ones.
  // eslint-disable-next-line regexp/no-super-linear-backtracking -- the replaced regex as oracle, on short lines only
  const FORMER = /^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$/;
  const alphabet = ['#', ' ', '\t', 'a', '\u00a0', '\r'];
  let lines = [''];
  let compared = 0;
  for (let length = 1; length <= 6; length += 1) {
    lines = lines.flatMap((line) => alphabet.map((character) => line + character));
    for (const line of lines) {
      const match = FORMER.exec(line);
      const expected = match ? { level: match[1].length, text: match[2].trim() } : null;
      const actual = atxHeading(line);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        t.fail(`${JSON.stringify(line)}: ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
      }
      compared += 1;
    }
  }
  t.is(compared, 6 + 6 ** 2 + 6 ** 3 + 6 ** 4 + 6 ** 5 + 6 ** 6);
});

test('lines inside ``` and ~~~ fences are not headings', (t) => {
  const sections = markdownSections('# Real\nbefore\n```\n# not a heading\n```\n~~~\n## nor this\n~~~\n## Sub\nafter');
  t.deepEqual(sections, [
    { heading_path: ['Real'], body: 'before\n```\n# not a heading\n```\n~~~\n## nor this\n~~~' },
    { heading_path: ['Real', 'Sub'], body: 'after' },
  ]);
});

// The model workers split with recursiveSplitter.ts instead of @langchain/textsplitters (memory, docs/operations.md):
// the output must stay the library's, piece for piece.
const libraryCases: Array<{ name: string; text: string; separators: 'text' | 'markdown' }> = [
  {
    name: 'paragraphs, lines, words',
    text: `${'alpha beta gamma. '.repeat(40)}\n\n${'delta\n'.repeat(30)}`,
    separators: 'text',
  },
  { name: 'overlapping separators', text: 'a\n\n\nb\n\n\n\nc  d   e\n\n\n'.repeat(8), separators: 'text' },
  { name: 'a word longer than a chunk', text: `short ${'x'.repeat(300)} words after it`, separators: 'text' },
  { name: 'leading and trailing separators', text: '\n\nstarts blank\n\nends blank\n\n'.repeat(8), separators: 'text' },
  {
    name: 'markdown rules, fences and headings',
    text: `intro\n## Two\n${'body words here '.repeat(20)}\n\n---\n\nafter\n\`\`\`\n\ncode\n### Three\n${'more text '.repeat(30)}\n\n***\n\nend`,
    separators: 'markdown',
  },
];

for (const { name, text, separators } of libraryCases) {
  test(`the recursive splitter cuts as LangChain's does: ${name}`, async (t) => {
    for (const [chunkSize, chunkOverlap] of [
      [12, 0],
      [12, 4],
      [40, 10],
      [7, 6],
    ]) {
      const lengthFunction = (piece: string) => piece.length / 4 + words(piece);
      const options = { chunkSize, chunkOverlap, lengthFunction };
      const library =
        separators === 'markdown'
          ? RecursiveCharacterTextSplitter.fromLanguage('markdown', options)
          : new RecursiveCharacterTextSplitter(options);
      const own = new RecursiveSplitter({
        ...options,
        separators: separators === 'markdown' ? MARKDOWN_SEPARATORS : TEXT_SEPARATORS,
      });
      const expected = await library.splitText(text);
      t.true(expected.length > 1, `${chunkSize}/${chunkOverlap}: the case splits`);
      t.deepEqual(own.splitText(text), expected, `chunk size ${chunkSize}, overlap ${chunkOverlap}`);
    }
  });
}

test('splitBeforeSeparator cuts before every occurrence, overlapping ones too, as split(/(?=sep)/) does', (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['a\n\n\nb', '\n\n', /(?=\n\n)/],
    ['\n\nx\n\n', '\n\n', /(?=\n\n)/],
    ['aaaa', 'aa', /(?=aa)/],
    ['no separator', '\n', /(?=\n)/],
  ];
  for (const [text, separator, lookahead] of cases) {
    const expected = text.split(lookahead).filter((piece) => piece !== '');
    t.deepEqual(splitBeforeSeparator(text, separator), expected, JSON.stringify(text));
  }
  t.deepEqual(splitBeforeSeparator('a\n\n\nb', '\n\n'), ['a', '\n', '\n\nb']);
  t.deepEqual(splitBeforeSeparator('ab', ''), ['a', 'b']);
});
