// Answer-type cues for the extractive answerer: a question that asks for a quantity ("how many") wants a sentence
// holding a number; a price ("how much does it cost") a currency; a length ("how far", "how deep") a number with a
// unit of length; "how long" a length or a span of time; a time or date ("when", "what time", "which day") a time,
// a date, a day, a month, a season or a span of time ("24 hours before"). A sentence without one ranks lower and
// cannot be the answer (extractiveAnswerer.ts answerDecision). Every scan is a word loop, linear in the text.

const WORD_RE = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;

/** The words of a text: runs of letters and digits, with an apostrophe's tail ("visitor's"). */
export function words(text: string): string[] {
  return text.match(WORD_RE) ?? [];
}

export type AnswerKind = 'quantity' | 'money' | 'length' | 'duration' | 'time';

/** After "how": a quantity (some more precisely, below). */
const QUANTITY_AFTER_HOW = new Set(['many', 'much', 'old', 'big', 'heavy', 'large', 'fast']);
/** After "how": a length. */
const LENGTH_AFTER_HOW = new Set(['far', 'deep', 'high', 'tall', 'wide']);
/** In a "how much" question: a price. */
const PRICE_WORDS = new Set(['cost', 'costs', 'price', 'fee', 'fees', 'charge', 'charged', 'pay', 'paid', 'fare', 'fares', 'fine', 'fines', 'deposit']);
const CURRENCY_WORDS = new Set(['pound', 'euro', 'dollar', 'penny', 'pence', 'cent', 'free', 'gbp', 'eur', 'usd']);
const LENGTH_UNITS = new Set(['m', 'metre', 'meter', 'km', 'kilometre', 'kilometer', 'mile', 'mi', 'feet', 'foot', 'ft', 'cm', 'mm', 'yard']);
/** After "how": a time. */
const TIME_AFTER_HOW = new Set(['early', 'late', 'soon', 'often']);
/** After "what" or "which". */
const AFTER_WHAT: ReadonlyMap<string, AnswerKind> = new Map([
  ['time', 'time'], ['year', 'time'], ['date', 'time'], ['day', 'time'], ['days', 'time'], ['month', 'time'], ['hours', 'time'],
  ['age', 'quantity'], ['percentage', 'quantity'], ['temperature', 'quantity'], ['number', 'quantity'],
]);

const NUMBER_WORDS = new Set(
  (
    'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen ' +
    'eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million dozen half ' +
    'single twice once free'
  ).split(' '),
);
const TIME_WORDS = new Set(
  (
    'january february march april may june july august september october november december ' +
    'monday tuesday wednesday thursday friday saturday sunday weekday weekend daily weekly monthly annually yearly ' +
    'spring summer autumn winter noon midnight dawn dusk morning afternoon evening night today tomorrow yesterday ' +
    'am pm'
  ).split(' '),
);
const TIME_UNITS = new Set(['minute', 'min', 'hour', 'hr', 'h', 'day', 'week', 'month', 'year', 'fortnight', 'second']);

const singular = (word: string) => (word.endsWith('s') ? word.slice(0, -1) : word);
const hasDigit = (word: string) => /\d/.test(word);
const isNumber = (word: string) => hasDigit(word) || NUMBER_WORDS.has(word);

export interface AnswerCue {
  /** The kinds of fact asked for ("How long …, and when …?" asks two), none when it asks for none in particular. */
  kinds: Set<AnswerKind>;
  /** Words of the cue ("far" in "how far"): they name the kind, not the topic, and count as no question term. */
  cueWords: Set<string>;
}

/** The kinds of fact a question asks for. */
export function answerKinds(question: string): AnswerCue {
  const lower = words(question.toLowerCase());
  const cueWords = new Set<string>();
  const kinds = new Set<AnswerKind>();
  for (let index = 0; index < lower.length; index += 1) {
    const [word, next] = [lower[index], lower[index + 1] ?? ''];
    let kind: AnswerKind | null = null;
    if (word === 'when') kind = 'time';
    else if (word === 'how' && next === 'much' && lower.some((other) => PRICE_WORDS.has(other))) kind = 'money';
    else if (word === 'how' && next === 'long') {
      // "How long is the river?" or "How long does the crossing take?": a length or a span of time.
      kinds.add('length');
      kind = 'duration';
    } else if (word === 'how' && LENGTH_AFTER_HOW.has(next)) kind = 'length';
    else if (word === 'how' && QUANTITY_AFTER_HOW.has(next)) kind = 'quantity';
    else if (word === 'how' && TIME_AFTER_HOW.has(next)) kind = 'time';
    else if ((word === 'what' || word === 'which') && AFTER_WHAT.has(next)) kind = AFTER_WHAT.get(next) ?? null;
    if (kind === null) continue;
    kinds.add(kind);
    if (word !== 'when') cueWords.add(next);
  }
  return { kinds, cueWords };
}

/** Whether a sentence holds one of the kinds of fact asked for (always, when none is asked for). */
export function holdsAnswerKind(text: string, kinds: ReadonlySet<AnswerKind>): boolean {
  if (kinds.size === 0) return true;
  return [...kinds].some((kind) => holdsKind(text, kind));
}

/** Whether a number in `lower` is followed by (or glued to, as in "4km") a unit of `units`. */
function numberWithUnit(lower: string[], units: ReadonlySet<string>): boolean {
  return lower.some((word, index) => {
    if (!isNumber(word)) return false;
    const glued = word.replace(/^[\d.,]+/, '');
    return units.has(singular(lower[index + 1] ?? '')) || (glued !== word && units.has(singular(glued)));
  });
}

function holdsKind(text: string, kind: AnswerKind): boolean {
  const lower = words(text.toLowerCase());
  if (kind === 'quantity') return lower.some(isNumber);
  if (kind === 'money') return /[£€$]/.test(text) || lower.some((word) => CURRENCY_WORDS.has(singular(word)));
  if (kind === 'length') return numberWithUnit(lower, LENGTH_UNITS);
  if (kind === 'duration') return numberWithUnit(lower, TIME_UNITS);
  // A clock time ("07:15", "9.30") is two digit words around one character; a year, an ordinal, or a number of time
  // units ("24 hours", "two weeks") count too.
  for (let index = 0; index < lower.length; index += 1) {
    const word = lower[index];
    if (TIME_WORDS.has(word) || TIME_WORDS.has(singular(word))) return true;
    if (/^(?:1[5-9]|20)\d\d$/.test(word) || /^\d{1,2}(?:st|nd|rd|th)$/.test(word)) return true;
    if (numberWithUnit([word, lower[index + 1] ?? ''], TIME_UNITS)) return true;
    if (/^\d{1,2}(?:am|pm|h)?$/.test(word) && /^\d\d(?:am|pm|h)?$/.test(lower[index + 1] ?? '') && clockSeparated(text, word, lower[index + 1])) return true;
  }
  return false;
}

/** Whether "hh" and "mm" stand as "hh:mm" or "hh.mm" somewhere in the text. */
function clockSeparated(text: string, hours: string, minutes: string): boolean {
  const lower = text.toLowerCase();
  return lower.includes(`${hours}:${minutes}`) || lower.includes(`${hours}.${minutes}`);
}
