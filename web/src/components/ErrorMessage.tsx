import { useEffect, useRef, type ReactNode } from 'react';
import { messageOf } from '../api/client.ts';
import { Button } from './Button.tsx';

export interface ErrorMessageProps {
  error: unknown;
  title?: string;
  onRetry?: () => void;
  /**
   * A form's failure: focus moves to the message whenever this value changes (a new failure), instead of falling to
   * <body> when the busy submit button lets go of it.
   */
  focusKey?: unknown;
  /** More to say under the message (how to get on). */
  children?: ReactNode;
}

/** An error envelope's message (or a network failure's), announced at once. */
export function ErrorMessage({ error, title, onRetry, focusKey, children }: ErrorMessageProps) {
  const ref = useRef<HTMLDivElement>(null);
  const focusable = focusKey !== undefined;
  useEffect(() => {
    if (focusable) ref.current?.focus();
  }, [focusable, focusKey]);
  return (
    <div ref={ref} role="alert" className="alert alert--error" tabIndex={focusable ? -1 : undefined}>
      {title ? <p className="alert__title">{title}</p> : null}
      <p>{messageOf(error)}</p>
      {children}
      {onRetry ? (
        <Button small onClick={onRetry}>
          Try again
        </Button>
      ) : null}
    </div>
  );
}
