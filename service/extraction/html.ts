// A saved web page → its main content as structured text, one section per heading. linkedom 0.18.15 builds the DOM
// (it runs no script and loads nothing), @mozilla/readability 0.6.0 (Firefox's Reader View) picks the article — no
// navigation, sidebars, footers, cookie banners, scripts or styles — and htmlText.ts writes it out. When Readability
// finds no article (a short page), the body is read with nav, header, footer, aside and form dropped.
import { parseHTML } from 'linkedom';
import { Readability } from '@mozilla/readability';
import { DocumentReadError } from '../errors.ts';
import { sectionsByHeading, type DocumentLimits, type ExtractedDocument } from './documents.ts';
import { htmlToMarkdown } from './htmlText.ts';

/** An article shorter than this is taken as Readability's miss (its own default threshold is 500 characters). */
const MIN_ARTICLE_CHARACTERS = 200;

/**
 * The page's bytes as text: a byte order mark, else the charset its first 1,024 bytes declare (`<meta charset>` or
 * http-equiv), else UTF-8 when the bytes are valid UTF-8, else windows-1252 (what browsers assume).
 */
export function decodeHtml(bytes: Buffer): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new TextDecoder('utf-8').decode(bytes);
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes);
  const head = bytes.subarray(0, 1024).toString('latin1').toLowerCase();
  const at = head.indexOf('charset=');
  if (at >= 0) {
    let end = at + 8;
    while (end < head.length && !'"\'; />'.includes(head[end])) end++;
    const label = head.slice(at + 8, end).replace(/^["']/, '');
    try {
      return new TextDecoder(label).decode(bytes);
    } catch {
      // an unknown label: fall through to the guess below
    }
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}

export function readHtml(bytes: Buffer, limits: Pick<DocumentLimits, 'maxHtmlElements'>): ExtractedDocument {
  const html = decodeHtml(bytes);
  const { document } = parseHTML(html);
  const title = document.querySelector('title')?.textContent?.trim() ?? '';
  let article: ReturnType<Readability['parse']>;
  try {
    article = new Readability(document, { maxElemsToParse: limits.maxHtmlElements, keepClasses: false }).parse();
  } catch (error) {
    const message = (error as Error).message;
    if (message.includes('elements'))
      throw DocumentReadError.corrupt('web page', `${message} (KBQA_DOC_MAX_HTML_ELEMENTS)`);
    throw DocumentReadError.corrupt('web page', message);
  }
  const markdown =
    article?.content && (article.textContent ?? '').trim().length > MIN_ARTICLE_CHARACTERS
      ? withTitle(article.title || title, htmlToMarkdown(article.content))
      : htmlToMarkdown(html, { dropChrome: true });
  return { sections: sectionsByHeading(markdown, title || 'Page') };
}

/** Readability demotes the page's h1 to h2 (its convention): the title goes back on top as the `#` heading. */
function withTitle(title: string, markdown: string): string {
  if (!title) return markdown;
  const demoted = `## ${title}\n`;
  return markdown.startsWith(demoted) ? `# ${title}\n${markdown.slice(demoted.length)}` : `# ${title}\n\n${markdown}`;
}
