// The citation check of an OpenAI-compatible model's answer, as it is written. The answer (its markers already
// renumbered by CitationMapper) is cut into sentences by the one segmentation (text/sentences.ts: a line break ends a
// unit, `sentenceBreaks` ends a sentence inside a line), each sentence is checked against the passages it cites
// (citationSupport.ts), and a sentence that cites nothing, or whose passages do not support it, gets UNVERIFIED_MARK
// at its end: after its last marker when it ends in markers, else before its end punctuation. Nothing is dropped.
//
// Streaming: text goes out as it arrives, except the run at the sentence's end where the mark may go (blanks, end
// punctuation, closing quotes and brackets, markers), held until the next character says whether the sentence ended
// there. A marker's citation goes out with the text of the marker. Each character is handled once; the segmenter is
// asked only where a sentence may end (end punctuation, a blank, then no lowercase letter), over the sentence so far.
// Markers right after a sentence's end punctuation ("… in 1987. [1] The …") belong to that sentence.
//
// Not checked, so never marked: a markdown heading line (`#`), a unit with no letter or digit, and a lead-in that
// ends its line with ':' and holds no marker and no number ("Here is what the passages say:").
import { isBlankChar, isDigit, isLetter, isLowercaseLetter } from '../text/characters.ts';
import { sentenceBreaks } from '../text/sentences.ts';
import { checkSupport, numbersOf, type PassageFacts } from './citationSupport.ts';

/** What an unverified sentence carries at its end, in the answer text itself (docs/api.md). */
export const UNVERIFIED_MARK = '[unverified]';

/** How many sentences of an answer were checked, and how they came out (the extractive model's are not checked). */
export interface SentenceCounts {
  supported: number;
  /** Cited, but the cited passages do not hold its numbers or most of its terms: marked. */
  unsupported: number;
  /** Citing no passage (a marker naming none was dropped): marked. */
  uncited: number;
}

const isTerminator = (char: string) => char === '.' || char === '!' || char === '?' || char === '…';
const isCloser = (char: string) =>
  char === '"' || char === "'" || char === '”' || char === '’' || char === ')' || char === ']';
/** A list item's marker at a line's start ("-", "•", "2.", "b)"): not part of its sentence (the segmenter drops it too). */
const isListMarker = (text: string) =>
  (text.length === 1 && '-*+•·‣◦'.includes(text)) ||
  (text.length >= 2 &&
    text.length <= 4 &&
    (text.endsWith('.') || text.endsWith(')')) &&
    ([...text.slice(0, -1)].every(isDigit) || (text.length === 2 && isLetter(text[0]))));

const MAX_MARKER_DIGITS = 3;

/** A sentence as compared with an unchecked one: lower-cased, without its end punctuation and blanks. */
function comparable(sentence: string): string {
  let end = sentence.length;
  while (end > 0 && (isTerminator(sentence[end - 1]) || isBlankChar(sentence[end - 1]))) end -= 1;
  return sentence.slice(0, end).trim().toLowerCase();
}

export class SentenceChecker<C> {
  readonly #factsOf: (k: number) => PassageFacts | null;
  readonly #unchecked: Set<string>;
  readonly counts: SentenceCounts = { supported: 0, unsupported: 0, uncited: 0 };
  /** The current sentence without its markers (and the blanks before them): what is segmented and checked. */
  #plain: string[] = [];
  /** The renumbered markers of the current sentence. */
  #markers: number[] = [];
  /** Output held back: the run at the current sentence's end where the mark may go. */
  #held = '';
  /** Where the last marker in `#held` ends (-1: none), and the markers held (their citations go out with them). */
  #heldMarkerEnd = -1;
  #heldMarkers: number[] = [];
  /** Whether `#held` has end punctuation, and a blank after it: only then may the next character start a sentence. */
  #heldTerminator = false;
  #heldBlankAfterTerminator = false;
  /** A marker being read: '[' and its digits so far ('' when none). */
  #marker = '';
  /** The line so far has had no character but blanks; then whether its first word may be a list marker. */
  #lineStart = true;
  #lineFirstWord = true;
  #headingLine = false;
  /** Citations received and not yet sent (their markers are held), and how many have been sent. */
  #pendingCitations: C[] = [];
  #sentCitations = 0;
  #out: string[] = [];
  #outCitations: C[] = [];

  /**
   * `factsOf(k)`: what the passage cited as [k] holds, or null when [k] names none. `unchecked`: sentences that state
   * nothing to check (the refusal the prompt asks for), compared without case and end punctuation.
   */
  constructor(factsOf: (k: number) => PassageFacts | null, unchecked: string[] = []) {
    this.#factsOf = factsOf;
    this.#unchecked = new Set(unchecked.map(comparable));
  }

  /** The next piece of (marker-mapped) answer and the citations it introduced; returns what can go out now. */
  push(text: string, citations: C[]): { text: string; citations: C[] } {
    this.#pendingCitations.push(...citations);
    for (const char of text) this.#read(char);
    return this.#flushOut();
  }

  /** The answer is complete: its last sentence is checked, everything held goes out. */
  end(): { text: string; citations: C[] } {
    this.#failMarker();
    this.#finishSentence();
    this.#release(Number.POSITIVE_INFINITY);
    return this.#flushOut();
  }

