import { useMutation } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import type { KbDocument, NewDocument } from '../../api/generated.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { TextAreaField, TextField } from '../../components/Field.tsx';
import { useLimits } from '../../hooks/limits.ts';
import { hasTextExtension, MAX_DOCUMENT_BYTES } from '../../lib/files.ts';
import { formatSizeOverLimit } from '../../lib/format.ts';

const DEFAULT_FILENAME = 'pasted-text.md';

/** Text pasted in becomes a document like an uploaded file: the same POST, under the filename given here. */
/** `onAdded`: with the new document (the scene's summary line follows its ingestion). */
export function PasteTextForm({ kbId, onAdded }: { kbId: string; onAdded: (added: KbDocument[]) => void }) {
  const headingId = useId();
  const [filename, setFilename] = useState(DEFAULT_FILENAME);
  const [content, setContent] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const limits = useLimits();
  const maxBytes = limits.data?.max_content_bytes ?? MAX_DOCUMENT_BYTES;

  const add = useMutation({
    mutationFn: (body: NewDocument) => api.createDocument(body, 'paste'),
    onSuccess: ({ document }) => {
      setContent('');
      setFilename(DEFAULT_FILENAME);
      onAdded([document]);
    },
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const name = filename.trim();
    const bytes = new TextEncoder().encode(content).length;
    if (!hasTextExtension(name)) {
      setProblem(`“${name || '(empty)'}” must end in .txt, .text, .md or .markdown.`);
    } else if (content.trim() === '') {
      setProblem('Paste some text first.');
    } else if (bytes > maxBytes) {
      const sizes = formatSizeOverLimit(bytes, maxBytes);
      setProblem(`The text is ${sizes.size}; the limit is ${sizes.limit}.`);
    } else {
      setProblem(null);
      add.mutate({ kb_id: kbId, filename: name, content });
    }
  }

  return (
    <section className="card" aria-labelledby={headingId}>
      <h2 id={headingId}>Paste text</h2>
      <form className="form" onSubmit={submit}>
        <TextField label="Filename" required value={filename} onChange={(event) => setFilename(event.target.value)} />
        <TextAreaField
          label="Text"
          required
          rows={6}
          value={content}
          onChange={(event) => setContent(event.target.value)}
        />
        {problem ? <ErrorMessage error={new Error(problem)} /> : null}
        {add.error && !problem ? <ErrorMessage error={add.error} /> : null}
        <div>
          <Button type="submit" variant="primary" busy={add.isPending}>
            {add.isPending ? 'Adding…' : 'Add text'}
          </Button>
        </div>
      </form>
    </section>
  );
}
