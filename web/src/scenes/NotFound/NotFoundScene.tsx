import { Link } from 'react-router';
import { useDocumentTitle } from '../../hooks/useDocumentTitle.ts';

export function NotFoundScene() {
  useDocumentTitle('Page not found');
  return (
    <div className="stack">
      <h1>Page not found</h1>
      <p className="muted">There is no page at this address.</p>
      <p>
        <Link to="/knowledge-bases">Go to the knowledge bases</Link>
      </p>
    </div>
  );
}
