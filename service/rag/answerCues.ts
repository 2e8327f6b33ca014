// Answer-type cues for the extractive answerer: a question that asks for a quantity ("how many") wants a sentence
// holding a number; a price ("how much does it cost") a currency; a length ("how far", "how deep") a number with a
// unit of length; "how long" a length or a span of time; a time or date ("when", "what time", "which day") a time,
// a date, a day, a month, a season or a span of time ("24 hours before"). A sentence without one ranks lower and
// cannot be the answer (extractiveAnswerer.ts answerDecision). Every scan is a word loop, linear in the text.
// Over 400 lines: one cue per answer type, each a short pure function over the same word lists.

import { CURRENCY_WORDS, LENGTH_UNITS, MEASURE_UNITS, SPEED_UNITS, TIME_UNITS } from './answerUnits.ts';
import { words } from './terms.ts';

export type AnswerKind =
  'quantity' | 'amount' | 'money' | 'length' | 'duration' | 'time' | 'event' | 'clock' | 'phone' | 'speed';

/** After "how": a quantity (some more precisely, below). */
const QUANTITY_AFTER_HOW = new Set(['many', 'much', 'old', 'big', 'heavy', 'large', 'fast']);
/** After "how": a length. */
const LENGTH_AFTER_HOW = new Set(['far', 'deep', 'high', 'tall', 'wide']);
/** In a "how much" question: a price. */
const PRICE_WORDS = new Set([
  'cost',
  'costs',
  'price',
  'fee',
  'fees',
  'charge',
  'charged',
  'pay',
  'paid',
  'fare',
  'fares',
  'fine',
  'fines',
  'deposit',
]);
/** After "how": a time ("how early", "how late": a time of day). */
const TIME_AFTER_HOW = new Set(['soon', 'often']);
const CLOCK_AFTER_HOW = new Set(['early', 'late']);
/** A question naming one of these asks for a number to ring. */
const PHONE_WORDS = new Set(['phone', 'telephone', 'extension', 'fax']);
const CALL_WORDS = new Set(['call', 'ring', 'dial', 'phone']);
/** After "what" or "which". */
const AFTER_WHAT: ReadonlyMap<string, AnswerKind> = new Map([
  ['time', 'clock'],
  ['year', 'time'],
  ['date', 'time'],
  ['day', 'time'],
  ['days', 'time'],
  ['month', 'time'],
  ['hours', 'time'],
  ['age', 'quantity'],
  ['percentage', 'quantity'],
  ['temperature', 'quantity'],
  ['number', 'quantity'],
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
/** The hours of a clock, in words and digits, and the words that make one a time ("at seven", "between 6 and 9"). */
const HOURS = new Set([
  ...'one two three four five six seven eight nine ten eleven twelve'.split(' '),
  ...Array.from({ length: 24 }, (_, hour) => String(hour)),
]);
const HOUR_LEADS = new Set(['at', 'between', 'from', 'until', 'till', 'and', 'to', 'before', 'after', 'by']);
/** Words before a "when" that starts a question's clause. */
const CLAUSE_LEADS = new Set(['and', 'or', 'but', 'by', 'since', 'until']);
/** Words that open a clause naming the event something happens at ("ends when the deck runs out"). */
const EVENT_WORDS = new Set(['when', 'once', 'after', 'before', 'until']);
/** Day and month names: a question naming one asks about that day or month. */
const DATE_NAMES = new Set(
  'monday tuesday wednesday thursday friday saturday sunday january february march april june july august september october november december'.split(
    ' ',
  ),
);

const singular = (word: string) => (word.endsWith('s') ? word.slice(0, -1) : word);
const hasDigit = (word: string) => /\d/.test(word);
const isNumber = (word: string) => hasDigit(word) || NUMBER_WORDS.has(word);

export interface AnswerCue {
  /** The kinds of fact asked for ("How long …, and when …?" asks two), none when it asks for none in particular. */
  kinds: Set<AnswerKind>;
  /** Words of the cue ("far" in "how far"): they name the kind, not the topic, and count as no question term. */
  cueWords: Set<string>;
  /** What "how many" counts ("parking spaces" in "how many parking spaces does …"): the number must count it. */
  counted: string[];
  /** Days and months the question names ("open on Sundays"): the answer must name them too. */
  namedDates: Set<string>;
  /** The role a "who is the …" question asks about ("chief executive"): the answer must name it. */
  role: string[];
  /** What a "how deep is the …" question measures ("Harrow Fell reservoir"): the answer or its headings name it. */
  measured: string[];
}

/** Words that end the noun a "how many" counts, or the role of a "who is the" question. */
const PHRASE_ENDS = new Set([
  'do',
  'does',
  'did',
  'is',
  'are',
  'was',
  'were',
  'can',
  'could',
  'will',
  'would',
  'should',
  'must',
  'may',
  'might',
  'have',
  'has',
  'had',
  'of',
  'in',
  'on',
  'at',
  'for',
  'to',
  'from',
  'by',
  'with',
  'about',
  'off',
  'there',
  'that',
  'who',
  'which',
  'the',
  'a',
  'an',
]);
/** Words a "how many" phrase takes at most ("how many [customers complained] about …"). */
const COUNTED_WORDS = 3;

/** A question word, singular and lower-cased, as the checks compare it ("Sundays" → "sunday"). */
const singularWord = (word: string) => singular(word.replace(/['’]s$/, ''));

/** A word without its inflection, so that "hike" meets "hiking" and "officer" "officers". */
function wordRoot(word: string): string {
  let root = singularWord(word);
  if (root.length > 5 && root.endsWith('ing')) root = root.slice(0, -3);
  else if (root.length > 4 && root.endsWith('ed')) root = root.slice(0, -2);
  return root.endsWith('e') ? root.slice(0, -1) : root;
}

/** The kinds of fact a question asks for, and what an answer must hold besides (see AnswerCue). */
export function answerKinds(question: string): AnswerCue {
  const lower = words(question.toLowerCase());
  const cueWords = new Set<string>();
  const kinds = new Set<AnswerKind>();
  let counted: string[] = [];
  for (let index = 0; index < lower.length; index += 1) {
    const [word, next] = [lower[index], lower[index + 1] ?? ''];
    let kind: AnswerKind | null = null;
    // "When …?", "…, and when …?", "By when …?" ask for a time; "which wins when it is set twice?" does not.
    if (word === 'when' && (index === 0 || CLAUSE_LEADS.has(lower[index - 1]))) {
      kind = 'time';
      // "When does the game finish?": an event ("when the deck runs out") answers as well as a date.
      if (next === 'does' || next === 'do') kinds.add('event');
    } else if (word === 'how' && next === 'much' && lower.some((other) => PRICE_WORDS.has(other))) kind = 'money';
    // "How much water …?" asks for an amount with its unit ("18 megalitres"), not a count ("900 people").
    else if (word === 'how' && next === 'much') kind = 'amount';
    else if (word === 'how' && next === 'long') {
      // "How long is the river?" or "How long does the crossing take?": a length or a span of time.
      kinds.add('length');
      kind = 'duration';
    } else if (word === 'how' && LENGTH_AFTER_HOW.has(next)) kind = 'length';
    else if (word === 'how' && QUANTITY_AFTER_HOW.has(next)) {
      kind = 'quantity';
      if (next === 'many') counted = countedNoun(lower, index + 2);
    } else if (word === 'how' && TIME_AFTER_HOW.has(next)) kind = 'time';
    else if (word === 'how' && CLOCK_AFTER_HOW.has(next)) kind = 'clock';
    else if ((word === 'what' || word === 'which') && AFTER_WHAT.has(next)) kind = AFTER_WHAT.get(next) ?? null;
    if (kind === null) continue;
    kinds.add(kind);
    if (word !== 'when') cueWords.add(next);
  }
  if (lower.includes('speed') || (lower.includes('how') && lower[lower.indexOf('how') + 1] === 'fast'))
    kinds.add('speed');
  if (
    lower.some((word) => PHONE_WORDS.has(word)) ||
    (lower.includes('number') && lower.some((word) => CALL_WORDS.has(word)))
  ) {
    // A number to ring, not any number ("What number can customers call?").
    kinds.delete('quantity');
    kinds.add('phone');
  }
  const namedDates = new Set(lower.map(singularWord).filter((word) => DATE_NAMES.has(word)));
  return { kinds, cueWords, counted, namedDates, role: whoRole(lower), measured: measuredThing(lower) };
}

/** The words from `start` ("of the" skipped) to a phrase end: "how many [parking spaces] does". */
function countedNoun(lower: string[], start: number): string[] {
  let index = start;
  if (lower[index] === 'of') index += lower[index + 1] === 'the' ? 2 : 1;
  const phrase: string[] = [];
  for (; index < lower.length && !PHRASE_ENDS.has(lower[index]) && phrase.length < COUNTED_WORDS; index += 1) {
    phrase.push(singularWord(lower[index]));
  }
  return phrase;
}

/** Adjectives of a "how … is the X" question that measure X. */
const MEASURING_AFTER_HOW = new Set([...LENGTH_AFTER_HOW, 'long', 'big', 'old', 'heavy', 'large']);
/** Words of the thing measured, at most. */
const MEASURED_WORDS = 4;

/** "How deep is Harrow Fell reservoir?" → ["harrow", "fell", "reservoir"]; "How long does it take?" → []. */
function measuredThing(lower: string[]): string[] {
  const at = lower.indexOf('how');
  if (
    at < 0 ||
    !MEASURING_AFTER_HOW.has(lower[at + 1] ?? '') ||
    !['is', 'are', 'was', 'were'].includes(lower[at + 2] ?? '')
  )
    return [];
  let index = at + 3;
  if (['the', 'a', 'an'].includes(lower[index] ?? '')) index += 1;
  const thing: string[] = [];
  for (; index < lower.length && !PHRASE_ENDS.has(lower[index]) && thing.length < MEASURED_WORDS; index += 1)
    thing.push(lower[index]);
  return thing;
}

/** "Who is the water board's safety officer?" → ["safety", "officer"]; "Who founded …?" → []. */
function whoRole(lower: string[]): string[] {
  const at = lower.indexOf('who');
  if (at < 0 || !['is', 'was', 'are', 'were'].includes(lower[at + 1] ?? '') || lower[at + 2] !== 'the') return [];
  const role: string[] = [];
  for (let index = at + 3; index < lower.length && !PHRASE_ENDS.has(lower[index]); index += 1) {
    // A possessive names whose role it is ("the board's safety officer"): the role is what follows.
    if (/['’]s$/.test(lower[index])) role.length = 0;
    else role.push(lower[index]);
  }
  return role;
}

/**
 * Whether a sentence fits the question beyond its kind of fact: "how many X" answered by a number that counts (not
 * "5 pounds" or "aged 11" for "how many spaces"), the days and months it names named, the role it asks about named.
 * `context` is what places the sentence (its passage's title and headings): the thing measured may be named there.
 * `countedInPassages`: whether the retrieved passages name what "how many" counts (see holdsCount).
 */
export function fitsConstraints(text: string, cue: AnswerCue, context = '', countedInPassages = false): boolean {
  const lower = words(text.toLowerCase());
  const present = new Set(lower.map(singularWord));
  const roots = new Set(lower.map(wordRoot));
  if (cue.measured.length > 0) {
    // Its head noun, the phrase's last word ("reservoir" of "Harrow Fell reservoir"): the rest may be paraphrased.
    const placed = new Set([...roots, ...words(context.toLowerCase()).map(wordRoot)]);
    if (!placed.has(wordRoot(cue.measured[cue.measured.length - 1]))) return false;
  }
  for (const date of cue.namedDates) if (!present.has(date)) return false;
  if (cue.role.length > 0 && !cue.role.every((word) => roots.has(wordRoot(word)))) return false;
  if (
    cue.counted.length > 0 &&
    cue.kinds.has('quantity') &&
    !holdsCount(text, lower, new Set(cue.counted), countedInPassages)
  )
    return false;
  return true;
}

const WEAK_COUNTS = new Set(['one', 'single', 'once', 'twice', 'half']);
/** Words that make a number an age or a bound ("aged 11", "children under twelve"), not a count. */
const AGE_WORDS = new Set(['age', 'aged', 'ages', 'under', 'over']);
/** Words back from a number an age word reaches ("aged between 21 and 75"). */
const AGE_REACH = 4;

/**
 * Whether some number in the sentence counts `counted`: one followed by it ("34 vans", "48 volunteer drivers"), or,
 * when the sentence does not name it at all ("12 cars" for "how many vehicles"), one followed by no unit of measure
 * and not an age. A sentence naming it only apart from its numbers ("members under 18 travel free") does not count it.
 * Nor does one naming something else when the retrieved passages name what is counted (`countedInPassages`): the KB
 * speaks of seats, so "6 minibuses" is no count of seats. A unit counted ("how many kilometres") is counted by a
 * number with a unit of its kind ("610 km"). A number joined to the next word by a hyphen ("a one-day refresher",
 * "a 24-hour period") describes it; it counts nothing.
 */
function holdsCount(text: string, lower: string[], counted: ReadonlySet<string>, countedInPassages: boolean): boolean {
  const isCounted = (word: string | undefined) => word !== undefined && counted.has(singularWord(word));
  const named = lower.some(isCounted);
  const head = [...counted].pop() ?? '';
  if (LENGTH_UNITS.has(head) && numberWithUnit(lower, LENGTH_UNITS)) return true;
  const lowerText = text.toLowerCase();
  return lower.some((word, index) => {
    if (!isNumber(word) || word === 'free' || /^(?:1[5-9]|20)\d\d$/.test(word)) return false;
    if (lowerText.includes(`${word}-${lower[index + 1] ?? ''}`)) return false;
    // Either half of a time of day ("from 18:00") counts nothing; a decimal ("3.8 bar") is judged by its last part.
    if (clockSeparated(text, word, lower[index + 1] ?? '') || clockSeparated(text, lower[index - 1] ?? '', word))
      return false;
    if (decimalJoined(text, word, lower[index + 1] ?? '')) return false;
    if (isCounted(lower[index + 1]) || isCounted(lower[index + 2])) return true;
    // "one shop", "a single crossing": a word as often an article as a count, so it counts only what is asked.
    if (named || countedInPassages || WEAK_COUNTS.has(word)) return false;
    const glued = word.replace(/^[\d.,]+/, '');
    if (MEASURE_UNITS.has(singularWord(lower[index + 1] ?? '')) || (glued !== word && glued !== '')) return false;
    // "aged 11", "from the age of 11", "aged between 21 and 75": an age, not a count.
    return !lower.slice(Math.max(0, index - AGE_REACH), index).some((before) => AGE_WORDS.has(before));
  });
}

/**
 * The names a question is about: its words written as names past the first, a capital then lower case ("… on Quarry
 * Road?" → ["quarry", "road"]). Only a question (it ends in "?") has them: a claim to check ("ALDH1 expression is
 * associated with …") is searched for its evidence, which may spell its names otherwise; an acronym or a word with
 * a digit (DNA, B12) may be spelt out in the passage.
 */
export function namedWords(question: string): string[] {
  if (!question.trimEnd().endsWith('?')) return [];
  return words(question)
    .slice(1)
    .filter((word) => /^\p{Lu}\p{Ll}+$/u.test(word))
    .map((word) => word.toLowerCase());
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
    // The unit may follow one word on ("5 consecutive days", "2 full hours").
    const unitAt = (offset: number) => units.has(singular(lower[index + offset] ?? ''));
    return (
      unitAt(1) || (unitAt(2) && !isNumber(lower[index + 1] ?? '')) || (glued !== word && units.has(singular(glued)))
    );
  });
}

function holdsKind(text: string, kind: AnswerKind): boolean {
  const lower = words(text.toLowerCase());
  if (kind === 'quantity') return lower.some(isNumber);
  if (kind === 'amount') return numberWithUnit(lower, MEASURE_UNITS) || text.includes('%');
  if (kind === 'money') return /[£€$]/.test(text) || lower.some((word) => CURRENCY_WORDS.has(singular(word)));
  if (kind === 'length') return numberWithUnit(lower, LENGTH_UNITS);
  if (kind === 'duration') return numberWithUnit(lower, TIME_UNITS);
  if (kind === 'event') return lower.some((word) => EVENT_WORDS.has(word));
  if (kind === 'speed') return numberWithUnit(lower, SPEED_UNITS) || /\d\s*km\/h/.test(text.toLowerCase());
  if (kind === 'phone') return lower.some((word) => /^\d{4,}$/.test(word));
  if (kind === 'clock') return holdsClockTime(text, lower) || lower.some((_, index) => hourAfterLead(lower, index));
  // A clock time ("07:15", "9.30") is two digit words around one character; a year, an ordinal, or a number of time
  // units ("24 hours", "two weeks") count too.
  for (let index = 0; index < lower.length; index += 1) {
    const word = lower[index];
    if (TIME_WORDS.has(word) || TIME_WORDS.has(singular(word))) return true;
    if (/^(?:1[5-9]|20)\d\d$/.test(word) || /^\d{1,2}(?:st|nd|rd|th)$/.test(word)) return true;
    if (numberWithUnit([word, lower[index + 1] ?? ''], TIME_UNITS)) return true;
    // An hour in words or digits after "at", "between", "from", "until" … ("between six and nine", "at 7").
    if (hourAfterLead(lower, index)) return true;
    if (
      /^\d{1,2}(?:am|pm|h)?$/.test(word) &&
      /^\d\d(?:am|pm|h)?$/.test(lower[index + 1] ?? '') &&
      clockSeparated(text, word, lower[index + 1])
    )
      return true;
  }
  return false;
}

/** An hour after "at", "between", "from", "to" … ("at 7", "between six and nine"), but not "up to 18 megalitres". */
function hourAfterLead(lower: string[], index: number): boolean {
  return (
    HOURS.has(lower[index]) &&
    HOUR_LEADS.has(lower[index - 1] ?? '') &&
    !MEASURE_UNITS.has(singularWord(lower[index + 1] ?? ''))
  );
}

/** Whether "hh" and "mm" stand as "hh:mm" or "hh.mm" somewhere in the text. */
function clockSeparated(text: string, hours: string, minutes: string): boolean {
  if (!/^\d{1,2}(?:am|pm|h)?$/.test(hours) || !/^\d\d(?:am|pm|h)?$/.test(minutes)) return false;
  const lower = text.toLowerCase();
  return lower.includes(`${hours}:${minutes}`) || lower.includes(`${hours}.${minutes}`);
}

/** Whether "3" and "8" stand as "3.8" or "3,8" (one number written in two words) somewhere in the text. */
function decimalJoined(text: string, whole: string, part: string): boolean {
  if (!/^\d+$/.test(whole) || !/^\d+$/.test(part)) return false;
  return text.includes(`${whole}.${part}`) || text.includes(`${whole},${part}`);
}

/** A time of day: "07:15", "9.30", "9am", "noon", "midnight". */
function holdsClockTime(text: string, lower: string[]): boolean {
  return lower.some((word, index) => {
    if (word === 'noon' || word === 'midnight' || /^\d{1,2}(?:am|pm)$/.test(word)) return true;
    if ((lower[index + 1] === 'am' || lower[index + 1] === 'pm') && /^\d{1,2}$/.test(word)) return true;
    const minutes = lower[index + 1] ?? '';
    return /^\d{1,2}$/.test(word) && /^\d\d$/.test(minutes) && clockSeparated(text, word, minutes);
  });
}