  #read(char: string): void {
    if (this.#marker !== '') {
      if (isDigit(char) && this.#marker.length <= MAX_MARKER_DIGITS) {
        this.#marker += char;
        return;
      }
      if (char === ']' && this.#marker.length > 1) {
        this.#closeMarker();
        return;
      }
      this.#failMarker();
    }
    if (char === '[') this.#marker = '[';
    else if (char === '\n') {
      this.#finishSentence();
      this.#out.push(char);
      this.#lineStart = true;
      this.#lineFirstWord = true;
      this.#headingLine = false;
    } else if (isBlankChar(char) || isTerminator(char) || isCloser(char)) this.#tail(char);
    else this.#body(char);
  }

  #closeMarker(): void {
    const k = Number(this.#marker.slice(1));
    // The blanks before a marker are not part of the sentence's text ("in 1987 [1]." reads "in 1987.").
    while (this.#plain.length > 0 && isBlankChar(this.#plain[this.#plain.length - 1])) this.#plain.pop();
    this.#held += `${this.#marker}]`;
    this.#heldMarkerEnd = this.#held.length;
    this.#heldMarkers.push(k);
    this.#markers.push(k);
    this.#marker = '';
  }

  /** What looked like a marker is text after all ("[note]", "[1234]"): read as such. */
  #failMarker(): void {
    const text = this.#marker;
    this.#marker = '';
    for (const char of text) this.#body(char);
  }

  /** A character that may end a sentence, or follow its end: held. */
  #tail(char: string): void {
    // A line's indentation goes out at once, unless something before it is held (a marker opening the line).
    if (this.#lineStart && isBlankChar(char) && this.#held === '') {
      this.#out.push(char);
      return;
    }
    if (isBlankChar(char) && this.#lineFirstWord && !this.#lineStart) {
      this.#lineFirstWord = false;
      // "2. The lamp …": the item's number is no sentence of its own, and no figure of it.
      if (isListMarker(this.#plain.join(''))) {
        this.#emitHeld();
        this.#plain = [];
        this.#out.push(char);
        return;
      }
    }
    if (isTerminator(char)) this.#heldTerminator = true;
    else if (isBlankChar(char) && this.#heldTerminator) this.#heldBlankAfterTerminator = true;
    this.#held += char;
    this.#plain.push(char);
  }

  /** A character of text: the held run either ended the sentence (checked, maybe marked) or goes out as it is. */
  #body(char: string): void {
    if (this.#lineStart) {
      this.#lineStart = false;
      this.#headingLine = char === '#';
    }
    if (
      this.#heldBlankAfterTerminator &&
      !isLowercaseLetter(char) &&
      sentenceBreaks(`${this.#plain.join('')}${char}`).length > 0
    ) {
      this.#finishSentence();
    } else this.#emitHeld();
    this.#plain.push(char);
    this.#out.push(char);
  }

  /** The current sentence is complete: checked, its held run out with the mark where it belongs. */
  #finishSentence(): void {
    const text = this.#plain.join('').trim();
    const verdict = this.#verdict(text);
    if (verdict !== null) this.counts[verdict] += 1;
    if (verdict === 'unsupported' || verdict === 'uncited') this.#mark();
    this.#emitHeld();
    this.#plain = [];
    this.#markers = [];
  }

  #verdict(text: string): keyof SentenceCounts | null {
    if (this.#headingLine || ![...text].some((char) => isLetter(char) || isDigit(char))) return null;
    if (this.#markers.length === 0) {
      if (this.#unchecked.has(comparable(text))) return null;
      return text.endsWith(':') && numbersOf(text).size === 0 ? null : 'uncited';
    }
    const cited = [...new Set(this.#markers)].map(this.#factsOf).filter((facts) => facts !== null);
    if (cited.length === 0) return 'uncited';
    return checkSupport(text, cited).supported ? 'supported' : 'unsupported';
  }

  /**
   * UNVERIFIED_MARK into the held run: after its last marker, else before the end punctuation it ends with ("(max.)."
   * → "(max.) [unverified]."), else at its end (after a closing quote: 'said "no." [unverified]').
   */
  #mark(): void {
    const held = this.#held;
    let at = this.#heldMarkerEnd;
    let mark = UNVERIFIED_MARK;
    if (at < 0) {
      at = held.trimEnd().length;
      while (at > 0 && isTerminator(held[at - 1])) at -= 1;
      // Before the held run is the sentence's last word (text never waits there), so a blank goes first.
      if (at === 0 || !isBlankChar(held[at - 1])) mark = ` ${UNVERIFIED_MARK}`;
    }
    this.#held = held.slice(0, at) + mark + held.slice(at);
  }

  #emitHeld(): void {
    if (this.#held !== '') this.#out.push(this.#held);
    for (const k of this.#heldMarkers) this.#release(k);
    this.#held = '';
    this.#heldMarkerEnd = -1;
    this.#heldMarkers = [];
    this.#heldTerminator = false;
    this.#heldBlankAfterTerminator = false;
  }

  /** Sends the citations up to [k] (markers are numbered in order of first use: [k] first written is citation k). */
  #release(k: number): void {
    while (this.#sentCitations < k && this.#pendingCitations.length > 0) {
      this.#outCitations.push(this.#pendingCitations.shift() as C);
      this.#sentCitations += 1;
    }
  }

  #flushOut(): { text: string; citations: C[] } {
    const delta = { text: this.#out.join(''), citations: this.#outCitations };
    this.#out = [];
    this.#outCitations = [];
    return delta;
  }
}
