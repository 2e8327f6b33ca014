// CSV → rows carrying their header names (the first record), in sections of rows, on csv-parse 7.0.3 streaming:
// quotes, a byte order mark and ragged rows handled. Bounds: KBQA_DOC_MAX_ROWS data rows (a file with more is refused,
// and parsing stops there: `to`), and KBQA_DOC_MAX_RECORD_BYTES for one record (a file with no line break).
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { DocumentReadError } from '../errors.ts';
import { RowSections, rowLine, type DocumentLimits, type ExtractedDocument } from './documents.ts';

/** The buffer is fed in slices so the parser stops near the row limit (one 25 MB chunk is parsed to its end). */
const SLICE_BYTES = 64 * 1024;

function* slices(bytes: Buffer): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += SLICE_BYTES) yield bytes.subarray(at, at + SLICE_BYTES);
}

/** `name` is the sheet's name in the citations (the file's name without its extension). */
export async function readCsv(
  bytes: Buffer,
  name: string,
  limits: Pick<DocumentLimits, 'maxRows' | 'maxRecordBytes'>,
): Promise<ExtractedDocument> {
  const parser = Readable.from(slices(bytes)).pipe(
    parse({
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      max_record_size: limits.maxRecordBytes,
      to: limits.maxRows + 2,
    }),
  );
  const sections = new RowSections();
  let header: string[] | null = null;
  let line = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      line++;
      if (!header) {
        header = record.map((cell, index) => cell.trim() || `Column ${index + 1}`);
        continue;
      }
      if (line - 1 > limits.maxRows) throw DocumentReadError.tooManyRows(limits.maxRows);
      sections.add(name, line, rowLine(header, record, `Row ${line}: `));
    }
  } catch (error) {
    if (error instanceof DocumentReadError) throw error;
    const message = (error as Error).message;
    const hint = message.includes('max_record_size') ? ` (KBQA_DOC_MAX_RECORD_BYTES is ${limits.maxRecordBytes})` : '';
    throw DocumentReadError.corrupt('CSV', `${message}${hint}`);
  } finally {
    parser.destroy();
  }
  sections.flush();
  return { sections: sections.sections };
}
