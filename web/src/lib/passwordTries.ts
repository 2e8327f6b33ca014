// A wrong password and the sign-in pause it counts towards, in the page's words. The server counts failures per
// email at this address (KBQA_SIGN_IN_MAX_FAILURES, 5 by default) and says how many tries are left (the envelope's
// tries_left) and, once they are spent, how long sign-in pauses (Retry-After): 1, 5, 15, then 60 minutes for
// successive pauses (docs/web-app.md). The same for an email with no account.
import { isApiError } from '../api/client.ts';
import { plural } from './format.ts';

/** The warning starts when this many tries, or fewer, are left. */
const WARN_AT = 2;

export const RECOVERY_HINT =
  'Forgotten your password? An administrator can give you a link to set a new one (Users page, “Reset link”).';

/** "1 minute", "15 minutes", "45 seconds": a pause in the unit a person reads. */
export function pauseInWords(seconds: number | null): string {
  if (seconds === null || seconds <= 0) return 'a while';
  if (seconds < 60) return plural(seconds, 'second');
  return plural(Math.ceil(seconds / 60), 'minute');
}

export interface PasswordProblem {
  message: string;
  /** Few tries left or paused: the page says how to get back in. */
  showRecovery: boolean;
}

/**
 * What to say for `error`, or null when it is no wrong password nor a sign-in pause. `wrong` is the page's sentence
 * for the wrong password itself ("The email or password is incorrect.").
 */
export function passwordProblem(error: unknown, wrong: string): PasswordProblem | null {
  if (!isApiError(error)) return null;
  if (error.triesLeft !== null) {
    if (error.triesLeft === 0) {
      return {
        message: `${wrong} Too many failed tries: signing in is paused for ${pauseInWords(error.retryAfter)}.`,
        showRecovery: true,
      };
    }
    if (error.triesLeft <= WARN_AT) {
      return {
        message: `${wrong} ${plural(error.triesLeft, 'try', 'tries')} left before signing in is paused.`,
        showRecovery: true,
      };
    }
    return { message: wrong, showRecovery: false };
  }
  if (error.status === 429 && error.message.startsWith('too many failed sign-ins')) {
    return {
      message: `Too many failed tries: signing in is paused. Try again in ${pauseInWords(error.retryAfter)}.`,
      showRecovery: true,
    };
  }
  return null;
}
