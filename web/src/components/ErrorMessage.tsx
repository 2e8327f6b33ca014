import { messageOf } from '../api/client.ts';
import { Button } from './Button.tsx';

export interface ErrorMessageProps {
  error: unknown;
  title?: string;
  onRetry?: () => void;
}

/** An error envelope's message (or a network failure's), announced at once. */
export function ErrorMessage({ error, title, onRetry }: ErrorMessageProps) {
  return (
    <div role="alert" className="alert alert--error">
      {title ? <p className="alert__title">{title}</p> : null}
      <p>{messageOf(error)}</p>
      {onRetry ? (
        <Button small onClick={onRetry}>
          Try again
        </Button>
      ) : null}
    </div>
  );
}
