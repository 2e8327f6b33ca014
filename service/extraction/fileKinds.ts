// The one notion of a "file kind": a document uploaded as a file in the web app, whose original is kept (GridFS) and
// whose text the reader child extracts again at every ingestion (pdf.ts spawns it: pdfWorker.ts for PDFs,
// documentWorker.ts for the others). A document without a file kind is text (the Developer API's JSON). Which kind a
// file is comes from its bytes (magic numbers, the parts inside a zip), checked against its name: a .docx that is
// not a Word document is refused at the upload, before anything is read (fileSniffer.ts).

export const FILE_KINDS = ['pdf', 'docx', 'odt', 'pptx', 'xlsx', 'csv', 'html', 'image'] as const;
export type FileKind = (typeof FILE_KINDS)[number];

/** A document read from a kept original (not from stored text). */
export function isFileKind(kind: string | undefined): kind is FileKind {
  return kind !== undefined && (FILE_KINDS as readonly string[]).includes(kind);
}

/** The kinds whose text comes in pages (a citation says "p. 3"); a deck's sections are its slides. */
export function hasPages(kind: FileKind): boolean {
  return kind === 'pdf' || kind === 'image';
}

/** Each extension the upload takes, and the kind it names. */
const EXTENSIONS: Record<string, FileKind> = {
  '.pdf': 'pdf',
  '.docx': 'docx',
  '.odt': 'odt',
  '.pptx': 'pptx',
  '.xlsx': 'xlsx',
  '.csv': 'csv',
  '.html': 'html',
  '.htm': 'html',
  '.png': 'image',
  '.jpg': 'image',
  '.jpeg': 'image',
  '.tif': 'image',
  '.tiff': 'image',
};

export const UPLOAD_EXTENSIONS = Object.keys(EXTENSIONS);

/** Said in every refusal: what the upload takes. */
export const ACCEPTED_FILES =
  'PDF (.pdf), Word (.docx), OpenDocument text (.odt), PowerPoint (.pptx), Excel (.xlsx), CSV (.csv), web pages (.html, .htm) and images (.png, .jpg, .jpeg, .tif, .tiff)';

export const KIND_NAMES: Record<FileKind, string> = {
  pdf: 'a PDF',
  docx: 'a Word document (.docx)',
  odt: 'an OpenDocument text (.odt)',
  pptx: 'a PowerPoint deck (.pptx)',
  xlsx: 'an Excel workbook (.xlsx)',
  csv: 'a CSV file',
  html: 'a web page (.html)',
  image: 'a PNG, JPEG or TIFF image',
};

export function kindOfFilename(filename: string): FileKind | null {
  const dot = filename.lastIndexOf('.');
  return dot < 0 ? null : (EXTENSIONS[filename.slice(dot).toLowerCase()] ?? null);
}

/** The content type the original is served with (always as an attachment, with nosniff). */
export function contentTypeOf(kind: FileKind, filename: string): string {
  switch (kind) {
    case 'pdf':
      return 'application/pdf';
    case 'docx':
      return 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
    case 'odt':
      return 'application/vnd.oasis.opendocument.text';
    case 'pptx':
      return 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
    case 'xlsx':
      return 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
    case 'csv':
      return 'text/csv; charset=utf-8';
    case 'html':
      return 'text/html; charset=utf-8';
    case 'image': {
      const name = filename.toLowerCase();
      if (name.endsWith('.png')) return 'image/png';
      return name.endsWith('.tif') || name.endsWith('.tiff') ? 'image/tiff' : 'image/jpeg';
    }
  }
}

/** The filename's problem for the upload, before a byte is read: null when its extension is one the upload takes. */
export function uploadExtensionProblem(filename: string): string | null {
  if (kindOfFilename(filename)) return null;
  return `this upload takes ${ACCEPTED_FILES}; send text and markdown as JSON to POST /api/web/documents`;
}
