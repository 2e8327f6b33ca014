import { passwordProblem, RECOVERY_HINT } from '../lib/passwordTries.ts';
import { ErrorMessage } from './ErrorMessage.tsx';

export interface PasswordErrorProps {
  /** The failed call's error. */
  error: unknown;
  /** The page's sentence for a wrong password ("The email or password is incorrect."). */
  wrong: string;
}

/**
 * A failed password check (signing in, creating an API key, changing the password) in the page's words: the tries
 * left once they are few, the pause once they are spent, and how to get back in. Focus moves to it.
 */
export function PasswordError({ error, wrong }: PasswordErrorProps) {
  const tries = passwordProblem(error, wrong);
  return (
    <ErrorMessage error={tries ? new Error(tries.message) : error} focusKey={error}>
      {tries?.showRecovery ? <p>{RECOVERY_HINT}</p> : null}
    </ErrorMessage>
  );
}
