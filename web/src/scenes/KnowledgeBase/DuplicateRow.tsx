import { useId } from 'react';
import { Button } from '../../components/Button.tsx';
import { isFileKind } from '../../lib/fileKinds.ts';
import type { Duplicate } from './duplicates.ts';

/**
 * A file the knowledge base already holds (same name, same content): not sent. A text document can be replaced by
 * it (ingested again as a new version); a PDF cannot be replaced, so it can be uploaded again as another document.
 */
export function DuplicateRow({
  duplicate,
  onResolve,
}: {
  duplicate: Duplicate;
  onResolve: (action: 'replace' | 'upload' | 'dismiss') => void;
}) {
  const textId = useId();
  const isFile = isFileKind(duplicate.document.kind);
  return (
    <li className="upload-row" data-testid="duplicate-row" data-filename={duplicate.file.name}>
      <p id={textId} className="upload-row__text break-words">
        <strong>{duplicate.file.name}</strong> is already in this knowledge base, with the same content: it was not
        uploaded again.
      </p>
      <div className="actions">
        {isFile ? (
          <Button small onClick={() => onResolve('upload')} aria-describedby={textId}>
            Upload a second copy
          </Button>
        ) : (
          <Button small variant="primary" onClick={() => onResolve('replace')} aria-describedby={textId}>
            Replace
          </Button>
        )}
        <Button small onClick={() => onResolve('dismiss')} aria-describedby={textId}>
          Dismiss
        </Button>
      </div>
    </li>
  );
}
