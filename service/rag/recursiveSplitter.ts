// LangChain's RecursiveCharacterTextSplitter (@langchain/textsplitters 1.x, keepSeparator: true, the only way
// splitter.ts uses it), rewritten here so that the model workers do not load LangChain to split text: its import
// pulls in @langchain/core's documents module, ~30 MB of each worker's memory once collected and ~45 MB before
// (docs/operations.md, "Memory"). The output is the library's, piece for piece (test/unit/splitter.test.ts compares
// the two); only its console warning about an over-long chunk is left out.

/** The library's separators for plain text. */
export const TEXT_SEPARATORS = ['\n\n', '\n', ' ', ''];
/** The library's separators for markdown (`fromLanguage('markdown')`). */
export const MARKDOWN_SEPARATORS = [
  '\n## ',
  '\n### ',
  '\n#### ',
  '\n##### ',
  '\n###### ',
  '```\n\n',
  '\n\n***\n\n',
  '\n\n---\n\n',
  '\n\n___\n\n',
  '\n\n',
  '\n',
  ' ',
  '',
];

export interface RecursiveSplitterOptions {
  chunkSize: number;
  chunkOverlap: number;
  separators: string[];
  lengthFunction(text: string): number;
}

/**
 * `text` cut before every occurrence of `separator`, overlapping ones included, as the library's
 * `text.split(/(?=separator)/)` does (without a regular expression); an empty separator cuts every UTF-16 unit.
 */
export function splitBeforeSeparator(text: string, separator: string): string[] {
  if (separator === '') return text.split('');
  const pieces: string[] = [];
  let pieceStart = 0;
  for (let at = text.indexOf(separator, 1); at >= 0; at = text.indexOf(separator, at + 1)) {
    pieces.push(text.slice(pieceStart, at));
    pieceStart = at;
  }
  pieces.push(text.slice(pieceStart));
  return pieces.filter((piece) => piece !== '');
}

export class RecursiveSplitter {
  readonly #options: RecursiveSplitterOptions;

  constructor(options: RecursiveSplitterOptions) {
    if (options.chunkOverlap >= options.chunkSize) throw new Error('Cannot have chunkOverlap >= chunkSize');
    this.#options = options;
  }

  splitText(text: string): string[] {
    return this.#split(text, this.#options.separators);
  }

  #split(text: string, separators: string[]): string[] {
    const { chunkSize, lengthFunction } = this.#options;
    // The first separator the text holds; the ones after it split what is still too long.
    let separator = separators[separators.length - 1];
    let finer: string[] | undefined;
    for (let index = 0; index < separators.length; index += 1) {
      const candidate = separators[index];
      if (candidate === '') {
        separator = candidate;
        break;
      }
      if (text.includes(candidate)) {
        separator = candidate;
        finer = separators.slice(index + 1);
        break;
      }
    }
    const chunks: string[] = [];
    let fitting: string[] = [];
    for (const piece of splitBeforeSeparator(text, separator)) {
      if (lengthFunction(piece) < chunkSize) {
        fitting.push(piece);
        continue;
      }
      if (fitting.length > 0) {
        chunks.push(...this.#merge(fitting));
        fitting = [];
      }
      if (finer) chunks.push(...this.#split(piece, finer));
      else chunks.push(piece);
    }
    if (fitting.length > 0) chunks.push(...this.#merge(fitting));
    return chunks;
  }

  /** Consecutive pieces joined into chunks of at most chunkSize, each starting with up to chunkOverlap of the last. */
  #merge(pieces: string[]): string[] {
    const { chunkSize, chunkOverlap, lengthFunction } = this.#options;
    const chunks: string[] = [];
    const current: string[] = [];
    let total = 0;
    const flush = () => {
      const chunk = current.join('').trim();
      if (chunk !== '') chunks.push(chunk);
    };
    for (const piece of pieces) {
      const length = lengthFunction(piece);
      if (total + length > chunkSize && current.length > 0) {
        flush();
        while (total > chunkOverlap || (total + length > chunkSize && total > 0)) {
          total -= lengthFunction(current[0]);
          current.shift();
        }
      }
      current.push(piece);
      total += length;
    }
    flush();
    return chunks;
  }
}
