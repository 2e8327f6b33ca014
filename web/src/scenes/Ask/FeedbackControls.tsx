// 👍/👎 on an answer, with an optional comment. A rating is stored at once (PUT); pressing the pressed one again
// clears it (DELETE). The comment goes with the rating it is written for: saving it PUTs the rating and the comment
// (PUT replaces the whole feedback, so changing the rating later drops the comment).
import { useMutation } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import type { Feedback } from '../../api/generated.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { TextAreaField } from '../../components/Field.tsx';
import { classNames } from '../../lib/format.ts';

const COMMENT_MAX_CHARACTERS = 2000;

export interface FeedbackControlsProps {
  conversationId: string;
  messageId: string;
  feedback: Feedback | null;
  /** The feedback as stored now (null: cleared), for the cached conversation. */
  onChanged: (feedback: Feedback | null) => void;
}

/** A rating (and its comment), or null to clear; `fromForm`: sent by the comment form, which then closes. */
type Change = { feedback: { rating: 'up' | 'down'; comment?: string } | null; fromForm: boolean };

export function FeedbackControls({ conversationId, messageId, feedback, onChanged }: FeedbackControlsProps) {
  const [commenting, setCommenting] = useState(false);
  const [comment, setComment] = useState('');
  const commentId = useId();
  const save = useMutation({
    mutationFn: async ({ feedback }: Change) => {
      if (feedback === null) {
        await api.clearAnswerRating(conversationId, messageId);
        return null;
      }
      return (await api.rateAnswer(conversationId, messageId, feedback)).feedback;
    },
    onSuccess: (stored, { fromForm }) => {
      onChanged(stored);
      if (fromForm || stored === null) setCommenting(false);
    },
  });

  function rate(rating: 'up' | 'down') {
    if (feedback?.rating === rating) {
      save.mutate({ feedback: null, fromForm: false });
      return;
    }
    save.mutate({ feedback: { rating }, fromForm: false });
    // A thumbs-down asks what was wrong (optional); the rating is stored already.
    setCommenting(rating === 'down');
    if (rating === 'down') setComment('');
  }

  function submitComment(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const text = comment.trim();
    save.mutate({
      feedback: { rating: feedback?.rating ?? 'down', ...(text ? { comment: text } : {}) },
      fromForm: true,
    });
  }

  const pressed = (rating: 'up' | 'down') => feedback?.rating === rating;
  return (
    <div className="feedback" data-testid="answer-feedback" data-rating={feedback?.rating ?? 'none'}>
      <div className="feedback__buttons" role="group" aria-label="Rate this answer">
        {(['up', 'down'] as const).map((rating) => (
          <button
            key={rating}
            type="button"
            className={classNames(
              'button button--ghost button--small feedback__button',
              pressed(rating) && 'feedback__button--pressed',
            )}
            aria-pressed={pressed(rating)}
            aria-label={rating === 'up' ? 'Good answer' : 'Bad answer'}
            title={pressed(rating) ? 'Rated: press again to clear' : rating === 'up' ? 'Good answer' : 'Bad answer'}
            disabled={save.isPending}
            onClick={() => rate(rating)}
          >
            <span aria-hidden="true">{rating === 'up' ? '👍' : '👎'}</span> {rating === 'up' ? 'Good' : 'Bad'}
          </button>
        ))}
        {feedback && !commenting ? (
          <Button
            small
            variant="ghost"
            onClick={() => {
              setComment(feedback.comment ?? '');
              setCommenting(true);
            }}
          >
            {feedback.comment ? 'Edit comment' : 'Add a comment'}
          </Button>
        ) : null}
        <span className="small muted" aria-live="polite">
          {feedback ? (feedback.rating === 'up' ? 'Rated good.' : 'Rated bad.') : ''}
        </span>
      </div>
      {feedback?.comment && !commenting ? (
        <p className="small feedback__comment" data-testid="feedback-comment">
          <span className="muted">Your comment: </span>
          {feedback.comment}
        </p>
      ) : null}
      {commenting ? (
        <form className="form feedback__form" onSubmit={submitComment}>
          <TextAreaField
            id={commentId}
            label="What was wrong or missing? (optional)"
            hint="The owners of the knowledge bases searched see the question and this comment, never who wrote them."
            rows={2}
            maxLength={COMMENT_MAX_CHARACTERS}
            value={comment}
            onChange={(event) => setComment(event.target.value)}
          />
          <div className="actions">
            <Button type="submit" variant="primary" small busy={save.isPending}>
              Save comment
            </Button>
            <Button small onClick={() => setCommenting(false)}>
              Cancel
            </Button>
          </div>
        </form>
      ) : null}
      {save.isError ? <ErrorMessage title="The rating was not saved." error={save.error} /> : null}
    </div>
  );
}
