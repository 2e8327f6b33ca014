// A follow-up question made standalone for retrieval, without a model: "And for children?" after "How much is an
// adult return ticket on the ferry?" searches "And for children? adult return ticket ferry". The previous turn's
// topic (the content words of what it searched, most recent first, and the titles of the documents it cited) is
// carried into a question that leans on it: one that opens with a connective ("and", "what about"…) or refers back
// with a pronoun ("it", "they", "there"…), or names nothing of its own ("How many books can I borrow?": no capital
// or digit among its new words), and brings at most three content terms the topic does not have; or brings at most
// one new term at all. A question with a topic of its own ("Who keeps bees on rooftops?": four new terms; "Where do
// Lowmoor Rovers play?": a name) is searched as it is: a change of topic is not dragged back. The counts were
// measured on the answer benchmark's dialogues (bench/answers/conversations.json, docs/quality-and-speed.md).
import { STOPWORDS, stem, words } from './terms.ts';

/** What a previous turn leaves for the next: the query it searched, and the titles of the documents it cited. */
export interface PreviousTurn {
  standaloneQuery: string;
  citedTitles: string[];
}

/**
 * Content words carried at most: the topic, not the whole history (the weight against the question's own words).
 * Measured on the benchmark's tune dialogues: 3 → 34 of 38 follow-ups with the gold fact, 6 → 35, 9 → 36.
 */
export const CARRIED_TERMS = 9;
/** New terms a question may bring and still lean on the topic, when it refers back or names nothing of its own. */
const NEW_TERMS_LEANING = 3;

const CONNECTIVES = new Set(['and', 'also', 'or', 'but', 'what', 'how', 'then', 'so']);
/** "what about X", "how about X": the whole question is the topic's. */
const ABOUT = 'about';
const REFERENCES = new Set([
  'it',
  'its',
  'they',
  'them',
  'their',
  'this',
  'that',
  'these',
  'those',
  'there',
  'he',
  'him',
  'his',
  'she',
  'her',
  'one',
  'ones',
]);

/** A word without its possessive and apostrophes, as terms.ts reads it ("what's" is "what"). */
const bare = (word: string) => word.replace(/['’]s$/, '').replace(/['’]/g, '');

/** Content words of a text in their order, each stem once: [word as written (lower case), its stem]. */
function contentWords(text: string): Array<[string, string]> {
  const seen = new Set<string>();
  const found: Array<[string, string]> = [];
  for (const written of words(text.toLowerCase())) {
    const raw = bare(written);
    if (STOPWORDS.has(raw) || raw.length < 2) continue;
    const term = stem(raw);
    if (seen.has(term)) continue;
    seen.add(term);
    found.push([raw, term]);
  }
  return found;
}

/** Whether the question leans on what came before: a connective opening, or a pronoun pointing back. */
function refersBack(question: string): boolean {
  const all = words(question.toLowerCase());
  if (all.length === 0) return false;
  if (CONNECTIVES.has(all[0]) && (all[0] !== 'what' && all[0] !== 'how' ? true : all[1] === ABOUT)) return true;
  return all.some((word) => REFERENCES.has(word));
}

/** Whether one of the question's new terms is written as a name: a capital after the first word, or a digit ("S3"). */
function namesItsOwnTopic(question: string, fresh: Set<string>): boolean {
  return words(question).some((word, index) => {
    const named = (index > 0 && word[0] !== word[0].toLowerCase()) || /\d/.test(word);
    return named && fresh.has(stem(bare(word.toLowerCase())));
  });
}

/**
 * The query retrieval searches for `question` after `previous` (null: the first turn, searched as it is). Returns the
 * question itself when it does not lean on the previous turn.
 */
export function standaloneQuery(question: string, previous: PreviousTurn | null): string {
  if (previous === null) return question;
  const topic = contentWords([previous.standaloneQuery, ...previous.citedTitles].join(' '));
  const topicTerms = new Set(topic.map(([, term]) => term));
  const own = contentWords(question);
  const fresh = new Set(own.filter(([, term]) => !topicTerms.has(term)).map(([, term]) => term));
  const leans =
    fresh.size <= 1 ||
    (fresh.size <= NEW_TERMS_LEANING && (refersBack(question) || !namesItsOwnTopic(question, fresh)));
  if (!leans) return question;
  const ownTerms = new Set(own.map(([, term]) => term));
  const carried = topic
    .filter(([, term]) => !ownTerms.has(term))
    .slice(0, CARRIED_TERMS)
    .map(([word]) => word);
  return carried.length === 0 ? question : `${question} ${carried.join(' ')}`;
}
