// The kinds of documents uploaded as files (the server's extraction/fileKinds.ts): their original is kept, their
// text read by the server's reader. One place for what the app calls each and how it says it is being read.
import type { KbDocument } from '../api/generated.ts';

export type DocumentKind = KbDocument['kind'];

const NAMES: Record<Exclude<DocumentKind, 'text'>, string> = {
  pdf: 'PDF',
  docx: 'Word',
  odt: 'OpenDocument',
  pptx: 'PowerPoint',
  xlsx: 'Excel',
  csv: 'CSV',
  html: 'Web page',
  image: 'Image',
};

/** A document uploaded as a file (not text sent as JSON): it has an original, kept and downloadable. */
export function isFileKind(kind: DocumentKind): kind is Exclude<DocumentKind, 'text'> {
  return kind !== 'text';
}

/** "PDF", "Word", "PowerPoint" …; "Text" for text. */
export function kindName(kind: DocumentKind): string {
  return isFileKind(kind) ? NAMES[kind] : 'Text';
}

/** What reading it is called while it happens: "the PDF", "the deck", "the image (OCR)". */
export function readingWhat(kind: DocumentKind): string {
  switch (kind) {
    case 'pdf':
      return 'the PDF';
    case 'pptx':
      return 'the deck';
    case 'xlsx':
    case 'csv':
      return 'the spreadsheet';
    case 'html':
      return 'the web page';
    case 'image':
      return 'the image (OCR)';
    default:
      return 'the document';
  }
}

/** The unit of a kind's progress: a deck's slides, a scan's and a PDF's pages. */
export function pageWord(kind: DocumentKind): string {
  return kind === 'pptx' ? 'slide' : 'page';
}
