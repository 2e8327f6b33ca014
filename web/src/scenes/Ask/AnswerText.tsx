// The answer as plain-text paragraphs; each [n] marker becomes a link to citation card n, and each [unverified] mark
// (a sentence its sources do not support) a badge saying so. Everything is React text: nothing from a model or a
// document is ever inserted as HTML.
import type { MouseEvent } from 'react';
import { parseMarkers, splitParagraphs } from '../../lib/citations.ts';

const UNVERIFIED_TITLE =
  'Not found in the sources this sentence cites (or it cites none): check it before relying on it.';

export interface AnswerTextProps {
  answer: string;
  citationCount: number;
  /** The id of citation card n is `${citationIdPrefix}${n}` (unique per turn of a conversation). */
  citationIdPrefix: string;
  onCitation: (n: number) => void;
}

export function AnswerText({ answer, citationCount, citationIdPrefix, onCitation }: AnswerTextProps) {
  const paragraphs = splitParagraphs(answer);
  if (paragraphs.length === 0) return <p className="muted">The answer is empty.</p>;
  return (
    <>
      {paragraphs.map((paragraph, p) => (
        <p key={p} className="answer__paragraph">
          {parseMarkers(paragraph, citationCount).map((piece, i) =>
            piece.kind === 'text' ? (
              piece.text
            ) : piece.kind === 'unverified' ? (
              <span key={i} className="unverified-mark" data-testid="unverified-mark" title={UNVERIFIED_TITLE}>
                unverified
              </span>
            ) : (
              <a
                key={i}
                href={`#${citationIdPrefix}${piece.n}`}
                className="citation-marker"
                data-testid="citation-marker"
                aria-label={`Citation ${piece.n}`}
                onClick={(event: MouseEvent<HTMLAnchorElement>) => {
                  // The router owns the URL; the card is scrolled to and focused by hand.
                  event.preventDefault();
                  onCitation(piece.n);
                }}
              >
                {piece.n}
              </a>
            ),
          )}
        </p>
      ))}
    </>
  );
}
