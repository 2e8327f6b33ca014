// The sources that build-real-documents.sh hands to real programs (Chromium, LibreOffice, pandoc): for each document of
// bench/answers/documents, an HTML page for Chromium's print (print CSS: Letter pages, running header and footer,
// justified paragraphs, CSS columns), an HTML page for LibreOffice Writer's HTML import (its own dialect: a header
// and footer as <div title="header">, a page-number field, <multicol>), a saved web page (navigation, cookie banner,
// scripts and styles around the main content), the markdown twin (for pandoc) and each table as CSV.
// The words are the markdown twin's: printed documents keep their soft hyphens where a program may break a word.
// Run: node_modules/.bin/node bench/answers/realSources.ts OUT_DIR (build-real-documents.sh does).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadAnswerDataset, SOFT_HYPHEN, type DocumentLayout } from '../../service/eval/answerDataset.ts';

type Block =
  | { title: string }
  | { heading: string }
  | { paragraph: string }
  | { lead: string }
  | { list: string[]; ordered: boolean }
  | { table: string[][] }
  | { columns: [string[], string[]] };

interface Source {
  name: string;
  title: string;
  header: string;
  /** {page} and {pages} are replaced. */
  footer: string;
  pages: Block[][];
}

const plain = (text: string) => text.split(SOFT_HYPHEN).join('');

const escapeHtml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

/** Soft hyphens as &shy; so that the source stays readable. */
const html = (text: string) => escapeHtml(text).split(SOFT_HYPHEN).join('&shy;');

function fromLayout(name: string, layout: DocumentLayout): Source {
  const pages = layout.pages.map((page) =>
    page.map((item): Block => {
      if ('list' in item) return { list: item.list, ordered: true };
      if ('table' in item) return { table: item.table.rows };
      return item;
    }),
  );
  return { name, title: layout.title, header: layout.header, footer: layout.footer, pages };
}

const tableCells = (line: string) =>
  line
    .slice(1, -1)
    .split('|')
    .map((cell) => cell.trim());

/** The benchmark's markdown documents use only headings, paragraphs, lists and pipe tables; one page each. */
function fromMarkdown(name: string, markdown: string): Source {
  const blocks: Block[] = [];
  for (const part of markdown.trim().split(/\n{2,}/)) {
    const lines = part.split('\n');
    if (part.startsWith('# ')) blocks.push({ title: part.slice(2) });
    else if (part.startsWith('## ')) blocks.push({ heading: part.slice(3) });
    else if (part.startsWith('- ')) blocks.push({ list: lines.map((line) => line.slice(2)), ordered: false });
    else if (part.startsWith('|')) blocks.push({ table: lines.filter((_, index) => index !== 1).map(tableCells) });
    else blocks.push({ paragraph: part });
  }
  const title = blocks[0] !== undefined && 'title' in blocks[0] ? blocks[0].title : name;
  return { name, title, header: '', footer: '', pages: [blocks] };
}

function tableHtml(rows: string[][]): string {
  const [header, ...body] = rows;
  return [
    '<table>',
    `<thead><tr>${header.map((cell) => `<th>${html(cell)}</th>`).join('')}</tr></thead>`,
    '<tbody>',
    ...body.map((row) => `<tr>${row.map((cell) => `<td>${html(cell)}</td>`).join('')}</tr>`),
    '</tbody>',
    '</table>',
  ].join('\n');
}

/** A block as HTML; `multicol` writes a two-column block the way LibreOffice's HTML import reads it. */
function blockHtml(block: Block, multicol: boolean): string {
  if ('title' in block) return `<h1>${html(block.title)}</h1>`;
  if ('heading' in block) return `<h2>${html(block.heading)}</h2>`;
  if ('paragraph' in block) return `<p>${html(block.paragraph)}</p>`;
  if ('lead' in block) return `<p class="lead">${html(block.lead)}</p>`;
  if ('list' in block) {
    const tag = block.ordered ? 'ol' : 'ul';
    return `<${tag}>\n${block.list.map((entry) => `<li>${html(entry)}</li>`).join('\n')}\n</${tag}>`;
  }
  if ('table' in block) return tableHtml(block.table);
  const paragraphs = block.columns.flat().map((text) => `<p>${html(text)}</p>`);
  if (multicol) return `<multicol cols="2" gutter="24">\n${paragraphs.join('\n')}\n</multicol>`;
  return `<div class="columns">\n${paragraphs.join('\n')}\n</div>`;
}

const PRINT_CSS = `
@page { size: Letter; margin: 1in; }
body { font-family: "Liberation Serif", serif; font-size: 11pt; line-height: 1.3; }
h1 { font-size: 16pt; margin: 0 0 12pt; }
h2 { font-size: 13pt; margin: 14pt 0 8pt; }
p, li { text-align: justify; hyphens: manual; margin: 0 0 8pt; }
table { border-collapse: collapse; margin: 6pt 0 10pt; }
th, td { border: 0.5pt solid #444; padding: 3pt 8pt; text-align: left; }
.columns { column-count: 2; column-gap: 24pt; }
.columns p { break-inside: avoid-column; }
section.page + section.page { break-before: page; }`;

