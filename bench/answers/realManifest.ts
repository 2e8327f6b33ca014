// Writes DIR/MANIFEST.json and DIR/MANIFEST.md for the files build-real-documents.sh produced in DIR: per file its
// kind, the program that wrote it and that program's version (read from the file itself where it says), pages,
// slides or sheets, bytes and sha256; for a PDF whether it is tagged and how many characters pdftotext finds in it,
// and for a printed document (bench/answers/documents/*.layout.json) which PDF page each layout page begins on
// (the layout's gold pages are the layout's; a producer that breaks pages elsewhere moves them).
// Needs poppler-utils and unzip, and the programs whose versions it records. Run:
// node_modules/.bin/node bench/answers/realManifest.ts DIR
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, relative } from 'node:path';
import { loadAnswerDataset, SOFT_HYPHEN, type DocumentLayout } from '../../service/eval/answerDataset.ts';

interface Entry {
  file: string;
  kind: string;
  producer: string;
  bytes: number;
  sha256: string;
  pages?: number;
  tagged?: boolean;
  textChars?: number;
  slides?: number;
  sheets?: string[];
  rows?: number;
  /** Layout page n (index n - 1) begins on this PDF page. */
  layoutPageStarts?: number[];
}

/** The command's output; pdftoppm -v writes to stderr, so stderr follows stdout. */
const run = (command: string, args: string[]) => {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return `${result.stdout ?? ''}${result.stderr ?? ''}`;
};
const stdout = (command: string, args: string[]) =>
  spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).stdout ?? '';
const firstLine = (text: string) => text.split('\n').find((line) => line.trim() !== '') ?? '';

const TOOLS: [string, string[]][] = [
  ['chromium', ['--version']],
  ['soffice', ['--version']],
  ['pandoc', ['--version']],
  ['pdftex', ['--version']],
  ['gs', ['--version']],
  ['/usr/bin/convert', ['--version']],
  ['pdftoppm', ['-v']],
];

