import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { TextField } from '../../components/Field.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { refetchAfterChange } from '../../hooks/refetchAfterChange.ts';

export function NewKnowledgeBaseForm() {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [created, setCreated] = useState<string | null>(null);

  const create = useMutation({
    mutationFn: api.createKnowledgeBase,
    onSuccess: ({ knowledge_base }) => {
      setCreated(knowledge_base.name);
      setName('');
      setDescription('');
      void refetchAfterChange(queryClient, queryKeys.knowledgeBases, { exact: true });
    },
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setCreated(null);
    const trimmed = description.trim();
    create.mutate({ name: name.trim(), ...(trimmed ? { description: trimmed } : {}) });
  }

  return (
    <section className="card" aria-labelledby="new-kb-heading">
      <h2 id="new-kb-heading">New knowledge base</h2>
      <form className="form form--inline" onSubmit={submit}>
        <TextField
          label="Name"
          required
          maxLength={200}
          value={name}
          onChange={(event) => setName(event.target.value)}
        />
        <TextField
          label="Description"
          maxLength={2000}
          value={description}
          onChange={(event) => setDescription(event.target.value)}
        />
        <div className="form__submit">
          <Button type="submit" variant="primary" busy={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create'}
          </Button>
        </div>
      </form>
      {create.error ? <ErrorMessage error={create.error} /> : null}
      <p role="status" className="status-line">
        {created ? `Created “${created}”.` : ''}
      </p>
    </section>
  );
}
