// Whole sentences per PDF producer: for each PDF of bench/answers/real (Chromium's print, LibreOffice's export of its
// ODT and of its DOCX, pdfTeX, Ghostscript's rewrite of the Chromium print), the share of its markdown twin's units
// (sentences, list items, table rows with their header cells' names, as text/sentences.ts cuts them; headings left
// out) that the extracted text holds as whole units. A unit cut by a printed line, merged with a running header or
// shuffled in a table row does not count. No stack: the extractor runs as ingestion runs it.
// Run: node_modules/.bin/node bench/pdfProducers.ts [--extractor PATH_TO/pdf.ts] [--out FILE.md]
// (--extractor measures another checkout's extraction, e.g. the code before a change.)
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { splitSentences } from '../service/text/sentences.ts';

const REAL = path.join(import.meta.dirname, 'answers', 'real');
const DOCUMENTS = [
  'community-transport-guide',
  'council-services',
  'library-and-leisure',
  'lowmoor-visitor-guide',
  'water-board-field-handbook',
];
const PRODUCERS: Array<{ name: string; file: (document: string) => string }> = [
  { name: 'Chromium print (tagged)', file: (document) => `chromium-pdf/${document}.pdf` },
  { name: 'LibreOffice export of the ODT (tagged)', file: (document) => `libreoffice/${document}.libreoffice.pdf` },
  { name: 'LibreOffice export of the DOCX (tagged)', file: (document) => `libreoffice/${document}.docx.pdf` },
  { name: 'pdfTeX (untagged)', file: (document) => `pdftex-pdf/${document}.pdf` },
  {
    name: 'Ghostscript rewrite of the Chromium print (untagged)',
    file: (document) => `ghostscript-pdf/${document}.pdf`,
  },
];

/** Blanks collapsed, soft hyphens out, typographic quotes straight: what a reader would call the same words. */
function normal(text: string): string {
  return text
    .split('\u00ad')
    .join('')
    .replace(/[\u2018\u2019]/gu, "'")
    .replace(/[\u201c\u201d]/gu, '"')
    .split(/\s+/u)
    .filter(Boolean)
    .join(' ');
}

function units(text: string): string[] {
  return splitSentences(text)
    .filter((unit) => !unit.heading)
    .map((unit) => normal(unit.text));
}

const { values } = parseArgs({ options: { extractor: { type: 'string' }, out: { type: 'string' } } });
const modulePath = path.resolve(
  values.extractor ?? path.join(import.meta.dirname, '..', 'service', 'extraction', 'pdf.ts'),
);
const { createPdfExtractor } = (await import(
  pathToFileURL(modulePath).href
)) as typeof import('../service/extraction/pdf.ts');
const extractor = createPdfExtractor({
  maxBytes: 50 * 1024 ** 2,
  maxPages: 100,
  timeoutMs: 300_000,
  maxMemoryMb: 1_024,
});

const lines = [
  `# Whole sentences per PDF producer (${new Date().toISOString()})`,
  '',
  `Extractor: \`${path.relative(path.join(import.meta.dirname, '..'), modulePath)}\`. Each cell: the markdown twin's units`,
  '(sentences, list items, table rows with header names; not headings) found whole in the extracted text.',
  '',
  `| producer | ${DOCUMENTS.join(' | ')} | all |`,
  `| --- | ${DOCUMENTS.map(() => '---').join(' | ')} | --- |`,
];
const missedExamples: string[] = [];
try {
  for (const producer of PRODUCERS) {
    let found = 0;
    let total = 0;
    const cells: string[] = [];
    for (const document of DOCUMENTS) {
      const twin = units(await readFile(path.join(REAL, 'sources', `${document}.md`), 'utf8'));
      const pdf = new Uint8Array(await readFile(path.join(REAL, producer.file(document))));
      const { pages } = await extractor.extract(pdf);
      const extracted = new Set(pages.flatMap(units));
      const whole = twin.filter((unit) => extracted.has(unit));
      for (const unit of twin.filter((candidate) => !extracted.has(candidate)).slice(0, 2))
        missedExamples.push(`- ${producer.name}, ${document}: ${unit.slice(0, 140)}`);
      found += whole.length;
      total += twin.length;
      cells.push(`${whole.length}/${twin.length}`);
    }
    lines.push(
      `| ${producer.name} | ${cells.join(' | ')} | ${found}/${total} (${Math.round((100 * found) / total)} %) |`,
    );
  }
} finally {
  await extractor.close();
}
lines.push('', 'Units not found whole (two per document at most):', '', ...missedExamples, '');
const report = lines.join('\n');
console.log(report);
if (values.out) await writeFile(values.out, report);
