import { documentFileUrl } from '../../api/client.ts';
import type { RetrievedChunk } from '../../api/generated.ts';
import { EmptyState } from '../../components/EmptyState.tsx';
import { pageLabel } from '../../lib/citations.ts';
import { formatScore } from '../../lib/format.ts';

function headingPath(path: RetrievedChunk['heading_path']): string {
  if (Array.isArray(path)) return path.length > 0 ? path.join(' › ') : '—';
  return path || '—';
}

/** A PDF chunk's pages, opening the stored file at the first; a dash for text documents. */
function ChunkPages({ chunk }: { chunk: RetrievedChunk }) {
  const pages = pageLabel(chunk.page_start, chunk.page_end);
  if (pages === null) return <>—</>;
  return (
    <a href={documentFileUrl(chunk.document_id, chunk.page_start)} target="_blank" rel="noopener">
      {pages}
    </a>
  );
}

/** What retrieval returned, in fused order: both ranks, the fused score and the similarity, text collapsed. */
export function ChunksTable({ chunks, headingId }: { chunks: RetrievedChunk[]; headingId: string }) {
  return (
    <section className="turn__chunks" aria-labelledby={headingId}>
      <h3 id={headingId}>Retrieved chunks</h3>
      {chunks.length === 0 ? (
        <EmptyState title="No chunks were retrieved." />
      ) : (
        <div className="table-wrap">
          <table className="table table--stack table--chunks">
            <thead>
              <tr>
                <th scope="col" className="numeric">
                  Rank
                </th>
                <th scope="col">Title</th>
                <th scope="col">Heading path</th>
                <th scope="col">Pages</th>
                <th scope="col" className="numeric">
                  BM25 rank
                </th>
                <th scope="col" className="numeric">
                  Vector rank
                </th>
                <th scope="col" className="numeric">
                  Score
                </th>
                <th scope="col" className="numeric">
                  Similarity
                </th>
                <th scope="col">Text</th>
              </tr>
            </thead>
            <tbody>
              {chunks.map((chunk, index) => (
                <tr key={chunk.id} data-testid="chunk-row">
                  <td data-label="Rank" className="numeric">
                    {index + 1}
                  </td>
                  <td data-label="Title" className="break-words">
                    {chunk.title || chunk.filename}
                  </td>
                  <td data-label="Heading path" className="break-words">
                    {headingPath(chunk.heading_path)}
                  </td>
                  <td data-label="Pages" className="nowrap" data-testid="chunk-pages">
                    <ChunkPages chunk={chunk} />
                  </td>
                  <td data-label="BM25 rank" className="numeric">
                    {chunk.bm25_rank ?? '—'}
                  </td>
                  <td data-label="Vector rank" className="numeric">
                    {chunk.vector_rank ?? '—'}
                  </td>
                  <td data-label="Score" className="numeric">
                    {formatScore(chunk.score, 4)}
                  </td>
                  <td data-label="Similarity" className="numeric">
                    {formatScore(chunk.similarity)}
                  </td>
                  <td data-label="Text" className="chunk-text">
                    <details>
                      <summary>Show text</summary>
                      <p className="pre-wrap">{chunk.text}</p>
                    </details>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
