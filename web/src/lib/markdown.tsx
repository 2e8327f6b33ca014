// Markdown shown as React elements, never as HTML: headings, paragraphs, lists, quotes, fenced code, rules, and
// inline code, strong, emphasis and links. Raw HTML in a document is text like any other (a `<script>` shows as the
// characters it is), so nothing a document says can run or style the page, and the CSP's ban on inline script and
// style holds. Links keep only http(s) and mailto targets. A character scan, no regular expressions: linear in the
// text (each search for a closing marker resumes where the last one ended).
import { Fragment, type ReactNode } from 'react';

type Block =
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'paragraph'; text: string }
  | { kind: 'code'; text: string }
  | { kind: 'rule' }
  | { kind: 'quote'; lines: string[] }
  | { kind: 'list'; ordered: boolean; items: string[] };

function headingOf(line: string): { level: number; text: string } | null {
  let level = 0;
  while (level < line.length && line[level] === '#') level += 1;
  if (level === 0 || level > 6 || (line.length > level && line[level] !== ' ')) return null;
  return { level, text: line.slice(level).trim() };
}

function bulletItem(line: string): string | null {
  const trimmed = line.trimStart();
  if (trimmed.length >= 2 && '-*+'.includes(trimmed[0]) && trimmed[1] === ' ') return trimmed.slice(2).trim();
  return null;
}

function orderedItem(line: string): string | null {
  const trimmed = line.trimStart();
  let digits = 0;
  while (digits < trimmed.length && digits < 9 && trimmed[digits] >= '0' && trimmed[digits] <= '9') digits += 1;
  if (digits === 0 || !(trimmed[digits] === '.' || trimmed[digits] === ')') || trimmed[digits + 1] !== ' ') return null;
  return trimmed.slice(digits + 2).trim();
}

const isRule = (line: string) => ['---', '***', '___'].includes(line.replaceAll(' ', ''));
const isFence = (line: string) => line.trimStart().startsWith('```');

export function markdownBlocks(source: string): Block[] {
  const lines = source.replaceAll('\r\n', '\n').split('\n');
  const blocks: Block[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index];
    if (line.trim() === '') {
      index += 1;
    } else if (isFence(line)) {
      const code: string[] = [];
      index += 1;
      while (index < lines.length && !isFence(lines[index])) code.push(lines[index++]);
      index += 1;
      blocks.push({ kind: 'code', text: code.join('\n') });
    } else if (headingOf(line)) {
      blocks.push({ kind: 'heading', ...headingOf(line)! });
      index += 1;
    } else if (isRule(line)) {
      blocks.push({ kind: 'rule' });
      index += 1;
    } else if (line.trimStart().startsWith('>')) {
      const quoted: string[] = [];
      while (index < lines.length && lines[index].trimStart().startsWith('>'))
        quoted.push(lines[index++].trimStart().slice(1).trim());
      blocks.push({ kind: 'quote', lines: quoted });
    } else if (bulletItem(line) !== null || orderedItem(line) !== null) {
      const ordered = bulletItem(line) === null;
      const itemOf = ordered ? orderedItem : bulletItem;
      const items: string[] = [];
      while (index < lines.length && itemOf(lines[index]) !== null) items.push(itemOf(lines[index++])!);
      blocks.push({ kind: 'list', ordered, items });
    } else {
      const paragraph: string[] = [];
      while (index < lines.length && lines[index].trim() !== '' && !startsBlock(lines[index]))
        paragraph.push(lines[index++].trim());
      blocks.push({ kind: 'paragraph', text: paragraph.join(' ') });
    }
  }
  return blocks;
}

function startsBlock(line: string): boolean {
  return (
    isFence(line) ||
    headingOf(line) !== null ||
    isRule(line) ||
    line.trimStart().startsWith('>') ||
    bulletItem(line) !== null ||
    orderedItem(line) !== null
  );
}

function isWordCharacter(char: string): boolean {
  return (char >= 'a' && char <= 'z') || (char >= 'A' && char <= 'Z') || (char >= '0' && char <= '9');
}

function safeHref(target: string): string | null {
  const lower = target.trim().toLowerCase();
  return lower.startsWith('https://') || lower.startsWith('http://') || lower.startsWith('mailto:')
    ? target.trim()
    : null;
}

/** Inline markup of one block's text. */
export function inline(text: string): ReactNode[] {
  const nodes: ReactNode[] = [];
  // Where each marker next occurs from some position: searches only move forward, so the scan stays linear.
  const found = new Map<string, { from: number; at: number }>();
  const next = (marker: string, from: number) => {
    const known = found.get(marker);
    if (known && known.from <= from && (known.at === -1 || known.at >= from)) return known.at;
    const at = text.indexOf(marker, from);
    found.set(marker, { from, at });
    return at;
  };
  let plain = '';
  const flush = () => {
    if (plain) nodes.push(plain);
    plain = '';
  };
  let index = 0;
  while (index < text.length) {
    const char = text[index];
    // snake_case_words stay as they are: `_` marks up only at the start of a word.
    if (char === '_' && index > 0 && isWordCharacter(text[index - 1])) {
      plain += char;
      index += 1;
      continue;
    }
    if (char === '`') {
      const end = next('`', index + 1);
      if (end > index + 1) {
        flush();
        nodes.push(<code key={index}>{text.slice(index + 1, end)}</code>);
        index = end + 1;
        continue;
      }
    } else if ((char === '*' || char === '_') && text[index + 1] === char) {
      const end = next(char + char, index + 2);
      if (end > index + 2) {
        flush();
        nodes.push(<strong key={index}>{inline(text.slice(index + 2, end))}</strong>);
        index = end + 2;
        continue;
      }
    } else if (char === '*' || char === '_') {
      const end = next(char, index + 1);
      if (end > index + 1 && text[index + 1] !== ' ') {
        flush();
        nodes.push(<em key={index}>{inline(text.slice(index + 1, end))}</em>);
        index = end + 1;
        continue;
      }
    } else if (char === '[') {
      const close = next('](', index + 1);
      const end = close === -1 ? -1 : next(')', close + 2);
      const href = end === -1 ? null : safeHref(text.slice(close + 2, end));
      if (href !== null) {
        flush();
        nodes.push(
          <a key={index} href={href} target="_blank" rel="noopener noreferrer nofollow">
            {inline(text.slice(index + 1, close))}
          </a>,
        );
        index = end + 1;
        continue;
      }
    }
    plain += char;
    index += 1;
  }
  flush();
  return nodes;
}

/** A document's markdown; its headings start at h3 (the page has its h1 and the section's h2). */
export function Markdown({ text }: { text: string }) {
  return (
    <>
      {markdownBlocks(text).map((block, index) => {
        switch (block.kind) {
          case 'heading': {
            const Heading = `h${Math.min(6, block.level + 2)}` as 'h3';
            return <Heading key={index}>{inline(block.text)}</Heading>;
          }
          case 'paragraph':
            return <p key={index}>{inline(block.text)}</p>;
          case 'code':
            return (
              <pre key={index}>
                <code>{block.text}</code>
              </pre>
            );
          case 'rule':
            return <hr key={index} />;
          case 'quote':
            return <blockquote key={index}>{inline(block.lines.join(' '))}</blockquote>;
          case 'list': {
            const List = block.ordered ? 'ol' : 'ul';
            return (
              <List key={index}>
                {block.items.map((item, itemIndex) => (
                  <li key={itemIndex}>{inline(item)}</li>
                ))}
              </List>
            );
          }
          default:
            return <Fragment key={index} />;
        }
      })}
    </>
  );
}
