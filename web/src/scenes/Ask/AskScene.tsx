// Ask a question of some or all reachable knowledge bases; the answer cites its sources with [n] markers. The answer
// streams in as it is written, is brought into view and focused when it starts (a phone's keyboard and form would
// otherwise leave it below the fold), and is announced once complete by a polite live region.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api } from '../../api/client.ts';
import { QUESTION_MAX_CHARACTERS, type Citation, type QueryRequest } from '../../api/generated.ts';
import { Button } from '../../components/Button.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { CheckboxField, TextAreaField } from '../../components/Field.tsx';
import { Loading } from '../../components/Loading.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { useDocumentTitle } from '../../hooks/useDocumentTitle.ts';
import { plural } from '../../lib/format.ts';
import { AnswerText } from './AnswerText.tsx';
import { ChunksTable } from './ChunksTable.tsx';
import { CitationCard } from './CitationCard.tsx';

/** The question's length shows from here on, as it nears the limit. */
const COUNTER_FROM = QUESTION_MAX_CHARACTERS - 500;
const count = (n: number) => n.toLocaleString('en-US');

export function AskScene() {
  useDocumentTitle('Ask');
  const [searchParams] = useSearchParams();
  const knowledgeBases = useQuery({ queryKey: queryKeys.knowledgeBases, queryFn: api.listKnowledgeBases });
  const models = useQuery({ queryKey: queryKeys.models, queryFn: api.listModels, staleTime: 5 * 60_000 });

  const [question, setQuestion] = useState('');
  const [selected, setSelected] = useState<string[]>(() => searchParams.getAll('kb'));
  const [model, setModel] = useState<string | null>(null);
  const [showChunks, setShowChunks] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [activeCitation, setActiveCitation] = useState<number | null>(null);

  /** The answer so far while it streams. */
  const [partial, setPartial] = useState<{ text: string; citations: Citation[] } | null>(null);
  const ask = useMutation({
    mutationFn: (request: QueryRequest) =>
      api.askStreaming(request, {
        onDelta: (text, citations) =>
          setPartial((current) => ({
            text: (current?.text ?? '') + text,
            citations: [...(current?.citations ?? []), ...citations],
          })),
      }),
    onMutate: () => {
      setActiveCitation(null);
      setPartial(null);
    },
  });
  const chosenModel = model ?? models.data?.default_model ?? null;
  const answerHeading = useRef<HTMLHeadingElement>(null);

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
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
    const request: QueryRequest = { query, include_chunks: showChunks };
    if (selected.length > 0) request.knowledge_base_ids = selected;
    if (chosenModel) request.model = chosenModel;
    ask.mutate(request);
  }

  function toggle(kbId: string, checked: boolean) {
    setSelected((current) => (checked ? [...current, kbId] : current.filter((id) => id !== kbId)));
  }

  const showCitation = useCallback((n: number) => {
    setActiveCitation(n);
    const card = document.getElementById(`citation-${n}`);
    if (!card) return;
    const smooth = !window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    card.scrollIntoView({ behavior: smooth ? 'smooth' : 'auto', block: 'center' });
    card.focus({ preventScroll: true });
  }, []);

  const result = ask.isPending ? undefined : ask.data;
  const answerText = result?.answer ?? (ask.isPending ? partial?.text : undefined);
  const answerShown = answerText !== undefined && answerText !== '';
  // Once per question, when its answer first shows: into view and focused (Tab then reaches its citations).
  useEffect(() => {
    if (!answerShown) return;
    const heading = answerHeading.current;
    if (!heading) return;
    const smooth = !window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    heading.scrollIntoView({ behavior: smooth ? 'smooth' : 'auto', block: 'start' });
    heading.focus({ preventScroll: true });
  }, [answerShown]);
  const shortcut = /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘+Enter' : 'Ctrl+Enter';
  const length = question.trim().length;
  const reachable = knowledgeBases.data?.knowledge_bases ?? [];
  // Only ids still in the list count (a ?kb= link may name one that is gone).
  const selectedCount = selected.filter((id) => reachable.some((kb) => kb.id === id)).length;

  return (
    <div className="stack">
      <div className="page-header">
        <h1>Ask</h1>
        <p className="muted">Answers come from your knowledge bases, with numbered citations to their sources.</p>
      </div>

      <form className="card form" onSubmit={submit} aria-busy={ask.isPending}>
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
          rows={3}
          value={question}
          onChange={(event) => setQuestion(event.target.value)}
          onKeyDown={(event) => {
            // Ctrl/Cmd+Enter asks, like most chat boxes; Enter alone stays a new line.
            if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) event.currentTarget.form?.requestSubmit();
          }}
        />

        <fieldset className="fieldset">
          <legend>Knowledge bases</legend>
          <p className="field__hint" aria-live="polite">
            {selectedCount === 0 ? 'All knowledge bases' : `${plural(selectedCount, 'knowledge base')} selected`}
            {selectedCount === 0
              ? ' (none checked: the question goes to every one you can reach, except shares you have not accepted).'
              : '.'}
          </p>
          {knowledgeBases.isPending ? (
            <Loading label="Loading knowledge bases…" />
          ) : knowledgeBases.isError ? (
            <ErrorMessage error={knowledgeBases.error} onRetry={() => knowledgeBases.refetch()} />
          ) : reachable.length === 0 ? (
            <EmptyState title="You have no knowledge bases yet.">
              <p>
                <Link to="/knowledge-bases">Create one and add documents</Link> before asking.
              </p>
            </EmptyState>
          ) : (
            <div className="checkbox-list">
              {reachable.map((kb) => (
                <CheckboxField
                  key={kb.id}
                  label={kb.pending ? `${kb.name} (pending: searched only when checked)` : kb.name}
                  checked={selected.includes(kb.id)}
                  onChange={(event) => toggle(kb.id, event.target.checked)}
                />
              ))}
            </div>
          )}
        </fieldset>

        <div className="form-row">
          {models.isError ? (
            <div className="field">
              <span className="field__label">Model</span>
              <p className="field__hint">The models could not be loaded: the server's default model will answer.</p>
            </div>
          ) : (
            <div className="field">
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
        </div>

        {problem ? <ErrorMessage error={new Error(problem)} /> : null}
        <div>
          <Button type="submit" variant="primary" busy={ask.isPending}>
            {ask.isPending ? (answerShown ? 'Writing…' : 'Searching…') : 'Ask'}
          </Button>
        </div>
      </form>

      {ask.isPending && !answerShown ? <Loading label="Searching…" /> : null}
      {ask.isError ? <ErrorMessage title="No answer." error={ask.error} /> : null}
      {/* Announced once, complete: a region updated at every streamed sentence would read out fragments. */}
      <div role="status" aria-live="polite" className="visually-hidden" data-testid="answer-announcement">
        {result ? `Answer: ${result.answer}` : ''}
      </div>

      {answerShown ? (
        <section className="card" aria-labelledby="answer-heading" aria-busy={ask.isPending}>
          <h2 id="answer-heading" ref={answerHeading} tabIndex={-1}>
            Answer
          </h2>
          <div data-testid="answer" className="answer">
            <AnswerText
              answer={answerText}
              citationCount={result?.citations.length ?? partial?.citations.length ?? 0}
              onCitation={showCitation}
            />
          </div>
          <p className="small muted">{result ? `Model: ${result.model}` : 'Writing…'}</p>
        </section>
      ) : null}

      {result ? (
        <>
          <section className="card" aria-labelledby="citations-heading">
            <h2 id="citations-heading">Sources</h2>
            {result.citations.length === 0 ? (
              <EmptyState title="No sources were cited." />
            ) : (
              <ol className="citations">
                {result.citations.map((citation, index) => (
                  <li key={`${citation.document_id}-${index}`}>
                    <CitationCard citation={citation} n={index + 1} active={activeCitation === index + 1} />
                  </li>
                ))}
              </ol>
            )}
          </section>

          {result.chunks ? <ChunksTable chunks={result.chunks} /> : null}
        </>
      ) : null}
    </div>
  );
}
