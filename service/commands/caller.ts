import type { Principal } from '../store/index.ts';

/**
 * Who a request acts for, however it authenticated: a Bearer API key (/api/v1) or a web session cookie (/api/web).
 * Commands and policies see only `user` (and `isAdmin` for the web app's admin actions), so one rule serves both.
 */
export interface Caller {
  user: Principal;
  /** Admin rights belong to people in the web app; an API key never carries them. */
  isAdmin: boolean;
  apiKeyId?: string;
  /**
   * The web session: its stored digest (to end it), the CSRF token state-changing requests must echo, and when its
   * user last proved the password (the sign-in that started it).
   */
  session?: { digest: string; csrfToken: string; authenticatedAt: Date };
}
