// ODT → structured text on boundedZip (yauzl) + safeXml (saxes), streaming content.xml: text:h with its
// outline level → "#"s, text:list items → "- " or "1. " (numbered when the list's style, looked up in the
// automatic styles of content.xml and in styles.xml, is a text:list-level-style-number), tables → a row per
// line with the header row's names (table:table-header-rows, else the first row). Notes, annotations and
// change-tracking deletions are skipped.
import { openBoundedZip } from './boundedZip.mjs';
import { parseXml } from './safeXml.mjs';

const SKIP = new Set(['office:annotation', 'text:note', 'text:tracked-changes', 'office:forms', 'text:sequence-decls']);

async function numberedListStyles(zip, part, into) {
  if (!zip.has(part)) return;
  let current = null;
  await parseXml(zip.stream(part), {
    open(n) {
      if (n.name === 'text:list-style') current = n.attributes['style:name'];
      else if (current && n.name === 'text:list-level-style-number' && n.attributes['text:level'] === '1')
        into.add(current);
    },
    close(q) {
      if (q === 'text:list-style') current = null;
    },
  });
}

export async function odtToText(buffer, limits) {
  const zip = await openBoundedZip(buffer, limits);
  const numbered = new Set();
  await numberedListStyles(zip, 'styles.xml', numbered);
  await numberedListStyles(zip, 'content.xml', numbered);
  const out = [];
  let skip = 0;
  let block = null; // { kind: 'h'|'p', level, text }
  const lists = []; // { ordered, n }
  let table = null; // { rows: [], header: null, inHeader, row, cell }
  let paraInCell = false;
  await parseXml(zip.stream('content.xml'), {
    open(n) {
      if (skip || SKIP.has(n.name)) return void skip++;
      switch (n.name) {
        case 'text:h':
          block = { kind: 'h', level: Number(n.attributes['text:outline-level'] ?? 1), text: '' };
          break;
        case 'text:p':
          if (table?.cell !== null && table?.cell !== undefined) paraInCell = true;
          else block = { kind: 'p', text: '' };
          break;
        case 'text:list': {
          const style = n.attributes['text:style-name'];
          const parent = lists.at(-1);
          lists.push({ ordered: style ? numbered.has(style) : (parent?.ordered ?? false), n: 1 });
          break;
        }
        case 'text:s':
          append(' '.repeat(Number(n.attributes['text:c'] ?? 1)));
          break;
        case 'text:tab':
        case 'text:line-break':
          append(' ');
          break;
        case 'table:table':
          table = { rows: [], header: null, inHeader: false, row: null, cell: null };
          break;
        case 'table:table-header-rows':
          table.inHeader = true;
          break;
        case 'table:table-row':
          table.row = [];
          break;
        case 'table:table-cell':
          table.cell = '';
          break;
      }
    },
    text(t) {
      if (!skip) append(t);
    },
    close(q) {
      if (skip) {
        skip--;
        return;
      }
      switch (q) {
        case 'text:h':
        case 'text:p': {
          if (paraInCell) {
            table.cell += ' ';
            paraInCell = false;
            break;
          }
          const t = block?.text.replace(/\s+/g, ' ').trim();
          if (t) {
            if (block.kind === 'h') out.push(`\n${'#'.repeat(Math.min(6, block.level))} ${t}\n`);
            else if (lists.length) {
              const l = lists.at(-1);
              out.push(`${'  '.repeat(lists.length - 1)}${l.ordered ? `${l.n++}.` : '-'} ${t}`);
            } else out.push(`\n${t}\n`);
          }
          block = null;
          break;
        }
        case 'text:list':
          lists.pop();
          if (!lists.length) out.push('');
          break;
        case 'table:table-cell':
          table.row.push(table.cell.replace(/\s+/g, ' ').trim());
          table.cell = null;
          break;
        case 'table:table-row':
          if (table.inHeader || (!table.header && !table.rows.length && table.row.some(Boolean)))
            table.header = table.row;
          else table.rows.push(table.row);
          break;
        case 'table:table-header-rows':
          table.inHeader = false;
          break;
        case 'table:table': {
          const h = table.header ?? [];
          out.push('');
          for (const r of table.rows)
            out.push(
              '- ' +
                r
                  .map((v, i) => (v ? `${h[i] || `Column ${i + 1}`}: ${v}` : ''))
                  .filter(Boolean)
                  .join('; '),
            );
          out.push('');
          table = null;
          break;
        }
      }
    },
  });
  function append(t) {
    if (table && table.cell !== null) table.cell += t;
    else if (block) block.text += t;
  }
  zip.close();
  return {
    text: out
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim(),
  };
}
