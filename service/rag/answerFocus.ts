// What an answer sentence must be about, beyond the kind of fact (answerCues.ts): the question's own names, its own
// numbers, and for "who" someone. A sentence about the KB's other things ("Harrow Fell treatment works produces
// 18 megalitres a day" for "How much water does Kettlebeck treatment works produce a day?") is near in words and in
// vectors, and the answerer would quote it; these checks make it say there is nothing instead. Only a question (it
// ends in "?") is checked so: a claim to verify (SciFact) is searched for its evidence, which may word it otherwise.
// Every scan is a loop over the words, linear in the text.
import { namedWords } from './answerCues.ts';
import { contentTerms, stem, words } from './terms.ts';

/** Day and month names are no things a sentence is about ("Day: Friday"). */
const CALENDAR_NAMES = new Set(
  'monday tuesday wednesday thursday friday saturday sunday january february march april may june july august september october november december'.split(
    ' ',
  ),
);
/** A name held by at least this share of the retrieved passages (the town's) is the KB's, not one thing's. */
const NAME_SHARED = 0.5;

const isName = (word: string) => /^\p{Lu}\p{Ll}+$/u.test(word);
const isLetter = (char: string) => /\p{L}/u.test(char);

/** A token without the punctuation around it ("(Harrow," → "Harrow"), found by walking in from both ends. */
function letters(token: string): string {
  let start = 0;
  let end = token.length;
  while (start < end && !isLetter(token[start])) start += 1;
  while (end > start && !isLetter(token[end - 1])) end -= 1;
  return token.slice(start, end);
}

export interface QuestionFocus {
  /** The question's names most retrieved passages lack ("Kettlebeck"), as content terms. */
  names: string[];
  /** The question's words holding a digit ("8" of "up to 8 km", "s3" of "route S3"). */
  numbers: string[];
  /** "Who …?": the answer names someone. */
  asksWho: boolean;
  /** The question's content terms and the KB's shared names: a sentence naming only these names nothing else. */
  known: Set<string>;
}

/** The share of the passages' term sets holding a term. */
export function shareHolding(term: string, holders: Array<Set<string>>): number {
  return holders.length === 0 ? 0 : holders.filter((terms) => terms.has(term)).length / holders.length;
}

/** The focus of a question among the retrieved passages' terms (`holders`, each passage's content terms). */
export function questionFocus(question: string, holders: Array<Set<string>>): QuestionFocus {
  const asked = question.trimEnd().endsWith('?');
  const named = [...contentTerms(namedWords(question).join(' '))];
  const lower = words(question.toLowerCase());
  return {
    names: named.filter((term) => shareHolding(term, holders) < NAME_SHARED),
    numbers: asked ? lower.filter((word) => /\d/.test(word)) : [],
    asksWho: asked && lower[0] === 'who',
    known: new Set([...contentTerms(question), ...named.filter((term) => shareHolding(term, holders) >= NAME_SHARED)]),
  };
}

/**
 * The names a sentence holds that the question does not know: capitalised words, past the first word of the sentence
 * or of a table row's cell (which is capitalised anyway) unless a name goes on after it ("Harrow Fell treatment works
 * …"), not a header cell's label ("Day:"), not a day or month.
 */
function otherNames(text: string, known: ReadonlySet<string>, context: ReadonlySet<string>): string[] {
  const tokens = text.split(/\s+/).filter(Boolean);
  const found: string[] = [];
  let starts = true;
  tokens.forEach((token, index) => {
    const startHere = starts;
    starts = /[;:.!?]$/.test(token);
    const word = letters(token);
    if (!isName(word) || token.endsWith(':')) return;
    if (startHere && !isName(letters(tokens[index + 1] ?? ''))) return;
    const lower = word.toLowerCase();
    if (CALENDAR_NAMES.has(lower) || CALENDAR_NAMES.has(lower.replace(/s$/, ''))) return;
    const term = stem(lower);
    if (!known.has(term) && !context.has(term)) found.push(term);
  });
  return found;
}

/**
 * Whether a sentence is about what the question is about: each of the question's names in its passage (text, title,
 * headings), and in the sentence or its title and headings unless the sentence names nothing else (then it may go on
 * about the thing the sentence before it named: "The museum is closed on Mondays."); each number the question holds in
 * the sentence or its title and headings ("the route S3" is not answered by route S4's row); for "who", someone named
 * that the question does not name, or an agent ("handled by the mains gang").
 */
export function fitsFocus(
  text: string,
  context: string,
  passageTerms: ReadonlySet<string>,
  focus: QuestionFocus,
): boolean {
  if (!focus.names.every((term) => passageTerms.has(term))) return false;
  const sentenceTerms = contentTerms(text);
  const contextTerms = contentTerms(context);
  const others = () => otherNames(text, focus.known, contextTerms);
  if (!focus.names.every((term) => sentenceTerms.has(term) || contextTerms.has(term)) && others().length > 0)
    return false;
  if (focus.numbers.length > 0) {
    const present = new Set([...words(text.toLowerCase()), ...words(context.toLowerCase())]);
    if (!focus.numbers.every((number) => present.has(number))) return false;
  }
  if (focus.asksWho && !words(text.toLowerCase()).includes('by') && others().length === 0) return false;
  return true;
}
