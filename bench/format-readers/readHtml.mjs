// HTML → main content as structured text: linkedom 0.18.15 builds the DOM, @mozilla/readability 0.6.0 picks the
// article (drops navigation, sidebars, footers, scripts, styles); htmlToText writes headings, lists and tables
// as rows with header names. When readability finds no article (a short page), the whole body is read with
// nav/header/footer/aside/script/style/form dropped. linkedom runs no script and fetches nothing.
import { parseHTML } from 'linkedom';
import { Readability } from '@mozilla/readability';
import { htmlToText } from './htmlToText.mjs';

export function htmlMainText(html, { maxElems = 200_000 } = {}) {
  const { document } = parseHTML(html);
  const title = document.querySelector('title')?.textContent?.trim() ?? '';
  const article = new Readability(document, { maxElemsToParse: maxElems, keepClasses: false }).parse();
  if (article?.content && article.textContent.trim().length > 200)
    return { title: article.title || title, text: htmlToText(article.content), via: 'readability' };
  return { title, text: htmlToText(html, { skipChrome: true }), via: 'body' };
}
