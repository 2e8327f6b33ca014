// Owners add files by dropping them here or through the "Upload files" input (a real, keyboard-reachable file
// input). Text files are read with File.text() and sent as JSON, each its own document, ingested in the background
// (`Prefer: respond-async`). PDFs are uploaded as files (usePdfUploads), each with a row showing the bytes sent and
// a Cancel button. Either way the list below then shows the ingestion's progress.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type ChangeEvent, type DragEvent } from 'react';
import { api, messageOf } from '../../api/client.ts';
import type { KbDocument } from '../../api/generated.ts';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { loadLimits, useLimits } from '../../hooks/limits.ts';
import { checkFiles, MAX_DOCUMENT_BYTES, refusalMessages, UPLOAD_ACCEPT_ATTRIBUTE } from '../../lib/files.ts';
import { classNames, formatBytes, plural } from '../../lib/format.ts';
import { DuplicateRow } from './DuplicateRow.tsx';
import { findDuplicates, type Duplicate } from './duplicates.ts';
import { UploadRow } from './UploadRow.tsx';
import { usePdfUploads } from './usePdfUploads.ts';

interface UploadResult {
  uploaded: KbDocument[];
  failed: string[];
}

export interface UploadAreaProps {
  kbId: string;
  /** The knowledge base's documents as listed: a file chosen again (same name, same content) is not sent twice. */
  documents: KbDocument[];
  /** With the documents made (the scene's summary line follows their ingestion). */
  onUploaded: (added: KbDocument[]) => void;
}

export function UploadArea({ kbId, documents, onUploaded }: UploadAreaProps) {
  const inputId = useId();
  const hintId = useId();
  const [dragging, setDragging] = useState(false);
  const [refusals, setRefusals] = useState<string[]>([]);
  const [duplicates, setDuplicates] = useState<Duplicate[]>([]);
  const queryClient = useQueryClient();
  const limits = useLimits();
  const pdfs = usePdfUploads(kbId, onUploaded);

  const upload = useMutation({
    mutationFn: async (files: File[]): Promise<UploadResult> => {
      const results = await Promise.allSettled(
        files.map(async (file) => api.createDocument({ kb_id: kbId, filename: file.name, content: await file.text() })),
      );
      const result: UploadResult = { uploaded: [], failed: [] };
      results.forEach((outcome, index) => {
        const name = files[index].name;
        if (outcome.status === 'fulfilled') result.uploaded.push(outcome.value.document);
        else result.failed.push(`${name}: ${messageOf(outcome.reason)}`);
      });
      return result;
    },
    onSettled: (result) => onUploaded(result?.uploaded ?? []),
  });

  async function take(files: File[]) {
    if (files.length === 0) return;
    // Usually answered already (useLimits above); awaited so a file dropped at once is still checked.
    const check = checkFiles(files, { limits: await loadLimits(queryClient), allowPdf: true });
    setRefusals(refusalMessages(check));
    pdfs.clearAnnouncement();
    const text = await findDuplicates(check.text, documents);
    const pdf = await findDuplicates(check.pdf, documents);
    setDuplicates([...text.duplicates, ...pdf.duplicates]);
    send(text.fresh, pdf.fresh);
  }

  function send(text: File[], pdf: File[]) {
    if (!upload.isPending) upload.reset();
    if (text.length > 0) upload.mutate(text);
    if (pdf.length > 0) pdfs.add(pdf);
  }

  const replace = useMutation({
    mutationFn: async ({ file, document }: Duplicate) =>
      (await api.replaceDocument(document.id, { filename: file.name, content: await file.text() })).document,
    onSuccess: (document) => onUploaded([document]),
  });

  /** The chosen action on a duplicate: replace a text document's version, or send a PDF again as a new one. */
  function resolveDuplicate(duplicate: Duplicate, action: 'replace' | 'upload' | 'dismiss') {
    setDuplicates((current) => current.filter((each) => each !== duplicate));
    if (action === 'replace') replace.mutate(duplicate);
    if (action === 'upload') send([], [duplicate.file]);
  }

  function onChosen(event: ChangeEvent<HTMLInputElement>) {
    const files = Array.from(event.target.files ?? []);
    // Cleared so choosing the same file again (after fixing it) still fires `change`.
    event.target.value = '';
    void take(files);
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
    void take(Array.from(event.dataTransfer.files));
  }

  const result = upload.data;
  const textLimit = formatBytes(limits.data?.max_content_bytes ?? MAX_DOCUMENT_BYTES);
  const textStatus = upload.isPending ? `Uploading ${plural(upload.variables?.length ?? 0, 'file')}…` : '';
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
        <p className="dropzone__text">
          Drop text, markdown, PDF, Word (.docx), OpenDocument (.odt), PowerPoint (.pptx), Excel (.xlsx), CSV, web page
          (.html) or image (PNG, JPEG, TIFF) files here, or
        </p>
        <input
          id={inputId}
          type="file"
          multiple
          accept={UPLOAD_ACCEPT_ATTRIBUTE}
          className="file-input visually-hidden"
          aria-describedby={hintId}
          onChange={onChosen}
          disabled={upload.isPending}
        />
        <label htmlFor={inputId} className="button button--primary file-input__label">
          Upload files
        </label>
        <p id={hintId} className="field__hint">
          {limits.data
            ? `Text files up to ${textLimit}, other files up to ${formatBytes(limits.data.max_upload_bytes)}.`
            : `Text files up to ${textLimit}.`}{' '}
          Each file becomes one document.
        </p>
      </div>
      {duplicates.length > 0 ? (
        <ul className="upload-rows" aria-label="Files already here">
          {duplicates.map((duplicate) => (
            <DuplicateRow
              key={duplicate.document.id + duplicate.file.name}
              duplicate={duplicate}
              onResolve={(action) => resolveDuplicate(duplicate, action)}
            />
          ))}
        </ul>
      ) : null}
      {replace.error ? <ErrorMessage error={replace.error} /> : null}
      {refusals.map((message) => (
        <ErrorMessage key={message} error={new Error(message)} />
      ))}
      {pdfs.uploads.length > 0 ? (
        <ul className="upload-rows" aria-label="File uploads">
          {pdfs.uploads.map((pdf) => (
            <UploadRow
              key={pdf.key}
              upload={pdf}
              onCancel={() => pdfs.cancel(pdf.key)}
              onRetry={() => pdfs.retry(pdf.key)}
              onDismiss={() => pdfs.dismiss(pdf.key)}
            />
          ))}
        </ul>
      ) : null}
      <p role="status" className="status-line">
        {[textStatus, pdfs.announcement].filter(Boolean).join(' ')}
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