function pdfInfo(path: string): Record<string, string> {
  const info: Record<string, string> = {};
  for (const line of run('pdfinfo', [path]).split('\n')) {
    const at = line.indexOf(':');
    if (at > 0) info[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return info;
}

const squeeze = (text: string) => text.split(SOFT_HYPHEN).join('').replace(/\s+/g, ' ');

/** The first words of each layout page's first block, looked up page by page in the PDF's text. */
function layoutPageStarts(path: string, layout: DocumentLayout, pages: number): number[] {
  const texts = Array.from({ length: pages }, (_, index) =>
    squeeze(stdout('pdftotext', ['-f', String(index + 1), '-l', String(index + 1), path, '-'])),
  );
  return layout.pages.map((blocks) => {
    const first = blocks[0];
    const text = 'title' in first ? first.title : 'heading' in first ? first.heading : JSON.stringify(first);
    const probe = squeeze(text).split(' ').slice(0, 4).join(' ');
    return texts.findIndex((page) => page.includes(probe)) + 1;
  });
}

function zipEntry(path: string, entry: string): string {
  return stdout('unzip', ['-p', path, entry]);
}

const tag = (xml: string, name: string) => {
  const start = xml.indexOf(`<${name}>`);
  if (start < 0) return '';
  const end = xml.indexOf(`</${name}>`, start);
  return xml.slice(start + name.length + 2, end);
};

function officeProducer(path: string): string {
  if (path.endsWith('.odt')) {
    const meta = zipEntry(path, 'meta.xml');
    return tag(meta, 'meta:generator') || 'unknown';
  }
  const app = zipEntry(path, 'docProps/app.xml');
  const application = tag(app, 'Application');
  const version = tag(app, 'AppVersion');
  return application ? `${application}${version ? ` (AppVersion ${version})` : ''}` : 'unknown';
}

async function describe(path: string, root: string, layouts: Map<string, DocumentLayout>): Promise<Entry> {
  const bytes = await readFile(path);
  const entry: Entry = {
    file: relative(root, path),
    kind: basename(dirname(path)),
    producer: '',
    bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
  const extension = extname(path);
  /** Text files are sources: the benchmark's written by realSources.ts, the test fixtures' by hand. */
  const source = path.includes(`${join('test', 'fixtures')}`) ? 'hand-written source' : 'realSources.ts';
  const document = basename(path)
    .split('.')[0]
    .replace(/-p\d+$/, '');
  if (extension === '.pdf') {
    const info = pdfInfo(path);
    entry.producer = [info.Creator, info.Producer].filter(Boolean).join(' / ');
    entry.pages = Number(info.Pages);
    entry.tagged = info.Tagged === 'yes';
    entry.textChars = stdout('pdftotext', [path, '-']).replace(/\s/g, '').length;
    // A scan has no text to look pages up in: its pages are those of the Chromium PDF it was made from.
    const printed = entry.textChars === 0 ? join(dirname(path), '..', 'chromium-pdf', basename(path)) : path;
    const layout = layouts.get(document);
    if (layout) entry.layoutPageStarts = layoutPageStarts(printed, layout, entry.pages);
  } else if (extension === '.docx' || extension === '.odt' || extension === '.xlsx' || extension === '.pptx') {
    entry.producer = officeProducer(path);
    const names = stdout('unzip', ['-Z1', path]).split('\n');
    if (extension === '.pptx') {
      entry.slides = names.filter((name) => /^ppt\/slides\/slide\d+\.xml$/.test(name)).length;
      entry.producer = `pandoc (its app.xml says ${entry.producer}); slide numbers added by build-real-documents.sh`;
    }
    if (extension === '.xlsx')
      entry.sheets = [...zipEntry(path, 'xl/workbook.xml').matchAll(/<sheet name="([^"]*)"/g)].map((m) => m[1]);
  } else if (extension === '.csv') {
    entry.producer = `${source} (RFC 4180, CRLF)`;
    entry.rows = bytes.toString('utf8').split('\r\n').filter(Boolean).length;
  } else if (extension === '.jpg' || extension === '.png' || extension === '.tiff') {
    entry.producer = `ImageMagick: ${firstLine(stdout('/usr/bin/identify', [path]))
      .slice(path.length + 1)
      .trim()}`;
  } else if (extension === '.html' || extension === '.md') {
    entry.producer = source;
  }
  return entry;
}

async function filesUnder(directory: string): Promise<string[]> {
  const found: string[] = [];
  for (const item of await readdir(directory, { withFileTypes: true })) {
    const path = join(directory, item.name);
    if (item.isDirectory()) found.push(...(await filesUnder(path)));
    else if (!/^(MANIFEST\.(json|md)|README\.md|rotation\.txt)$/.test(item.name)) found.push(path);
  }
  return found.sort();
}

function markdown(entries: Entry[], tools: Record<string, string>): string {
  const lines = [
    '# Real-producer documents: manifest',
    '',
    'Written by `bench/answers/realManifest.ts`; the files by `bench/answers/build-real-documents.sh`.',
    '',
    '## Programs',
    '',
    ...Object.entries(tools).map(([tool, version]) => `- \`${tool}\`: ${version}`),
    '',
    '## Files',
    '',
    '| file | producer | pages / slides / sheets | tagged | text chars | layout page starts | bytes | sha256 |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...entries.map(
      (entry) =>
        `| ${[
          entry.file,
          entry.producer.replaceAll('|', '/'),
          entry.pages ?? entry.slides ?? entry.sheets?.join(', ') ?? (entry.rows ? `${entry.rows} rows` : ''),
          entry.tagged === undefined ? '' : entry.tagged ? 'yes' : 'no',
          entry.textChars ?? '',
          entry.layoutPageStarts?.join(' ') ?? '',
          entry.bytes,
          entry.sha256.slice(0, 16),
        ].join(' | ')} |`,
    ),
    '',
  ];
  return lines.join('\n');
}

const [directory] = process.argv.slice(2);
if (directory === undefined) throw new Error('usage: realManifest.ts DIR');
const dataset = await loadAnswerDataset(import.meta.dirname);
const layouts = new Map(
  dataset.documents.flatMap((document) => (document.layout ? [[document.name, document.layout]] : [])),
);
const entries: Entry[] = [];
for (const path of await filesUnder(directory)) entries.push(await describe(path, directory, layouts));
const tools = Object.fromEntries(TOOLS.map(([tool, args]) => [basename(tool), firstLine(run(tool, args))]));
await writeFile(join(directory, 'MANIFEST.json'), `${JSON.stringify({ tools, files: entries }, null, 2)}\n`);
await writeFile(join(directory, 'MANIFEST.md'), markdown(entries, tools));
