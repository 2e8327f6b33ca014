// A PDF page without a text layer, read by OCR (in the reader child: pdfWorker.ts). No canvas: pdfjs's Node build
// renders only through @napi-rs/canvas, which the reader does not load (see pdfWorker.ts). A scanner's page is one
// image drawn over the page, and pdfjs decodes an image XObject to pixels without any canvas (page.objs, once the
// operator list is built): the largest image on the page is handed to Tesseract as a grey PGM (ocr.ts). Text
// drawn as vector paths, or a page made of many small images, is not read.
import { OPS, type PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { checkPixels, greyPgm, recognize, type OcrLimits } from './ocr.ts';
import type { TextLine } from './pdfLayout.ts';

/** pdfjs's ImageKind: how the decoded pixels are laid out. */
const GRAYSCALE_1BPP = 1;
const RGB_24BPP = 2;
const RGBA_32BPP = 3;

interface DecodedImage {
  width: number;
  height: number;
  kind: number;
  data: Uint8Array | Uint8ClampedArray;
}

const IMAGE_OPS = new Set<number>([OPS.paintImageXObject, OPS.paintInlineImageXObject]);

/** The name of the largest image the page paints (by its declared size), or null for a page with none. */
async function largestImage(page: PDFPageProxy): Promise<{ id: string; pixels: number } | null> {
  const operators = await page.getOperatorList();
  let best: { id: string; pixels: number } | null = null;
  operators.fnArray.forEach((fn, index) => {
    if (!IMAGE_OPS.has(fn)) return;
    const [id, width, height] = operators.argsArray[index] as [unknown, number, number];
    if (typeof id !== 'string') return;
    const pixels = width * height;
    if (!best || pixels > best.pixels) best = { id, pixels };
  });
  return best;
}

function decoded(page: PDFPageProxy, id: string): Promise<DecodedImage> {
  const store = id.startsWith('g_') ? page.commonObjs : page.objs;
  return new Promise((resolve) => store.get(id, resolve as (image: unknown) => void));
}

/** A 1-bit image's rows (each padded to a byte, 1 = white as pdfjs decodes them) as 8-bit grey. */
function unpackBits(image: DecodedImage): Uint8Array {
  const grey = new Uint8Array(image.width * image.height);
  const rowBytes = (image.width + 7) >> 3;
  for (let y = 0; y < image.height; y++)
    for (let x = 0; x < image.width; x++)
      grey[y * image.width + x] = (image.data[y * rowBytes + (x >> 3)] >> (7 - (x & 7))) & 1 ? 255 : 0;
  return grey;
}

/**
 * The page's text by OCR as reflow lines (one per paragraph), and its confidence; null when the page paints no
 * image (a blank page). The first and last paragraph are marked as at the page's edge, so a running header or
 * footer printed on every scanned page is dropped as it is from a text PDF (pdfRunningLines.ts).
 */
export async function ocrPage(
  page: PDFPageProxy,
  limits: OcrLimits,
): Promise<{ lines: TextLine[]; confidence: number } | null> {
  const image = await largestImage(page);
  if (!image) return null;
  const pixels = await decoded(page, image.id);
  checkPixels(pixels.width, pixels.height, limits);
  let pgm: Uint8Array;
  if (pixels.kind === GRAYSCALE_1BPP) pgm = greyPgm(pixels.width, pixels.height, unpackBits(pixels), 1);
  else if (pixels.kind === RGB_24BPP || pixels.kind === RGBA_32BPP)
    pgm = greyPgm(pixels.width, pixels.height, pixels.data, pixels.kind === RGB_24BPP ? 3 : 4);
  else return null;
  const { text, confidence } = await recognize(pgm);
  const blocks = text.split('\n\n').filter(Boolean);
  const lines = blocks.map((block, index) => {
    const atEdge = index === 0 || index === blocks.length - 1;
    return {
      text: block,
      paragraphStart: true,
      heading: false,
      cells: null,
      size: 10,
      brokenOff: true,
      atEdge,
      setOff: atEdge,
    } satisfies TextLine;
  });
  return { lines, confidence };
}

/**
 * Whether a page has no text layer (nothing but white space in its text content): counted over the pages ahead
 * before the first OCR, so that a scan over the page limit fails at once, not after an hour of OCR.
 */
export async function hasNoText(page: PDFPageProxy): Promise<boolean> {
  const content = await page.getTextContent();
  return content.items.every((item) => !('str' in item) || item.str.trim() === '');
}
