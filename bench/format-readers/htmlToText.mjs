// HTML (mammoth's output, readability's article) → the structured text markdown gives: "#" headings, "- " and
// "1. " list items, paragraphs, and each table row as one line carrying its header cells' names
// ("- Permit: Resident; Price: 60 pounds; Valid for: 12 months"). Walks htmlparser2 12.0.0's DOM (domhandler).
import { parseDocument } from 'htmlparser2';

const SKIP = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'iframe',
  'object',
  'head',
  'nav',
  'footer',
  'aside',
  'form',
  'button',
]);
const BLOCK = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'header',
  'blockquote',
  'pre',
  'figure',
  'figcaption',
  'dd',
  'dt',
  'address',
]);

function inlineText(node) {
  if (node.type === 'text') return node.data;
  if (node.type !== 'tag' || SKIP.has(node.name)) return '';
  if (node.name === 'br') return ' ';
  return (node.children ?? []).map(inlineText).join('');
}
const squash = (s) => s.replace(/\s+/g, ' ').trim();

function tableRows(table) {
  const rows = [];
  (function collect(n) {
    for (const c of n.children ?? []) {
      if (c.type !== 'tag') continue;
      if (c.name === 'tr')
        rows.push(c.children.filter((x) => x.type === 'tag' && (x.name === 'td' || x.name === 'th')));
      else if (c.name !== 'table') collect(c);
    }
  })(table);
  return rows;
}

export function htmlToText(html, { skipChrome = false } = {}) {
  const doc = parseDocument(html, { decodeEntities: true });
  const out = [];
  const listStack = [];
  function walk(node) {
    for (const n of node.children ?? []) {
      if (n.type === 'text') {
        const t = squash(n.data);
        if (t) out.push(t);
        continue;
      }
      if (n.type !== 'tag') continue;
      const name = n.name;
      if (SKIP.has(name) && (skipChrome || !['nav', 'footer', 'aside', 'header'].includes(name))) continue;
      if (/^h[1-6]$/.test(name)) {
        const t = squash(inlineText(n));
        if (t) out.push(`\n${'#'.repeat(Number(name[1]))} ${t}\n`);
      } else if (name === 'ul' || name === 'ol') {
        listStack.push({ ordered: name === 'ol', n: Number(n.attribs.start ?? 1) });
        walk(n);
        listStack.pop();
        out.push('');
      } else if (name === 'li') {
        const l = listStack.at(-1) ?? { ordered: false, n: 1 };
        const indent = '  '.repeat(Math.max(0, listStack.length - 1));
        const own = squash(
          (n.children ?? [])
            .filter((c) => !(c.type === 'tag' && (c.name === 'ul' || c.name === 'ol')))
            .map(inlineText)
            .join(' '),
        );
        out.push(`${indent}${l.ordered ? `${l.n++}.` : '-'} ${own}`);
        for (const c of n.children ?? [])
          if (c.type === 'tag' && (c.name === 'ul' || c.name === 'ol')) walk({ children: [c] });
      } else if (name === 'table') {
        const rows = tableRows(n).map((cells) => cells.map((c) => squash(inlineText(c))));
        if (!rows.length) continue;
        const firstIsHeader =
          tableRows(n)[0].every((c) => c.name === 'th') || n.children.some((c) => c.name === 'thead');
        const header = firstIsHeader ? rows[0] : rows[0].map((_, i) => `Column ${i + 1}`);
        out.push('');
        for (const row of firstIsHeader ? rows.slice(1) : rows)
          out.push(
            '- ' +
              row
                .map((v, i) => `${header[i] || `Column ${i + 1}`}: ${v}`)
                .filter((s) => !s.endsWith(': '))
                .join('; '),
          );
        out.push('');
      } else if (BLOCK.has(name)) {
        const hasBlocks = (n.children ?? []).some(
          (c) => c.type === 'tag' && (BLOCK.has(c.name) || /^h[1-6]$|^(ul|ol|table)$/.test(c.name)),
        );
        if (hasBlocks) walk(n);
        else {
          const t = squash(inlineText(n));
          if (t) out.push(`\n${t}\n`);
        }
      } else walk(n);
    }
  }
  walk(doc);
  return out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
