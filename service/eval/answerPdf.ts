// A printed document's layout (answerDataset.ts) drawn as a PDF the way typesetters print: justified lines, words
// broken at their soft hyphens at a line's end, a running header and footer, two-column pages, numbered lists and
// tables of aligned cells. Deterministic (no dates, no ids), so a run can be reproduced from the committed source.
// pdf-lib is a devDependency: this module is loaded only by `kbqa eval answers`, which runs from a checkout.
import { PDFDocument, StandardFonts, type PDFFont, type PDFPage } from 'pdf-lib';
import { SOFT_HYPHEN, type DocumentLayout, type LayoutBlock } from './answerDataset.ts';

const PAGE_WIDTH = 612;
const PAGE_HEIGHT = 792;
const MARGIN = 72;
const TEXT_WIDTH = PAGE_WIDTH - 2 * MARGIN;
const FONT_SIZE = 11;
const LEADING = 14;
/** Baseline to baseline between paragraphs: over 1.5 × the leading, a paragraph break. */
const PARAGRAPH_STEP = 24;
const TABLE_ROW_STEP = 18;
/** 2.2 em at 11 pt, as many two-column layouts have. */
const GUTTER = 24;
const LIST_INDENT = 18;

interface Fonts {
  regular: PDFFont;
  bold: PDFFont;
}

const plain = (text: string) => text.split(SOFT_HYPHEN).join('');

/**
 * Lines no wider than `width`. A word that does not fit is broken at its last soft hyphen that leaves the line
 * (with "-") within the width; a word without one moves to the next line whole.
 */
export function wrapWithHyphens(paragraph: string, font: PDFFont, width: number): string[] {
  const fits = (text: string) => font.widthOfTextAtSize(plain(text), FONT_SIZE) <= width;
  const lines: string[] = [];
  let line = '';
  const words = paragraph.split(' ').filter((word) => word !== '');
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index];
    const candidate = line === '' ? word : `${line} ${word}`;
    if (line === '' || fits(candidate)) {
      line = candidate;
      continue;
    }
    let cut = word.lastIndexOf(SOFT_HYPHEN);
    while (cut > 0 && !fits(`${line} ${word.slice(0, cut)}-`)) cut = word.lastIndexOf(SOFT_HYPHEN, cut - 1);
    if (cut > 0) {
      lines.push(plain(`${line} ${word.slice(0, cut)}-`));
      line = word.slice(cut + 1);
    } else {
      lines.push(plain(line));
      line = word;
    }
  }
  if (line !== '') lines.push(plain(line));
  return lines;
}

/** A line drawn word by word, its blanks stretched so that it ends at `width`. */
export function drawJustified(page: PDFPage, font: PDFFont, line: string, x: number, y: number, width: number): void {
  const words = line.split(' ');
  const inked = words.reduce((sum, word) => sum + font.widthOfTextAtSize(word, FONT_SIZE), 0);
  const blank = words.length > 1 ? (width - inked) / (words.length - 1) : 0;
  let at = x;
  for (const word of words) {
    page.drawText(word, { x: at, y, size: FONT_SIZE, font });
    at += font.widthOfTextAtSize(word, FONT_SIZE) + blank;
  }
}

/** Paragraphs from baseline `y` down, justified but for each one's last line; returns the next paragraph's baseline. */
function drawParagraphs(
  page: PDFPage,
  font: PDFFont,
  paragraphs: string[],
  x: number,
  y: number,
  width: number,
): number {
  let baseline = y;
  for (const paragraph of paragraphs) {
    const lines = wrapWithHyphens(paragraph, font, width);
    lines.forEach((line, index) => {
      if (index < lines.length - 1) drawJustified(page, font, line, x, baseline, width);
      else page.drawText(line, { x, y: baseline, size: FONT_SIZE, font });
      baseline -= LEADING;
    });
    baseline += LEADING - PARAGRAPH_STEP;
  }
  return baseline;
}

