// PPTX → one section per slide ("## Slide 3: <title>") on boundedZip (yauzl) + safeXml (saxes): the slide order
// comes from ppt/presentation.xml's p:sldIdLst and its rels; in each ppt/slides/slideN.xml the title placeholder
// (p:ph type title/ctrTitle) is the heading, other a:p paragraphs are lines ("- " with a:pPr lvl as indent when the
// shape is a body placeholder), a:tbl tables are rows with the first row's names. Speaker notes (the slide's
// notesSlide rel) are added as "Notes:". Bound: maxSlides (refused before any slide is read).
import { openBoundedZip } from './boundedZip.mjs';
import { parseXml, localName } from './safeXml.mjs';
import { readRels as rels } from './ooxmlRels.mjs';

export class SlideLimitError extends Error {}

/** Reads one slide part's shapes: [{ title: bool, body: bool, paragraphs: [{ lvl, text }] } | { table: rows }]. */
async function readShapes(zip, part) {
  const shapes = [];
  let shape = null;
  let para = null;
  let table = null;
  let inText = false;
  await parseXml(zip.stream(part), {
    open(n) {
      const l = localName(n.name);
      if (l === 'sp') shape = { title: false, body: false, paragraphs: [] };
      else if (l === 'ph' && shape) {
        const t = n.attributes.type;
        shape.title = t === 'title' || t === 'ctrTitle';
        shape.body = !t || t === 'body' || t === 'obj';
      } else if (l === 'tbl') table = { rows: [], row: null, cell: null };
      else if (l === 'tr' && table) table.row = [];
      else if (l === 'tc' && table) table.cell = '';
      else if (l === 'p' && n.name === 'a:p') para = { lvl: 0, text: '' };
      else if (l === 'pPr' && para) para.lvl = Number(n.attributes.lvl ?? 0);
      else if (l === 't' && n.name === 'a:t') inText = true;
      else if (l === 'br' && para) para.text += ' ';
    },
    text(t) {
      if (!inText) return;
      if (table?.cell != null) table.cell += t;
      else if (para) para.text += t;
    },
    close(q) {
      const l = localName(q);
      if (q === 'a:t') inText = false;
      else if (q === 'a:p') {
        if (table?.cell != null) table.cell += ' ';
        else if (para && shape && para.text.trim()) shape.paragraphs.push(para);
        para = null;
      } else if (l === 'tc' && table) {
        table.row.push(table.cell.replace(/\s+/g, ' ').trim());
        table.cell = null;
      } else if (l === 'tr' && table) table.rows.push(table.row);
      else if (l === 'tbl' && table) {
        shapes.push({ table: table.rows });
        table = null;
      } else if (l === 'sp' && shape) {
        shapes.push(shape);
        shape = null;
      }
    },
  });
  return shapes;
}

export async function pptxToText(buffer, { maxSlides = 1000, notes = true, limits } = {}) {
  const zip = await openBoundedZip(buffer, limits);
  const presRels = await rels(zip, 'ppt/presentation.xml');
  const order = [];
  await parseXml(zip.stream('ppt/presentation.xml'), {
    open(n) {
      if (localName(n.name) === 'sldId') order.push(presRels.get(n.attributes['r:id'])?.target);
    },
  });
  if (order.length > maxSlides)
    throw new SlideLimitError(`the deck has ${order.length} slides; the limit is ${maxSlides}`);
  const out = [];
  for (const [i, part] of order.entries()) {
    if (!part || !zip.has(part)) continue;
    const shapes = await readShapes(zip, part);
    const title =
      shapes
        .find((s) => s.title)
        ?.paragraphs.map((p) => p.text.trim())
        .join(' ') ?? '';
    out.push(`\n## Slide ${i + 1}${title ? `: ${title}` : ''}\n`);
    for (const s of shapes) {
      if (s.table) {
        const [h = [], ...rows] = s.table;
        for (const r of rows)
          out.push(
            '- ' +
              r
                .map((v, j) => (v ? `${h[j] || `Column ${j + 1}`}: ${v}` : ''))
                .filter(Boolean)
                .join('; '),
          );
        continue;
      }
      if (s.title) continue;
      for (const p of s.paragraphs) out.push(s.body ? `${'  '.repeat(p.lvl)}- ${p.text.trim()}` : p.text.trim());
    }
    if (notes) {
      const notesPart = [...(await rels(zip, part)).values()].find((r) => r.type?.endsWith('/notesSlide'))?.target;
      if (notesPart && zip.has(notesPart)) {
        const body = (await readShapes(zip, notesPart))
          .filter((s) => s.body)
          .flatMap((s) => s.paragraphs.map((p) => p.text.trim()));
        if (body.length) out.push(`\nNotes: ${body.join(' ')}`);
      }
    }
  }
  zip.close();
  return { text: out.join('\n').trim(), slides: order.length };
}
