// The markdown-aware splitter: heading paths, heading-only sections, fenced code, dropped segments.
import test from 'ava';
import { markdownSections, splitDocument } from '../service/rag/splitter.ts';

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
  const sections = markdownSections('# Holiday policy\n\n## Every employee gets 22 days\n## Carry over up to 5 days\n# Other\ntext');
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
  const result = await splitDocument(markdown, true, { chunkTokens: 64, overlapTokens: 0, countTokens: words });
  for (const segment of result.segments) t.true(words(segment.text) <= 64);
  t.true(result.segments.every((segment) => /\w/.test(segment.text)));
  t.true(result.segments.length < result.total, `${result.segments.length} of ${result.total}`);
});