/** One block from baseline `y`; returns the next block's baseline. */
function drawBlock(page: PDFPage, fonts: Fonts, item: LayoutBlock, y: number): number {
  if ('title' in item || 'heading' in item) {
    const [text, size] = 'title' in item ? [item.title, 16] : [item.heading, 13];
    page.drawText(text, { x: MARGIN, y, size, font: fonts.bold });
    return y - PARAGRAPH_STEP - (size - FONT_SIZE);
  }
  if ('paragraph' in item) return drawParagraphs(page, fonts.regular, [item.paragraph], MARGIN, y, TEXT_WIDTH);
  if ('lead' in item)
    return drawParagraphs(page, fonts.regular, [item.lead], MARGIN, y, TEXT_WIDTH) + PARAGRAPH_STEP - LEADING;
  if ('list' in item) {
    let baseline = y;
    item.list.forEach((entry, index) => {
      wrapWithHyphens(entry, fonts.regular, TEXT_WIDTH - LIST_INDENT).forEach((line, lineIndex) => {
        if (lineIndex === 0)
          page.drawText(`${index + 1}.`, { x: MARGIN, y: baseline, size: FONT_SIZE, font: fonts.regular });
        page.drawText(line, { x: MARGIN + LIST_INDENT, y: baseline, size: FONT_SIZE, font: fonts.regular });
        baseline -= LEADING;
      });
    });
    return baseline + LEADING - PARAGRAPH_STEP;
  }
  if ('table' in item) {
    const { columns, rows } = item.table;
    let baseline = y;
    for (const row of rows) {
      if (row.length !== columns.length)
        throw new Error(`a table row has ${row.length} cells for ${columns.length} columns`);
      row.forEach((cell, index) => {
        const room = (columns[index + 1] ?? TEXT_WIDTH) - columns[index] - 6;
        if (fonts.regular.widthOfTextAtSize(cell, FONT_SIZE) > room)
          throw new Error(`the table cell "${cell}" is wider than its column`);
        page.drawText(cell, { x: MARGIN + columns[index], y: baseline, size: FONT_SIZE, font: fonts.regular });
      });
      baseline -= TABLE_ROW_STEP;
    }
    return baseline + TABLE_ROW_STEP - PARAGRAPH_STEP;
  }
  const width = (TEXT_WIDTH - GUTTER) / 2;
  const left = drawParagraphs(page, fonts.regular, item.columns[0], MARGIN, y, width);
  const right = drawParagraphs(page, fonts.regular, item.columns[1], MARGIN + width + GUTTER, y, width);
  return Math.min(left, right);
}

/** The PDF of a layout: page n of the layout is page n of the PDF (a page that overflows is an error in the source). */
export async function renderLayoutPdf(layout: DocumentLayout): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setTitle(layout.title);
  const fonts = {
    regular: await doc.embedFont(StandardFonts.Helvetica),
    bold: await doc.embedFont(StandardFonts.HelveticaBold),
  };
  layout.pages.forEach((blocks, index) => {
    const page = doc.addPage([PAGE_WIDTH, PAGE_HEIGHT]);
    page.drawText(layout.header, { x: MARGIN, y: PAGE_HEIGHT - 40, size: 9, font: fonts.regular });
    const footer = layout.footer.replace('{page}', String(index + 1)).replace('{pages}', String(layout.pages.length));
    page.drawText(footer, {
      x: (PAGE_WIDTH - fonts.regular.widthOfTextAtSize(footer, 9)) / 2,
      y: 36,
      size: 9,
      font: fonts.regular,
    });
    let y = PAGE_HEIGHT - MARGIN;
    for (const item of blocks) y = drawBlock(page, fonts, item, y);
    if (y + PARAGRAPH_STEP - LEADING < MARGIN) throw new Error(`${layout.title}: page ${index + 1} does not fit`);
  });
  return doc.save({ useObjectStreams: false });
}
