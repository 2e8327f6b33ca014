// CSV → rows carrying their header names, on csv-parse 7.0.3 streaming. Bounds: `to` (rows), `max_record_size`
// (bytes of one record), and we stop reading once the row limit is reached (destroying the parser).
import { parse } from 'csv-parse';
import { Readable } from 'node:stream';

export async function csvToText(buffer, { maxRows = 100_000, maxRecordBytes = 64 * 1024, name = 'CSV' } = {}) {
  // 64 KiB slices, so the parser stops near the row limit instead of parsing one 25 MB chunk to its end
  const slices = function* () {
    for (let i = 0; i < buffer.length; i += 65_536) yield buffer.subarray(i, i + 65_536);
  };
  const parser = Readable.from(slices()).pipe(
    parse({
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      max_record_size: maxRecordBytes,
      to: maxRows + 1,
    }),
  );
  const out = [`## ${name}`];
  let header = null;
  let rows = 0;
  let line = 1;
  for await (const rec of parser) {
    line++;
    if (!header) {
      header = rec.map((h, i) => h.trim() || `Column ${i + 1}`);
      continue;
    }
    rows++;
    out.push(
      `- Row ${line - 1}: ` +
        rec
          .map((v, i) => (v.trim() ? `${header[i] ?? `Column ${i + 1}`}: ${v.trim()}` : ''))
          .filter(Boolean)
          .join('; '),
    );
  }
  return { text: out.join('\n'), rows, stopped: rows >= maxRows };
}
