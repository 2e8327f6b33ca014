// The answer benchmark's data (`kbqa eval answers DIR`, bench/answers/): documents and questions, read and checked.
//
// DIR/documents/NAME.md is a markdown document; DIR/documents/NAME.layout.json is a printed document's source, drawn
// as a PDF by answerPdf.ts and also written out as markdown (its twin) for the PDF-vs-markdown comparison: the eval
// asks every question of two KBs, one holding the PDFs, one holding their markdown twins (markdown documents in both).
// DIR/questions.json lists the questions: `answerable` ones with gold answer strings (any one of them counts), their
// document's NAME and, for a printed document, the pages that hold the fact; `unanswerable` ones (on the KB's topics,
// not in its documents) and `off_topic` ones. Each question is in one split, fixed in the file (see SPLITS).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/** A word may carry soft hyphens: the places where the PDF may break it at a line's end (drawn as "-"). */
export const SOFT_HYPHEN = '\u00ad';

const block = z.union([
  z.object({ title: z.string().min(1) }).strict(),
  z.object({ heading: z.string().min(1) }).strict(),
  z.object({ paragraph: z.string().min(1) }).strict(),
  /** A line leading into a list, printed right above it. */
  z.object({ lead: z.string().min(1) }).strict(),
  z.object({ list: z.array(z.string().min(1)).min(1) }).strict(),
  /** `columns`: each column's x offset from the left margin; the first row is the header. */
  z
    .object({
      table: z
        .object({ columns: z.array(z.number().min(0)).min(2), rows: z.array(z.array(z.string())).min(2) })
        .strict(),
    })
    .strict(),
  /** Two columns of paragraphs side by side. */
  z.object({ columns: z.tuple([z.array(z.string().min(1)), z.array(z.string().min(1))]) }).strict(),
]);
export type LayoutBlock = z.infer<typeof block>;

const layoutSchema = z
  .object({
    title: z.string().min(1),
    /** Printed at the top of every page. */
    header: z.string(),
    /** Printed at the foot of every page; {page} and {pages} are replaced. */
    footer: z.string(),
    pages: z.array(z.array(block).min(1)).min(1),
  })
  .strict();
export type DocumentLayout = z.infer<typeof layoutSchema>;

/**
 * `tune` questions calibrate the answerer, `report` ones are only reported on. `tune-2` and `report-2` were written
 * later, after `report` had been seen: a second tune set and a held-out report set that no rule was fitted to.
 */
export const SPLITS = ['tune', 'report', 'tune-2', 'report-2'] as const;

const questionSchema = z.discriminatedUnion('kind', [
  z
    .object({
      id: z.string().min(1),
      split: z.enum(SPLITS),
      kind: z.literal('answerable'),
      question: z.string().min(1),
      answers: z.array(z.string().min(1)).min(1),
      document: z.string().min(1),
      pages: z.array(z.number().int().min(1)),
    })
    .strict(),
  z
    .object({
      id: z.string().min(1),
      split: z.enum(SPLITS),
      kind: z.enum(['unanswerable', 'off_topic']),
      question: z.string().min(1),
    })
    .strict(),
]);
export type BenchQuestion = z.infer<typeof questionSchema>;
export type Split = BenchQuestion['split'];

export interface BenchDocument {
  /** The file name without its extension: what questions name. */
  name: string;
  kind: 'markdown' | 'pdf';
  /** Markdown documents: their text; printed ones: their twin's. */
  markdown: string;
  /** Printed documents only. */
  layout?: DocumentLayout;
}

export interface AnswerDataset {
  name: string;
  documents: BenchDocument[];
  questions: BenchQuestion[];
}

const LAYOUT_SUFFIX = '.layout.json';

/** A printed document as markdown: the same words (soft hyphens out), headings as headings, lists and tables as such. */
export function layoutToMarkdown(layout: DocumentLayout): string {
  const parts: string[] = [];
  const plain = (text: string) => text.split(SOFT_HYPHEN).join('');
  for (const page of layout.pages) {
    for (const item of page) {
      if ('title' in item) parts.push(`# ${plain(item.title)}`);
      else if ('heading' in item) parts.push(`## ${plain(item.heading)}`);
      else if ('paragraph' in item) parts.push(plain(item.paragraph));
      else if ('lead' in item) parts.push(plain(item.lead));
      else if ('list' in item) parts.push(item.list.map((entry, index) => `${index + 1}. ${plain(entry)}`).join('\n'));
      else if ('table' in item) {
        const [header, ...rows] = item.table.rows;
        const row = (cells: string[]) => `| ${cells.map(plain).join(' | ')} |`;
        parts.push([row(header), row(header.map(() => '---')), ...rows.map(row)].join('\n'));
      } else parts.push(...item.columns.flat().map(plain));
    }
  }
  return `${parts.join('\n\n')}\n`;
}

function problemText(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
}

/** Reads DIR; every question must name a document that is there, and only printed documents have gold pages. */
export async function loadAnswerDataset(directory: string): Promise<AnswerDataset> {
  const documentsDirectory = join(directory, 'documents');
  const documents: BenchDocument[] = [];
  for (const filename of (await readdir(documentsDirectory)).sort()) {
    const text = await readFile(join(documentsDirectory, filename), 'utf8');
    if (filename.endsWith('.md')) {
      documents.push({ name: filename.slice(0, -'.md'.length), kind: 'markdown', markdown: text });
    } else if (filename.endsWith(LAYOUT_SUFFIX)) {
      const parsed = layoutSchema.safeParse(JSON.parse(text));
      if (!parsed.success) throw new Error(`${filename}: ${problemText(parsed.error)}`);
      documents.push({
        name: filename.slice(0, -LAYOUT_SUFFIX.length),
        kind: 'pdf',
        markdown: layoutToMarkdown(parsed.data),
        layout: parsed.data,
      });
    }
  }
  const parsed = z
    .array(questionSchema)
    .safeParse(JSON.parse(await readFile(join(directory, 'questions.json'), 'utf8')));
  if (!parsed.success) throw new Error(`questions.json: ${problemText(parsed.error)}`);
  const byName = new Map(documents.map((document) => [document.name, document]));
  const ids = new Set<string>();
  for (const question of parsed.data) {
    if (ids.has(question.id)) throw new Error(`questions.json: the id ${question.id} is used twice`);
    ids.add(question.id);
    if (question.kind !== 'answerable') continue;
    const document = byName.get(question.document);
    if (!document)
      throw new Error(
        `questions.json: ${question.id} names the document ${question.document}, which is not in ${documentsDirectory}`,
      );
    const pages = document.layout?.pages.length ?? 0;
    if (document.kind === 'pdf' ? question.pages.length === 0 : question.pages.length > 0) {
      throw new Error(`questions.json: ${question.id} needs gold pages for a printed document and none for markdown`);
    }
    const outside = question.pages.find((page) => page > pages);
    if (outside !== undefined)
      throw new Error(`questions.json: ${question.id} names page ${outside}; ${question.document} has ${pages}`);
  }
  return { name: directory.split('/').filter(Boolean).pop() ?? 'answers', documents, questions: parsed.data };
}
