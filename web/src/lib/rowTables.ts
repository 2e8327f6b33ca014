// A table as the server's readers write it (service/extraction/documents.ts rowLine): one line per row, each cell
// with its header's name, "- Row 3: Variety: Cox's Orange Pippin; Tonnes picked: 187". The document page shows a
// run of such lines as the table it was. Scanned by hand (split, indexOf): no regular expression on document text.

export type PassageBlock = { kind: 'text'; text: string } | { kind: 'table'; header: string[]; rows: string[][] };

interface RowLine {
  cells: Map<string, string>;
}

/** A row line's cells, or null when the line is not one (not a list item, or fewer than two named cells). */
function rowLine(line: string): RowLine | null {
  if (!line.startsWith('- ')) return null;
  let rest = line.slice(2);
  const cells = new Map<string, string>();
  // The readers' "Row N: " prefix (a workbook's row number) is a cell of its own.
  if (rest.startsWith('Row ')) {
    const colon = rest.indexOf(': ');
    const number = rest.slice(4, colon);
    if (colon > 4 && [...number].every((char) => char >= '0' && char <= '9')) {
      cells.set('Row', number);
      rest = rest.slice(colon + 2);
    }
  }
  for (const part of rest.split('; ')) {
    const colon = part.indexOf(': ');
    if (colon <= 0) return null;
    cells.set(part.slice(0, colon), part.slice(colon + 2));
  }
  return cells.size >= 2 ? { cells } : null;
}

function sameColumns(a: RowLine, b: RowLine): boolean {
  const keys = [...b.cells.keys()].filter((key) => key !== 'Row');
  const shared = keys.filter((key) => a.cells.has(key)).length;
  // Rows leave empty cells out: most of the names shared is the same table.
  return shared >= Math.max(1, Math.ceil(keys.length / 2));
}

function table(rows: RowLine[]): PassageBlock {
  const header: string[] = [];
  for (const row of rows) for (const key of row.cells.keys()) if (!header.includes(key)) header.push(key);
  return { kind: 'table', header, rows: rows.map((row) => header.map((key) => row.cells.get(key) ?? '')) };
}

/** A passage's text as blocks: runs of two or more row lines of one table become a table, the rest stays text. */
export function passageBlocks(text: string): PassageBlock[] {
  const blocks: PassageBlock[] = [];
  let lines: string[] = [];
  let rows: { line: string; row: RowLine }[] = [];
  const flushText = () => {
    if (lines.length > 0) blocks.push({ kind: 'text', text: lines.join('\n') });
    lines = [];
  };
  const flushRows = () => {
    if (rows.length >= 2) {
      flushText();
      blocks.push(table(rows.map((entry) => entry.row)));
    } else {
      lines.push(...rows.map((entry) => entry.line));
    }
    rows = [];
  };
  for (const line of text.split('\n')) {
    const row = rowLine(line);
    if (row && (rows.length === 0 || sameColumns(rows[0].row, row))) {
      rows.push({ line, row });
      continue;
    }
    flushRows();
    if (row) rows.push({ line, row });
    else lines.push(line);
  }
  flushRows();
  flushText();
  return blocks;
}
