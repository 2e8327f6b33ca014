// Owners add files by dropping them here or through the "Upload files" input (a real, keyboard-reachable file
// input). Each accepted file is read with File.text() and sent as its own document; ingestion runs in the
// background (`Prefer: respond-async`) and the list below shows its progress.
import { useMutation } from '@tanstack/react-query';
import { useId, useState, type ChangeEvent, type DragEvent } from 'react';
import { api, messageOf } from '../../api/client.ts';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { ACCEPT_ATTRIBUTE, checkFiles, refusalMessages } from '../../lib/files.ts';
import { classNames, plural } from '../../lib/format.ts';

interface UploadResult {
  uploaded: string[];
  failed: string[];
}

export function UploadArea({ kbId, onUploaded }: { kbId: string; onUploaded: () => void }) {
  const inputId = useId();
  const hintId = useId();
  const [dragging, setDragging] = useState(false);
  const [refusals, setRefusals] = useState<string[]>([]);

  const upload = useMutation({
    mutationFn: async (files: File[]): Promise<UploadResult> => {
      const results = await Promise.allSettled(
        files.map(async (file) => api.createDocument({ kb_id: kbId, filename: file.name, content: await file.text() })),
      );
      const result: UploadResult = { uploaded: [], failed: [] };
      results.forEach((outcome, index) => {
        const name = files[index].name;
        if (outcome.status === 'fulfilled') result.uploaded.push(name);
        else result.failed.push(`${name}: ${messageOf(outcome.reason)}`);
      });
      return result;
    },
    onSettled: onUploaded,
  });

  function take(files: File[]) {
    if (files.length === 0) return;
    const check = checkFiles(files);
    setRefusals(refusalMessages(check));
    upload.reset();
    if (check.accepted.length > 0) upload.mutate(check.accepted);
  }

  function onChosen(event: ChangeEvent<HTMLInputElement>) {
    const files = Array.from(event.target.files ?? []);
    // Cleared so choosing the same file again (after fixing it) still fires `change`.
    event.target.value = '';
    take(files);
  }

  function onDragOver(event: DragEvent<HTMLDivElement>) {
    if (!Array.from(event.dataTransfer.types).includes('Files')) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
    setDragging(true);
  }

  function onDrop(event: DragEvent<HTMLDivElement>) {
    event.preventDefault();
    setDragging(false);
    take(Array.from(event.dataTransfer.files));
  }

  const result = upload.data;
  return (
    <section className="card" aria-labelledby={`${inputId}-heading`}>
      <h2 id={`${inputId}-heading`}>Add files</h2>
      <div
        className={classNames('dropzone', dragging && 'dropzone--active')}
        data-testid="dropzone"
        onDragEnter={onDragOver}
        onDragOver={onDragOver}
        onDragLeave={(event) => {
          if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setDragging(false);
        }}
        onDrop={onDrop}
      >
        <p className="dropzone__text">Drop .txt, .text, .md or .markdown files here, or</p>
        <input
          id={inputId}
          type="file"
          multiple
          accept={ACCEPT_ATTRIBUTE}
          className="file-input visually-hidden"
          aria-describedby={hintId}
          onChange={onChosen}
          disabled={upload.isPending}
        />
        <label htmlFor={inputId} className="button button--primary file-input__label">
          Upload files
        </label>
        <p id={hintId} className="field__hint">
          Up to 5 MiB each. Each file becomes one document.
        </p>
      </div>
      {refusals.map((message) => (
        <ErrorMessage key={message} error={new Error(message)} />
      ))}
      <p role="status" className="status-line">
        {upload.isPending
          ? `Uploading ${plural(upload.variables?.length ?? 0, 'file')}…`
          : result && result.uploaded.length > 0
            ? `Uploaded ${result.uploaded.join(', ')}: ingestion has started.`
            : ''}
      </p>
      {result && result.failed.length > 0 ? (
        <div role="alert" className="alert alert--error">
          <p>Some files could not be uploaded:</p>
          <ul>
            {result.failed.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {upload.error ? <ErrorMessage error={upload.error} /> : null}
    </section>
  );
}
