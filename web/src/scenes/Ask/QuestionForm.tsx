// The question box: sticky at the bottom of the screen, so it stays reachable however long the thread grows. Its
// length shows near the limit, and a question over it is refused before it is sent. Ctrl/Cmd+Enter asks.
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import { QUESTION_MAX_CHARACTERS, type TurnRequest } from '../../api/generated.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { CheckboxField, TextAreaField } from '../../components/Field.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';

/** The question's length shows from here on, as it nears the limit. */
const COUNTER_FROM = QUESTION_MAX_CHARACTERS - 500;
const count = (n: number) => n.toLocaleString('en-US');

export interface QuestionFormProps {
  /** A question is being answered: the button waits. */
  busy: boolean;
  /** Its answer has started to show. */
  writing: boolean;
  /** Rejects when no answer came: the question goes back in the box (unless another was written meanwhile). */
  onAsk: (request: TurnRequest) => Promise<unknown>;
}

export function QuestionForm({ busy, writing, onAsk }: QuestionFormProps) {
  const models = useQuery({ queryKey: queryKeys.models, queryFn: api.listModels, staleTime: 5 * 60_000 });
  const [question, setQuestion] = useState('');
  const [model, setModel] = useState<string | null>(null);
  const [showChunks, setShowChunks] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const chosenModel = model ?? models.data?.default_model ?? null;

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    const query = question.trim();
    if (query === '') {
      setProblem('Write a question first.');
      return;
    }
    if (query.length > QUESTION_MAX_CHARACTERS) {
      setProblem(
        `The question is too long: ${count(query.length)} characters, and at most ${count(QUESTION_MAX_CHARACTERS)} are taken. Shorten it, then ask.`,
      );
      return;
    }
    setProblem(null);
    const request: TurnRequest = { query, include_chunks: showChunks };
    if (chosenModel) request.model = chosenModel;
    // The question now heads its turn in the thread; the box is ready for the next one.
    setQuestion('');
    onAsk(request).catch(() => setQuestion((current) => (current === '' ? query : current)));
  }

  const shortcut = /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘+Enter' : 'Ctrl+Enter';
  const length = question.trim().length;

  return (
    <form className="card form ask__form" onSubmit={submit} aria-busy={busy} data-testid="question-form">
      <TextAreaField
        label="Question"
        hint={
          length > COUNTER_FROM ? (
            <>
              {shortcut} asks.{' '}
              <span
                data-testid="question-length"
                className={length > QUESTION_MAX_CHARACTERS ? 'field__count field__count--over' : 'field__count'}
              >
                {count(length)} of {count(QUESTION_MAX_CHARACTERS)} characters
                {length > QUESTION_MAX_CHARACTERS ? `: ${count(length - QUESTION_MAX_CHARACTERS)} too many` : ''}.
              </span>
            </>
          ) : (
            `${shortcut} asks.`
          )
        }
        required
        rows={2}
        value={question}
        onChange={(event) => setQuestion(event.target.value)}
        onKeyDown={(event) => {
          // Ctrl/Cmd+Enter asks, like most chat boxes; Enter alone stays a new line.
          if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) event.currentTarget.form?.requestSubmit();
        }}
      />

      <div className="ask__controls">
        {models.isError ? (
          <p className="field__hint">The models could not be loaded: the server's default model will answer.</p>
        ) : (
          <div className="field ask__model">
            <label htmlFor="ask-model" className="field__label">
              Model
            </label>
            <select
              id="ask-model"
              className="input select"
              value={chosenModel ?? ''}
              disabled={models.isPending}
              onChange={(event) => setModel(event.target.value)}
            >
              {models.isPending ? <option value="">Loading…</option> : null}
              {models.data?.models.map((name) => (
                <option key={name} value={name}>
                  {name}
                  {name === models.data.default_model ? ' (default)' : ''}
                </option>
              ))}
            </select>
          </div>
        )}
        <CheckboxField
          label="Show retrieved chunks"
          checked={showChunks}
          onChange={(event) => setShowChunks(event.target.checked)}
        />
        <Button type="submit" variant="primary" busy={busy} className="ask__submit">
          {busy ? (writing ? 'Writing…' : 'Searching…') : 'Ask'}
        </Button>
      </div>
      {problem ? <ErrorMessage error={new Error(problem)} /> : null}
    </form>
  );
}
