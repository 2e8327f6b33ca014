// Content terms of a text: lower-cased words, stopwords out, lightly stemmed. The extractive answerer scores
// sentences by the question's terms they hold, and the citation check (citationSupport.ts) asks whether a cited
// passage holds an answer sentence's terms: one definition, so both read a text the same way.

export const STOPWORDS = new Set(
  (
    'a an the and or but if then else so than that this these those there here ' +
    'is are was were be been being am do does did doing done have has had having ' +
    'i me my mine we us our ours you your yours he him his she her hers it its they them their theirs ' +
    'what which who whom whose when where why how ' +
    'of in on at to for from by with about as into onto over under between through during before after ' +
    'up down out off again further once ' +
    'can could should would will shall may might must ' +
    'not no nor only own same too very just also any some all each every both few more most other such ' +
    'much many one s t d ll m re ve ' +
    'please tell explain describe know want need get'
  ).split(/\s+/),
);

function undouble(w: string): string {
  const n = w.length;
  if (n >= 3 && w[n - 1] === w[n - 2] && !'aeioulsz'.includes(w[n - 1])) return w.slice(0, -1);
  return w;
}

/** Light suffix stripping: running/runs/run → run, boxes → box, policies → policy. */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || /\d/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = w.slice(0, -3) + 'y';
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (/(?:ch|sh|x|z)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);

  if (w.endsWith('ing') && w.length > 5) w = undouble(w.slice(0, -3));
  else if (w.endsWith('ed') && w.length > 4) w = undouble(w.slice(0, -2));
  else if (w.endsWith('ly') && w.length > 5) w = w.slice(0, -2);

  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1);
  return w;
}

const WORD_RE = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;

export function words(text: string): string[] {
  return text.match(WORD_RE) ?? [];
}

/** Lower-cased, stopword-free, stemmed content terms. */
export function contentTerms(text: string): Set<string> {
  const terms = new Set<string>();
  for (const raw of words(text.toLowerCase())) {
    const w = raw.replace(/['’]s$/, '').replace(/['’]/g, '');
    if (w.length === 0 || STOPWORDS.has(w)) continue;
    terms.add(stem(w));
  }
  return terms;
}
