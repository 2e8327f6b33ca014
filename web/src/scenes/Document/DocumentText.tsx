import type { KbDocument } from '../../api/generated.ts';
import { Markdown } from '../../lib/markdown.tsx';

/** Characters of a text shown at most: a 20 MB text would stall the page; the passages cover the rest. */
const MAX_TEXT_SHOWN = 200_000;

const isMarkdown = (filename: string) => {
  const lower = filename.toLowerCase();
  return lower.endsWith('.md') || lower.endsWith('.markdown');
};

/** The document's text: markdown rendered (as elements, never HTML), plain text as it is. */
export function DocumentText({ document, content }: { document: KbDocument; content: string }) {
  const shown = content.length > MAX_TEXT_SHOWN ? content.slice(0, MAX_TEXT_SHOWN) : content;
  return (
    <>
      {shown.length < content.length ? (
        <p className="muted small">
          The first {MAX_TEXT_SHOWN.toLocaleString('en')} characters of {content.length.toLocaleString('en')}.
        </p>
      ) : null}
      <div className="document-text" data-testid="document-text">
        {isMarkdown(document.filename) ? <Markdown text={shown} /> : <p className="pre-wrap">{shown}</p>}
      </div>
    </>
  );
}
