// How `kbqa eval answers` scores one answer: does it hold the gold fact, is every sentence of it a whole sentence of
// the source, did it refuse, what did it cite first. Pure functions over strings and the API's response fields, so
// they are tested on their own (test/unit/answerScoring.test.ts) and can be shown to fail on a fragment, a wrong
// fact or a wrong citation.
import { collapseBlanks, isBlankChar, isDigit, isLetter } from '../text/characters.ts';
import { splitSentences } from '../text/sentences.ts';

/** Lower case, compatibility forms folded (NFKC), dashes and quotes made plain, blanks collapsed. */
export function normalizeText(text: string): string {
  let out = '';
  for (const char of text.normalize('NFKC').toLowerCase()) {
    if (char === '‐' || char === '‑' || char === '‒' || char === '–' || char === '—') out += '-';
    else if (char === '‘' || char === '’') out += "'";
    else if (char === '“' || char === '”') out += '"';
    else if (char === '\u00ad') continue;
    else out += isBlankChar(char) || char === '\n' ? ' ' : char;
  }
  return collapseBlanks(out);
}

/** The answer without its citation markers ("[1]", "[1][2]", "[1, 3]") and the blanks before them. */
export function withoutCitationMarkers(answer: string): string {
  let out = '';
  let index = 0;
  while (index < answer.length) {
    if (answer[index] === '[') {
      let end = index + 1;
      let digits = 0;
      while (end < answer.length && (isDigit(answer[end]) || answer[end] === ',' || answer[end] === ' ')) {
        if (isDigit(answer[end])) digits += 1;
        end += 1;
      }
      if (digits > 0 && answer[end] === ']') {
        out = out.trimEnd();
        index = end + 1;
        continue;
      }
    }
    out += answer[index];
    index += 1;
  }
  return out;
}

const isWordChar = (char: string | undefined) => char !== undefined && (isLetter(char) || isDigit(char));

/**
 * Whether the answer holds one of the gold strings, compared normalized and as whole words: "8 km" is not found in
 * "18 km", "4410" not in "44100".
 */
export function holdsGoldAnswer(answer: string, golds: string[]): boolean {
  const text = normalizeText(withoutCitationMarkers(answer));
  return golds.some((gold) => {
    const wanted = normalizeText(gold);
    if (wanted === '') return false;
    for (let at = text.indexOf(wanted); at !== -1; at = text.indexOf(wanted, at + 1)) {
      if (!isWordChar(text[at - 1]) && !isWordChar(text[at + wanted.length])) return true;
    }
    return false;
  });
}

/** A unit's key: normalized, without the punctuation the answerer may put at its end ("…item [1]." for a list item). */
function unitKey(text: string): string {
  let key = normalizeText(text);
  while (key.length > 0 && '.;:,'.includes(key[key.length - 1])) key = key.slice(0, -1).trimEnd();
  return key;
}

/** The source's units by key, as the one segmentation cuts them: sentences, list items and table rows (not headings). */
export function sourceSentenceKeys(sources: string[]): { sentences: Set<string>; headings: Set<string> } {
  const sentences = new Set<string>();
  const headings = new Set<string>();
  for (const source of sources)
    for (const unit of splitSentences(source)) (unit.heading ? headings : sentences).add(unitKey(unit.text));
  return { sentences, headings };
}

export interface SentenceCheck {
  /** Units of the answer (markers removed), as the one segmentation cuts them. */
  sentences: number;
  /** Those that are not a whole sentence, list item or table row of the sources (a heading counts as a piece). */
  pieces: string[];
}

/** Cuts the answer (its markers removed) with the same segmenter and looks each unit up among the source's units. */
export function checkWholeSentences(
  answer: string,
  source: { sentences: Set<string>; headings: Set<string> },
): SentenceCheck {
  const units = splitSentences(withoutCitationMarkers(answer)).map((unit) => unit.text);
  return { sentences: units.length, pieces: units.filter((unit) => !source.sentences.has(unitKey(unit))) };
}

/** How the API says "nothing relevant" (docs/api.md § API decisions): an answer that cites nothing. */
export function isRefusal(response: { citations: unknown[] }): boolean {
  return response.citations.length === 0;
}

export interface CitedPassage {
  document_id: string;
  snippet: string;
}

export interface PagedChunk {
  document_id: string;
  text: string;
  page_start?: number | null;
  page_end?: number | null;
}

/**
 * The pages of the passage a citation quotes: the Developer API's citations carry the contract's four fields only,
 * so the passage is found among the retrieved chunks (`include_chunks`) of its document by its snippet (a run of
 * the passage's sentences, cut at 500 characters with "…"). Null when no chunk holds it or the document has no pages.
 */
export function citedPages(citation: CitedPassage, chunks: PagedChunk[]): { start: number; end: number } | null {
  let snippet = collapseBlanks(citation.snippet);
  if (snippet.endsWith('…')) snippet = snippet.slice(0, -1).trimEnd();
  const chunk = chunks.find(
    (candidate) => candidate.document_id === citation.document_id && collapseBlanks(candidate.text).includes(snippet),
  );
  if (!chunk || chunk.page_start == null) return null;
  return { start: chunk.page_start, end: chunk.page_end ?? chunk.page_start };
}

/** Whether a cited page range holds one of the gold pages. */
export function citesGoldPage(pages: { start: number; end: number } | null, goldPages: number[]): boolean {
  return pages !== null && goldPages.some((page) => page >= pages.start && page <= pages.end);
}

/**
 * A markdown twin's table rows, as the segmentation gives them (each cell after its header's name, "Route: S1; Day:
 * Wednesday"), by key: the units its table lines give and its other lines do not.
 */
export function tableRowKeys(markdown: string): { rows: Set<string>; others: Set<string> } {
  const keys = (text: string) =>
    splitSentences(text)
      .filter((unit) => !unit.heading)
      .map((unit) => unitKey(unit.text));
  const others = new Set(
    keys(
      markdown
        .split('\n')
        .filter((line) => !line.trimStart().startsWith('|'))
        .join('\n'),
    ),
  );
  return { rows: new Set(keys(markdown).filter((key) => !others.has(key))), others };
}

/**
 * A table question's rows: the twin's table rows holding a gold string, when no other unit of the twin holds one
 * (the fact is a table cell); empty for any other question.
 */
export function goldTableRows(markdown: string, golds: string[]): string[] {
  const { rows, others } = tableRowKeys(markdown);
  if ([...others].some((unit) => holdsGoldAnswer(unit, golds))) return [];
  return [...rows].filter((row) => holdsGoldAnswer(row, golds));
}

/** Whether one unit of the answer (markers removed) is one of the rows, whole, with its header names. */
export function answeredByRow(answer: string, rows: string[]): boolean {
  const wanted = new Set(rows);
  return splitSentences(withoutCitationMarkers(answer)).some((unit) => wanted.has(unitKey(unit.text)));
}