/** Chromium's print: margin boxes (Chromium 131 and later) for the running header and the page number. */
function printHtml(source: Source): string {
  const footer = source.footer.replace('{page}', '" counter(page) "').replace('{pages}', '" counter(pages) "');
  const margins = source.header
    ? `\n@page { @top-left { content: "${source.header}"; font: 9pt "Liberation Sans", sans-serif; }` +
      `\n  @bottom-center { content: "${footer}"; font: 9pt "Liberation Sans", sans-serif; } }`
    : '';
  const pages = source.pages.map(
    (blocks) => `<section class="page">\n${blocks.map((block) => blockHtml(block, false)).join('\n')}\n</section>`,
  );
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${html(source.title)}</title>
<style>${PRINT_CSS}${margins}
</style>
</head>
<body>
${pages.join('\n')}
</body>
</html>
`;
}

/**
 * LibreOffice Writer's HTML import: <div title="header"> and <div title="footer"> become the page style's header and
 * footer (what Writer's own HTML export writes), <sdfield type=PAGE> a page-number field, <multicol> a section in
 * two columns, a page-break-before style a page break.
 */
function writerHtml(source: Source): string {
  const field = (type: 'PAGE' | 'DOCSTAT') =>
    type === 'PAGE'
      ? '<sdfield type=PAGE subtype=RANDOM format=PAGE>1</sdfield>'
      : '<sdfield type=DOCSTAT subtype=PAGE format=PAGE>1</sdfield>';
  const footer = html(source.footer).replace('{page}', field('PAGE')).replace('{pages}', field('DOCSTAT'));
  const margins = source.header
    ? `<div title="header"><p style="font-size: 9pt">${html(source.header)}</p></div>\n` +
      `<div title="footer"><p align="center" style="font-size: 9pt">${footer}</p></div>\n`
    : '';
  const pages = source.pages.map((blocks, index) => {
    const body = blocks.map((block) => blockHtml(block, true));
    if (index > 0) body[0] = body[0].replace(/^<(h[12]|p)/, '<$1 style="page-break-before: always"');
    return body.join('\n');
  });
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${html(source.title)}</title>
<style>
@page { size: 8.5in 11in; margin: 1in; }
p, li { text-align: justify; font-size: 11pt; }
</style>
</head>
<body>
${margins}${pages.join('\n')}
</body>
</html>
`;
}

/** What a browser's "Save page as" keeps: the site's navigation, banner, scripts and footer around the article. */
function savedHtml(source: Source): string {
  const article = source.pages
    .flat()
    .map((block) => blockHtml(block, false))
    .join('\n')
    .split('&shy;')
    .join('');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(plain(source.title))} | Lowmoor Online</title>
