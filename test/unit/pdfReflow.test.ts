// The reflow's pure functions (service/extraction/pdfLayout.ts, pdfReflow.ts) on text items placed by hand: no
// pdfjs, no stack. test/unit/pdfReading.test.ts checks the same rules through real PDFs.
import test from 'ava';
import { pageLines, type PlacedText } from '../../service/extraction/pdfLayout.ts';
import { joinLines, pagesText, startsListItem } from '../../service/extraction/pdfReflow.ts';

/** One item per printed line, 5.5 pt a character at 11 pt. */
const item = (text: string, x: number, y: number, size = 11): PlacedText => ({
  text,
  x,
  y,
  width: text.length * 5.5,
  size,
});

test('joinLines: a blank between lines, a broken word joined, a hyphen before an uppercase letter or a digit kept', (t) => {
  t.is(
    joinLines('the only petrol station closes at', 'eight in the evening.'),
    'the only petrol station closes at eight in the evening.',
  );
  t.is(joinLines('text extrac-', 'tion'), 'text extraction');
  t.is(joinLines('the state-', 'Of the art'), 'the state-Of the art');
  t.is(joinLines('in 2019-', '2023'), 'in 2019-2023');
  t.is(joinLines('a dash -', 'and more'), 'a dash - and more');
  t.is(joinLines('hy\u00ad', 'phen'), 'hyphen');
});

test('startsListItem: bullets, numbers and letters with a blank after them', (t) => {
  for (const text of ['1. Close the valve', '12) Drain', 'a) First', '• Bullet', '- Dash', '– En dash'])
    t.true(startsListItem(text), text);
  for (const text of ['1.5 litres of water', '2023 was dry', 'a.m. starts', '-5 degrees', 'Route 66'])
    t.false(startsListItem(text), text);
});

test('lines of a column: wrapped lines joined, a line the author broke kept, a larger line a heading on its own', (t) => {
  const lines = pageLines([
    item('Opening hours', 72, 700, 14),
    item('The museum opens at ten in the morning and closes', 72, 680),
    item('at six in the evening.', 72, 666),
    item('Short line', 72, 652),
    item('Another line that runs to the right edge of the page.', 72, 638),
  ]);
  t.deepEqual(pagesText([lines]), [
    'Opening hours\n\nThe museum opens at ten in the morning and closes at six in the evening.\nShort line\nAnother line that runs to the right edge of the page.',
  ]);
});

test('a sentence over a page break is completed on its first page; a heading on the next page is not taken', (t) => {
  const first = pageLines([item('The ferry leaves the harbour at seven and the first bus leaves at', 72, 700)]);
  const second = pageLines([item('eight. The café opens at nine.', 72, 700)]);
  t.deepEqual(pagesText([first, second]), [
    'The ferry leaves the harbour at seven and the first bus leaves at eight.',
    'The café opens at nine.',
  ]);
  const heading = pageLines([item('Timetable', 72, 700, 16), item('Buses run hourly.', 72, 680)]);
  t.deepEqual(pagesText([first, heading]), [
    'The ferry leaves the harbour at seven and the first bus leaves at',
    'Timetable\n\nBuses run hourly.',
  ]);
});
