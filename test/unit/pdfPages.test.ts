// A PDF's pages cut at their headings (service/extraction/pdfPages.ts), as markdown is cut at its # headings: each
// section its own passage, embedded with its heading path; the heading out of the quoted text.
import test from 'ava';
import { pageSections, splitPages } from '../../service/extraction/pdfPages.ts';

// Page 1 of the Chromium print of the library document (one printed page of four sections), as extraction writes it.
const ONE_PAGE = [
  'Lowmoor Library and Leisure Centre',
  '',
  'The library',
  '',
  'The library opens from 09:00 to 19:00 on weekdays. A library card is free.',
  '',
  'The swimming pool',
  '',
  'Adult swims cost 4.80 pounds.',
  '',
  '| Lane | Hours |',
  '| --- | --- |',
  '| Fast | 07:00 to 09:00 |',
].join('\n');

test('a page of several sections is one passage per section, each with the title and its heading', (t) => {
  const [sections] = pageSections([ONE_PAGE]);
  t.deepEqual(sections, [
    {
      heading_path: ['Lowmoor Library and Leisure Centre', 'The library'],
      text: 'The library opens from 09:00 to 19:00 on weekdays. A library card is free.',
    },
    {
      heading_path: ['Lowmoor Library and Leisure Centre', 'The swimming pool'],
      text: 'Adult swims cost 4.80 pounds.\n\n| Lane | Hours |\n| --- | --- |\n| Fast | 07:00 to 09:00 |',
    },
  ]);
});

test('a heading goes on to the next page until another replaces it; chunks keep their page', async (t) => {
  const pages = ['Guide\n\nBooking\n\nCall the office to book.', 'A later cancellation costs 2 pounds.'];
  const split = async (text: string) => ({ total: 1, segments: [{ text, heading_path: [] }] });
  const { segments, total } = await splitPages(pages, split);
  t.is(total, 2);
  t.deepEqual(
    segments.map((segment) => [segment.heading_path, segment.text, segment.page_start]),
    [
      [['Guide', 'Booking'], 'Call the office to book.', 1],
      [['Guide', 'Booking'], 'A later cancellation costs 2 pounds.', 2],
    ],
  );
});
