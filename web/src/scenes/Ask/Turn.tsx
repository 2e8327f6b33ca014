// One turn of a conversation: the question, then its answer (streaming in, or as stored) with its numbered sources,
// the model, the rating controls and, when asked for, the retrieved chunks. Every id in it carries the turn's key,
// so a marker [n] finds its own turn's card n.
import { useCallback, useState, type Ref } from 'react';
import type { Citation, Feedback, RetrievedChunk, StoredCitation } from '../../api/generated.ts';
import { EmptyState } from '../../components/EmptyState.tsx';
import { AnswerText } from './AnswerText.tsx';
import { ChunksTable } from './ChunksTable.tsx';
import { CitationCard } from './CitationCard.tsx';
import { FeedbackControls } from './FeedbackControls.tsx';

export interface TurnView {
  /** Stable from the moment the question is sent to the stored answer (focus and scroll survive the change). */
  key: string;
  question: string;
  answer: string;
  citations: Array<Citation | StoredCitation>;
  /** null while the answer is being written. */
  model: string | null;
  /** The stored answer's id (it takes a rating); null while it streams. */
  messageId: string | null;
  feedback: Feedback | null;
  chunks: RetrievedChunk[] | null;
}

export interface TurnProps {
  turn: TurnView;
  n: number;
  conversationId: string;
  onFeedback: (messageId: string, feedback: Feedback | null) => void;
  /** The answer's heading: focused when the answer starts to show. */
  headingRef?: Ref<HTMLHeadingElement>;
}

export function Turn({ turn, n, conversationId, onFeedback, headingRef }: TurnProps) {
  const [activeCitation, setActiveCitation] = useState<number | null>(null);
  const prefix = `turn-${turn.key}-citation-`;
  const showCitation = useCallback(
    (citation: number) => {
      setActiveCitation(citation);
      const card = document.getElementById(`${prefix}${citation}`);
      if (!card) return;
      const smooth = !window.matchMedia('(prefers-reduced-motion: reduce)').matches;
      card.scrollIntoView({ behavior: smooth ? 'smooth' : 'auto', block: 'center' });
      card.focus({ preventScroll: true });
    },
    [prefix],
  );
  const writing = turn.model === null;
  const headingId = `answer-heading-${turn.key}`;

  return (
    <article className="turn" data-testid="turn" aria-labelledby={headingId} aria-busy={writing}>
      <div className="turn__question">
        <span className="visually-hidden">You asked: </span>
        <p className="pre-wrap" data-testid="turn-question">
          {turn.question}
        </p>
      </div>
      <section className="card turn__answer">
        <h2 id={headingId} ref={headingRef} tabIndex={-1} className="turn__heading">
          Answer<span className="visually-hidden"> {n}</span>
        </h2>
        {turn.answer === '' ? (
          <p className="muted">Searching…</p>
        ) : (
          <div data-testid="answer" className="answer">
            <AnswerText
              answer={turn.answer}
              citationCount={turn.citations.length}
              citationIdPrefix={prefix}
              onCitation={showCitation}
            />
          </div>
        )}
        <p className="small muted">{writing ? 'Writing…' : `Model: ${turn.model}`}</p>

        {writing ? null : (
          <section aria-labelledby={`turn-${turn.key}-sources`}>
            <h3 id={`turn-${turn.key}-sources`}>Sources</h3>
            {turn.citations.length === 0 ? (
              <EmptyState title="No sources were cited." />
            ) : (
              <ol className="citations">
                {turn.citations.map((citation, index) => (
                  <li key={`${citation.document_id}-${index}`}>
                    <CitationCard
                      citation={citation}
                      n={index + 1}
                      id={`${prefix}${index + 1}`}
                      active={activeCitation === index + 1}
                    />
                  </li>
                ))}
              </ol>
            )}
          </section>
        )}
        {turn.messageId ? (
          <FeedbackControls
            conversationId={conversationId}
            messageId={turn.messageId}
            feedback={turn.feedback}
            onChanged={(feedback) => turn.messageId && onFeedback(turn.messageId, feedback)}
          />
        ) : null}
        {turn.chunks ? <ChunksTable chunks={turn.chunks} headingId={`turn-${turn.key}-chunks`} /> : null}
      </section>
    </article>
  );
}
