import { useEffect } from 'react';
import { documentFileUrl } from '../../api/client.ts';
import type { DocumentPassage } from '../../api/generated.ts';
import { pageLabel } from '../../lib/citations.ts';
import type { DocumentKind } from '../../lib/fileKinds.ts';
import { passageBlocks } from '../../lib/rowTables.ts';

/** A passage's text as structured text: a run of a table's rows as that table, the rest as written. */
function PassageText({ text }: { text: string }) {
  return (
    <>
      {passageBlocks(text).map((block, index) =>
        block.kind === 'text' ? (
          <p key={index} className="pre-wrap passage__text">
            {block.text}
          </p>
        ) : (
          <div key={index} className="table-wrap">
            <table className="passage__table" data-testid="passage-table">
              <thead>
                <tr>
                  {block.header.map((name) => (
                    <th key={name} scope="col">
                      {name}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {block.rows.map((row, rowIndex) => (
                  <tr key={rowIndex}>
                    {row.map((cell, cellIndex) => (
                      <td key={cellIndex}>{cell}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ),
      )}
    </>
  );
}

/**
 * The passages retrieval serves, in reading order: their heading path, for a PDF their pages (opening it there), for
 * a deck their slide (the first passage of slide n is the target of #slide-n: a citation opens it here).
 */
export function DocumentPassages({
  documentId,
  kind,
  passages,
}: {
  documentId: string;
  kind: DocumentKind;
  passages: DocumentPassage[];
}) {
  const slidesSeen = new Set<number>();
  // A citation opened this page at a slide (#slide-n): show that passage once the passages are there.
  useEffect(() => {
    const target = window.location.hash.startsWith('#slide-')
      ? document.getElementById(window.location.hash.slice(1))
      : null;
    target?.scrollIntoView({ block: 'start' });
    target?.classList.add('passage--target');
  }, [passages]);
  return (
    <ol className="passages">
      {passages.map((passage) => {
        const slide = kind === 'pptx' ? passage.page_start : null;
        const pages = slide === null ? pageLabel(passage.page_start, passage.page_end) : null;
        const anchor = slide !== null && !slidesSeen.has(slide) ? `slide-${slide}` : undefined;
        if (slide !== null) slidesSeen.add(slide);
        return (
          <li key={passage.chunk_index} id={anchor} className="passage" data-testid="passage">
            <p className="passage__where small muted">
              <span>#{passage.chunk_index + 1}</span>
              {passage.heading_path.length > 0 ? (
                <span className="break-words">{passage.heading_path.join(' › ')}</span>
              ) : null}
              {slide !== null ? <span data-testid="passage-slide">slide {slide}</span> : null}
              {pages !== null ? (
                <a href={documentFileUrl(documentId, passage.page_start)} target="_blank" rel="noopener">
                  {pages}
                </a>
              ) : null}
            </p>
            <PassageText text={passage.text} />
          </li>
        );
      })}
    </ol>
  );
}
