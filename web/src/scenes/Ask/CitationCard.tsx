import { Link } from 'react-router';
import { documentFileUrl } from '../../api/client.ts';
import type { Citation } from '../../api/generated.ts';
import { pageLabel } from '../../lib/citations.ts';
import { classNames, formatScore } from '../../lib/format.ts';

/** Card n of the answer's sources; the target of marker [n] (id `citation-n`, focusable by script). */
export function CitationCard({ citation, n, active }: { citation: Citation; n: number; active: boolean }) {
  // A PDF's passage names its pages and opens the stored file at the first (the browser's viewer reads #page=).
  // A page read by OCR says so ("p. 3, scanned"): its words may differ from the original's.
  const pageText = pageLabel(citation.page_start, citation.page_end);
  const pages = pageText !== null && citation.scanned ? `${pageText}, scanned` : pageText;
  return (
    <article
      id={`citation-${n}`}
      data-testid="citation-card"
      tabIndex={-1}
      className={classNames('citation-card', active && 'citation-card--active')}
      aria-labelledby={`citation-${n}-title`}
    >
      <header className="citation-card__header">
        <span className="citation-card__number" aria-hidden="true">
          {n}
        </span>
        <h3 id={`citation-${n}-title`} className="citation-card__title">
          <span className="visually-hidden">Citation {n}: </span>
          {citation.title || 'Untitled document'}
          {pages !== null ? ' ' : null}
          {pages !== null ? (
            <a
              href={documentFileUrl(citation.document_id, citation.page_start)}
              target="_blank"
              rel="noopener"
              className="citation-card__pages"
              data-testid="citation-page"
              title="Open the PDF at this page (new tab)"
            >
              {pages}
            </a>
          ) : null}
        </h3>
        <span className="citation-card__similarity" title="Similarity to the question (0 to 1)">
          Similarity {formatScore(citation.similarity)}
        </span>
      </header>
      <p className="citation-card__snippet">{citation.snippet}</p>
      <Link to={`/documents/${encodeURIComponent(citation.document_id)}`}>Open document</Link>
    </article>
  );
}
