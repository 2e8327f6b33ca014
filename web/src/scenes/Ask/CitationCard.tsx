import { Link } from 'react-router';
import { documentFileUrl } from '../../api/client.ts';
import type { Citation, StoredCitation } from '../../api/generated.ts';
import { pageLabel } from '../../lib/citations.ts';
import { classNames, formatScore } from '../../lib/format.ts';

export interface CitationCardProps {
  citation: Citation | StoredCitation;
  n: number;
  /** The card's id: the target of marker [n] (focusable by script), unique per turn of a conversation. */
  id: string;
  active: boolean;
}

/** Card n of an answer's sources. A stored answer's source from a KB no longer reachable has no snippet. */
export function CitationCard({ citation, n, id, active }: CitationCardProps) {
  // A PDF's passage names its pages and opens the stored file at the first (the browser's viewer reads #page=). A
  // deck's names its slide and opens the document page there; another file's names its section.
  const location = ('location' in citation ? citation.location : null) ?? null;
  const slide = location?.startsWith('slide ') && citation.page_start !== null ? citation.page_start : null;
  // A page read by OCR says so ("p. 3, scanned"): its words may differ from the original's.
  const pageText = slide === null ? pageLabel(citation.page_start, citation.page_end) : null;
  const scanned = 'scanned' in citation && citation.scanned === true;
  const pages = pageText !== null && scanned ? `${pageText}, scanned` : pageText;
  return (
    <article
      id={id}
      data-testid="citation-card"
      tabIndex={-1}
      className={classNames('citation-card', active && 'citation-card--active')}
      aria-labelledby={`${id}-title`}
    >
      <header className="citation-card__header">
        <span className="citation-card__number" aria-hidden="true">
          {n}
        </span>
        <h4 id={`${id}-title`} className="citation-card__title">
          <span className="visually-hidden">Citation {n}: </span>
          {citation.title || 'Untitled document'}
          {pages !== null || location !== null ? ' ' : null}
          {slide !== null ? (
            <Link
              to={`/documents/${encodeURIComponent(citation.document_id)}#slide-${slide}`}
              className="citation-card__pages"
              data-testid="citation-slide"
            >
              {location}
            </Link>
          ) : location !== null && pages === null ? (
            <span className="citation-card__pages" data-testid="citation-section">
              {location}
            </span>
          ) : null}
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
        </h4>
        <span className="citation-card__similarity" title="Similarity to the question (0 to 1)">
          Similarity {formatScore(citation.similarity)}
        </span>
      </header>
      {citation.snippet === null ? (
        <p className="citation-card__snippet muted">
          Source no longer available: you cannot reach its knowledge base now.
        </p>
      ) : (
        <p className="citation-card__snippet">{citation.snippet}</p>
      )}
      <Link to={`/documents/${encodeURIComponent(citation.document_id)}`}>Open document</Link>
    </article>
  );
}