<link rel="stylesheet" href="./${source.name}_files/site.css">
<style>
body { margin: 0; font-family: system-ui, sans-serif; color: #1d1d1f; }
.site-header, .site-footer { background: #123; color: #fff; padding: 12px 24px; }
.site-nav a { color: #cde; margin-right: 16px; }
main { max-width: 46rem; margin: 24px auto; padding: 0 16px; }
.cookie-banner { position: fixed; bottom: 0; left: 0; right: 0; background: #333; color: #fff; padding: 16px; }
.columns { column-count: 2; column-gap: 2rem; }
</style>
<script async src="https://analytics.example.net/tag.js"></script>
<script>
  window.dataLayer = window.dataLayer || [];
  function track() { window.dataLayer.push(arguments); }
  track('page_view', { section: 'guides', template: 'article' });
</script>
</head>
<body>
<a class="skip-link" href="#content">Skip to main content</a>
<header class="site-header">
  <div class="brand"><a href="/">Lowmoor Online</a> <span>Your town, your services</span></div>
  <form class="search" action="/search" role="search"><label>Search the site <input name="q" type="search"></label><button>Go</button></form>
  <nav class="site-nav" aria-label="Main">
    <a href="/">Home</a> <a href="/news">News</a> <a href="/whats-on">What's on</a> <a href="/guides">Guides</a>
    <a href="/contact">Contact us</a> <a href="/login">Sign in</a>
  </nav>
</header>
<nav class="breadcrumbs" aria-label="Breadcrumb"><a href="/">Home</a> › <a href="/guides">Guides</a> › <span>${escapeHtml(plain(source.title))}</span></nav>
<main id="content">
<article>
${article}
</article>
</main>
<aside class="related">
  <h2>Related pages</h2>
  <ul><li><a href="/guides/events">Events this month</a></li><li><a href="/guides/maps">Maps and downloads</a></li><li><a href="/newsletter">Sign up for our newsletter</a></li></ul>
</aside>
<footer class="site-footer">
  <p>© 2026 Lowmoor Online. All rights reserved.</p>
  <p><a href="/privacy">Privacy policy</a> · <a href="/accessibility">Accessibility statement</a> · <a href="/cookies">Cookie settings</a></p>
  <p>Follow us: <a href="https://social.example.net/lowmoor">Social</a> · <a href="/rss">RSS</a></p>
</footer>
<div class="cookie-banner" role="dialog" aria-label="Cookies">
  <p>We use cookies to understand how you use this site and to improve it. You can accept all cookies or choose which ones to allow.</p>
  <button type="button" onclick="acceptCookies()">Accept all</button> <button type="button">Manage preferences</button>
</div>
<script>
  function acceptCookies() { document.cookie = 'consent=all; max-age=31536000; path=/'; document.querySelector('.cookie-banner').remove(); }
  document.addEventListener('DOMContentLoaded', function () { track('consent_shown'); });
</script>
</body>
</html>
`;
}

/** Markdown in prose blocks; a layout's tables as pipe tables. */
function blockMarkdown(block: Block): string {
  if ('title' in block) return `# ${plain(block.title)}`;
  if ('heading' in block) return `## ${plain(block.heading)}`;
  if ('paragraph' in block) return plain(block.paragraph);
  if ('lead' in block) return plain(block.lead);
  if ('list' in block)
    return block.list.map((entry, index) => `${block.ordered ? `${index + 1}.` : '-'} ${plain(entry)}`).join('\n');
  if ('table' in block) {
    const row = (cells: string[]) => `| ${cells.map(plain).join(' | ')} |`;
    const [header, ...rows] = block.table;
    return [row(header), row(header.map(() => '---')), ...rows.map(row)].join('\n');
  }
  return block.columns.flat().map(plain).join('\n\n');
}

/**
 * The markdown twin for pandoc's LaTeX (pdfTeX): the same words, with the printed document's page breaks, running
 * header and footer (fancyhdr) and two-column section (multicol) as raw LaTeX, so that its pages are the layout's.
 */
function latexMarkdown(source: Source): string {
  const latex = (text: string) => `\`\`\`{=latex}\n${text}\n\`\`\``;
  const escapeTex = (text: string) => plain(text).replaceAll('·', '\\textperiodcentered{}');
  const footer = escapeTex(source.footer)
    .replace('{page}', '\\thepage{}')
    .replace('{pages}', String(source.pages.length));
  const preamble = source.header
    ? [
        '---',
        'header-includes:',
        '  - \\usepackage{fancyhdr}',
        '  - \\usepackage{multicol}',
        '  - \\pagestyle{fancy}',
        '  - \\fancyhf{}',
        `  - \\lhead{\\small ${escapeTex(source.header)}}`,
        `  - \\cfoot{\\small ${footer}}`,
        '---',
        '',
      ].join('\n')
    : '';
  const pages = source.pages.map((blocks) =>
    blocks
      .map((block) =>
        'columns' in block
          ? [latex('\\begin{multicols}{2}'), blockMarkdown(block), latex('\\end{multicols}')].join('\n\n')
          : blockMarkdown(block),
      )
      .join('\n\n'),
  );
  return `${preamble}${pages.join(`\n\n${latex('\\newpage')}\n\n`)}\n`;
}

/** RFC 4180: a field with a comma, quote or line break is quoted; CRLF line ends. */
function csv(rows: string[][]): string {
  const field = (cell: string) => (/[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);
  return rows.map((row) => row.map((cell) => field(plain(cell))).join(',')).join('\r\n') + '\r\n';
}

async function main(outDirectory: string): Promise<void> {
  const dataset = await loadAnswerDataset(join(import.meta.dirname, '.'));
  await mkdir(outDirectory, { recursive: true });
  for (const document of dataset.documents) {
    const source = document.layout
      ? fromLayout(document.name, document.layout)
      : fromMarkdown(document.name, document.markdown);
    const out = (suffix: string, text: string) => writeFile(join(outDirectory, `${document.name}${suffix}`), text);
    await out('.md', document.markdown);
    await out('.latex.md', latexMarkdown(source));
    await out('.print.html', printHtml(source));
    await out('.writer.html', writerHtml(source));
    await out('.saved.html', savedHtml(source));
    const tables = source.pages.flat().flatMap((block) => ('table' in block ? [block.table] : []));
    for (const [index, rows] of tables.entries())
      await out(tables.length === 1 ? '.csv' : `.table-${index + 1}.csv`, csv(rows));
  }
}

const [outDirectory] = process.argv.slice(2);
if (outDirectory === undefined) throw new Error('usage: realSources.ts OUT_DIR');
await main(outDirectory);
