import { documentFileUrl } from '../../api/client.ts';
import type { DocumentPassage } from '../../api/generated.ts';
import { pageLabel } from '../../lib/citations.ts';

/** The passages retrieval serves, in reading order: their heading path, and for a PDF their pages (opening it there). */
export function DocumentPassages({ documentId, passages }: { documentId: string; passages: DocumentPassage[] }) {
  return (
    <ol className="passages">
      {passages.map((passage) => {
        const pages = pageLabel(passage.page_start, passage.page_end);
        return (
          <li key={passage.chunk_index} className="passage" data-testid="passage">
            <p className="passage__where small muted">
              <span>#{passage.chunk_index + 1}</span>
              {passage.heading_path.length > 0 ? (
                <span className="break-words">{passage.heading_path.join(' › ')}</span>
              ) : null}
              {pages !== null ? (
                <a href={documentFileUrl(documentId, passage.page_start)} target="_blank" rel="noopener">
                  {pages}
                </a>
              ) : null}
            </p>
            <p className="pre-wrap passage__text">{passage.text}</p>
          </li>
        );
      })}
    </ol>
  );
}
