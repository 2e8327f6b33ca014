// PPTX → one section per slide, labelled "Slide N" (the citation's slide number), on boundedZip and safeXml. The
// order is p:sldIdLst of ppt/presentation.xml through its relationships (not file names), so the deck's length is
// known — and a deck over KBQA_DOC_MAX_SLIDES refused — before any slide is read. Per slide: the title placeholder
// is the heading ("## Slide 2: The harvest"), body placeholders' paragraphs are list items (a:pPr lvl as indent),
// other text boxes paragraphs, a:tbl tables rows with the first row's names, the notes slide's body "Notes: …".
import { DocumentReadError } from '../errors.ts';
import { openBoundedZip, type BoundedZip, type ZipLimits } from './boundedZip.ts';
import { joinLines, rowLine, squash, type DocumentLimits, type ExtractedDocument } from './documents.ts';
import { localName, parseXmlPart, readRelationships } from './safeXml.ts';

/** Placeholders that repeat on every slide (its number, date, footer): not the slide's text. */
const FURNITURE = new Set(['sldNum', 'dt', 'ftr', 'hdr']);

interface Shape {
  furniture: boolean;
  title: boolean;
  body: boolean;
  paragraphs: { level: number; text: string }[];
}
type SlideItem = Shape | { table: string[][] };

/** One slide part's shapes and tables, in the order they are written. */
async function readShapes(zip: BoundedZip, part: string): Promise<SlideItem[]> {
  const items: SlideItem[] = [];
  let shape: Shape | null = null;
  let paragraph: { level: number; text: string } | null = null;
  let table: { rows: string[][]; row: string[]; cell: string | null } | null = null;
  let inText = false;
  await parseXmlPart(zip, part, 'PPTX', {
    open(tag) {
      const name = localName(tag.name);
      if (name === 'sp') shape = { furniture: false, title: false, body: false, paragraphs: [] };
      else if (name === 'ph' && shape) {
        const type = tag.attributes.type;
        shape.furniture = FURNITURE.has(type ?? '');
        shape.title = type === 'title' || type === 'ctrTitle';
        shape.body = !type || type === 'body' || type === 'obj';
      } else if (name === 'tbl') table = { rows: [], row: [], cell: null };
      else if (name === 'tr' && table) table.row = [];
      else if (name === 'tc' && table) table.cell = '';
      else if (tag.name === 'a:p') paragraph = { level: 0, text: '' };
      else if (name === 'pPr' && paragraph) paragraph.level = Number(tag.attributes.lvl ?? 0) || 0;
      else if (tag.name === 'a:t') inText = true;
      else if (tag.name === 'a:br' && paragraph) paragraph.text += ' ';
    },
    text(text) {
      if (!inText) return;
      if (table?.cell != null) table.cell += text;
      else if (paragraph) paragraph.text += text;
    },
    close(qualified) {
      const name = localName(qualified);
      if (qualified === 'a:t') inText = false;
      else if (qualified === 'a:p') {
        if (table?.cell != null) table.cell += ' ';
        else if (paragraph && shape && paragraph.text.trim()) shape.paragraphs.push(paragraph);
        paragraph = null;
      } else if (name === 'tc' && table) {
        table.row.push(squash(table.cell ?? ''));
        table.cell = null;
      } else if (name === 'tr' && table) table.rows.push(table.row);
      else if (name === 'tbl' && table) {
        items.push({ table: table.rows });
        table = null;
      } else if (name === 'sp' && shape) {
        if (!shape.furniture) items.push(shape);
        shape = null;
      }
    },
  });
  return items;
}

function slideLines(items: SlideItem[]): { title: string; lines: string[] } {
  let title = '';
  const lines: string[] = [];
  for (const item of items) {
    if ('table' in item) {
      const [header = [], ...rows] = item.table;
      lines.push('', ...rows.map((row) => rowLine(header, row)), '');
    } else if (item.title) title ||= squash(item.paragraphs.map((paragraph) => paragraph.text).join(' '));
    else
      for (const paragraph of item.paragraphs) {
        const text = squash(paragraph.text);
        lines.push(item.body ? `${'  '.repeat(paragraph.level)}- ${text}` : text);
      }
  }
  return { title, lines };
}

async function notesOf(zip: BoundedZip, slide: string): Promise<string> {
  const relationships = await readRelationships(zip, slide, 'PPTX');
  const notes = [...relationships.values()].find((entry) => entry.type.endsWith('/notesSlide'))?.target;
  if (!notes || !zip.has(notes)) return '';
  const items = await readShapes(zip, notes);
  return squash(
    items
      .flatMap((item) => ('table' in item || !item.body ? [] : item.paragraphs.map((paragraph) => paragraph.text)))
      .join(' '),
  );
}

/** The slide parts in the deck's order (a missing target stays as an empty slot, so numbers stay the deck's). */
async function slideOrder(zip: BoundedZip): Promise<(string | undefined)[]> {
  const relationships = await readRelationships(zip, 'ppt/presentation.xml', 'PPTX');
  const order: (string | undefined)[] = [];
  await parseXmlPart(zip, 'ppt/presentation.xml', 'PPTX', {
    open(tag) {
      if (localName(tag.name) === 'sldId') order.push(relationships.get(tag.attributes['r:id'] ?? '')?.target);
    },
  });
  return order;
}

export async function readPptx(
  bytes: Buffer,
  limits: ZipLimits & Pick<DocumentLimits, 'maxSlides'>,
): Promise<ExtractedDocument> {
  const zip = await openBoundedZip(bytes, limits, 'PPTX');
  try {
    const order = await slideOrder(zip);
    if (order.length > limits.maxSlides) throw DocumentReadError.tooManySlides(order.length, limits.maxSlides);
    const sections = [];
    for (const [index, part] of order.entries()) {
      const label = `Slide ${index + 1}`;
      if (!part || !zip.has(part)) {
        sections.push({ label, text: '' });
        continue;
      }
      const { title, lines } = slideLines(await readShapes(zip, part));
      const notes = await notesOf(zip, part);
      const heading = `## ${label}${title ? `: ${title}` : ''}`;
      sections.push({ label, text: joinLines([heading, '', ...lines, ...(notes ? ['', `Notes: ${notes}`] : [])]) });
    }
    return { sections };
  } finally {
    zip.close();
  }
}
