// Whether a cited passage supports a sentence an answer model wrote: the sentence's facts must be in the passage(s)
// it cites. Lexical on purpose, deterministic and with no model call: every number, date and time of the sentence
// must appear in the cited passages, and most (more than half) of its distinctive content terms must too.
//
// Why these two tests: what a model gets wrong when it cites is mostly a figure (a year, an amount, a time it did
// not read) or a claim the passage never makes (words it does not hold). Numbers are checked exactly because one
// wrong digit is the whole error; words by majority because a faithful sentence still rephrases ("the lamp can be
// seen from 18 nautical miles" → "visible 18 nautical miles away"). The cases behind the threshold are in
// test/unit/citationSupport.test.ts. What it cannot see: a sentence that reorders or negates the passage's own words
// ("before" for "after", "not" are stopwords) passes. It is a check that a claim comes from the passage, not proof.
//
// Passage text is a stranger's: every scan is a character loop or the linear word pattern of terms.ts.
import { isDigit } from '../text/characters.ts';
import { contentTerms, words } from './terms.ts';

/** Number words read as their figure ("fifteen seconds" = "15 seconds"); "one" is a stopword, not a claim. */
const NUMBER_WORDS: Record<string, string> = {
  two: '2',
  three: '3',
  four: '4',
  five: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nine: '9',
  ten: '10',
  eleven: '11',
  twelve: '12',
  thirteen: '13',
  fourteen: '14',
  fifteen: '15',
  sixteen: '16',
  seventeen: '17',
  eighteen: '18',
  nineteen: '19',
  twenty: '20',
  thirty: '30',
  forty: '40',
  fifty: '50',
  sixty: '60',
  seventy: '70',
  eighty: '80',
  ninety: '90',
};

/**
 * Words that frame an answer rather than state a fact ("According to the passage, …", "The documents mention …"):
 * not distinctive, so not asked of the passage. Compared as content terms (stemmed).
 */
const FRAME_TERMS = contentTerms(
  'according passage passages source sources document documents text context information provided states stated ' +
    'mention mentions mentioned says said note notes knowledge base bases',
);

/** Terms of at least this many characters match a passage term sharing their first PREFIX characters. */
const PREFIX = 6;

/** What a passage offers the check, computed once per passage. */
export interface PassageFacts {
  numbers: Set<string>;
  terms: Set<string>;
  /** The first PREFIX characters of each term that long ("automat" of "automated" for "automatic"). */
  prefixes: Set<string>;
}

export interface SupportCheck {
  supported: boolean;
  /** The sentence's numbers no cited passage holds, as normalised. */
  missingNumbers: string[];
  /** The sentence's distinctive content terms, and how many of them a cited passage holds. */
  terms: number;
  coveredTerms: number;
}

/** One number as compared: leading zeros and thousands commas dropped ("07:15" = "7:15", "1,000" = "1000"). */
function normaliseNumber(raw: string): string {
  let start = 0;
  // Leading zeros of the first part only: "3.05" is not "3.5".
  while (raw[start] === '0' && isDigit(raw[start + 1] ?? '')) start += 1;
  let out = '';
  for (let index = start; index < raw.length; index += 1) if (raw[index] !== ',') out += raw[index];
  return out;
}

/**
 * The numbers of a text: digit runs joined by one '.', ',' or ':' between digits ("4.2", "1,000", "07:15"), and the
 * number words of NUMBER_WORDS as their figure. A date is its numbers ("3 October 2024": 3, 2024; the month is a term).
 */
export function numbersOf(text: string): Set<string> {
  const numbers = new Set<string>();
  let index = 0;
  while (index < text.length) {
    if (!isDigit(text[index])) {
      index += 1;
      continue;
    }
    const start = index;
    while (index < text.length) {
      if (isDigit(text[index])) index += 1;
      else if ((text[index] === '.' || text[index] === ',' || text[index] === ':') && isDigit(text[index + 1] ?? ''))
        index += 1;
      else break;
    }
    numbers.add(normaliseNumber(text.slice(start, index)));
  }
  for (const word of words(text.toLowerCase())) {
    const figure = NUMBER_WORDS[word];
    if (figure !== undefined) numbers.add(figure);
  }
  return numbers;
}

const hasDigit = (term: string) => {
  for (const char of term) if (isDigit(char)) return true;
  return false;
};

/** Content terms that are words: numbers (digits, number words) are checked as numbers. */
function wordTerms(text: string): Set<string> {
  const terms = new Set<string>();
  for (const term of contentTerms(text)) if (!hasDigit(term) && NUMBER_WORDS[term] === undefined) terms.add(term);
  return terms;
}

/** A passage's numbers and terms; `context` (its document's title, its headings) counts as the passage's too. */
export function passageFacts(text: string, context = ''): PassageFacts {
  const whole = context ? `${context}\n${text}` : text;
  const terms = wordTerms(whole);
  const prefixes = new Set<string>();
  for (const term of terms) if (term.length >= PREFIX) prefixes.add(term.slice(0, PREFIX));
  return { numbers: numbersOf(whole), terms, prefixes };
}

const holdsTerm = (facts: PassageFacts, term: string) =>
  facts.terms.has(term) || (term.length >= PREFIX && facts.prefixes.has(term.slice(0, PREFIX)));

/**
 * Whether the cited passages (together) support `sentence` (its text without markers): every number of it is in one
 * of them, and more than half of its distinctive terms are. A sentence with neither a number nor a distinctive term
 * states nothing to check: not supported.
 */
export function checkSupport(sentence: string, cited: PassageFacts[]): SupportCheck {
  const missingNumbers = [...numbersOf(sentence)].filter((number) => !cited.some((facts) => facts.numbers.has(number)));
  const terms = [...wordTerms(sentence)].filter((term) => !FRAME_TERMS.has(term));
  const coveredTerms = terms.filter((term) => cited.some((facts) => holdsTerm(facts, term))).length;
  const checkable = terms.length > 0 || numbersOf(sentence).size > 0;
  const supported =
    cited.length > 0 &&
    checkable &&
    missingNumbers.length === 0 &&
    (terms.length === 0 || coveredTerms * 2 > terms.length);
  return { supported, missingNumbers, terms: terms.length, coveredTerms };
}
