// Issue 32: where a file's citation points (rag/citationMapper.ts citationLocation) and how the document page turns
// a table's row lines back into a table (web/src/lib/rowTables.ts).
import test from 'ava';
import { citationLocation } from '../../service/rag/citationMapper.ts';
import { passageBlocks } from '../../web/src/lib/rowTables.ts';

test('a deck cites its slide, other files their section heading, a PDF nothing beside its pages', (t) => {
  t.is(citationLocation({ filename: 'deck.pptx', heading_path: ['Slide 2: The harvest'], page_start: 2 }), 'slide 2');
  t.is(
    citationLocation({ filename: 'rows.xlsx', heading_path: ['Sheet rows, rows 2–6'], page_start: null }),
    'Sheet rows, rows 2–6',
  );
  t.is(
    citationLocation({ filename: 'office.docx', heading_path: ['Orchard handbook', 'Tools'], page_start: null }),
    'Orchard handbook › Tools',
  );
  t.is(citationLocation({ filename: 'a.pdf', heading_path: [], page_start: 3 }), null);
  t.is(citationLocation({ filename: 'a.txt', heading_path: [], page_start: null }), null);
});

test('row lines of one table become a table with the header names; other lines stay text', (t) => {
  const blocks = passageBlocks(
    [
      '## Sheet rows, rows 2–3',
      '',
      '- Row 2: Variety: Bramley; Tonnes picked: 240',
      "- Row 3: Variety: Cox's Orange Pippin; Picking starts: September; Tonnes picked: 187",
      'A closing line.',
      '- Notes: only one cell, a list item',
    ].join('\n'),
  );
  t.deepEqual(blocks, [
    { kind: 'text', text: '## Sheet rows, rows 2–3\n' },
    {
      kind: 'table',
      header: ['Row', 'Variety', 'Tonnes picked', 'Picking starts'],
      rows: [
        ['2', 'Bramley', '240', ''],
        ['3', "Cox's Orange Pippin", '187', 'September'],
      ],
    },
    { kind: 'text', text: 'A closing line.\n- Notes: only one cell, a list item' },
  ]);
  // A single row line is no table.
  t.deepEqual(passageBlocks('- Variety: Bramley; Tonnes picked: 240'), [
    { kind: 'text', text: '- Variety: Bramley; Tonnes picked: 240' },
  ]);
});
