import type { Caller } from '../commands/caller.ts';
import type { z } from 'zod';
import type { meResponse } from '../http/routes/me.schema.ts';
import type { PasswordLink } from '../commands/passwords.ts';
import type { adminUser, invitationResponse, sessionResponse, userReference } from '../http/routes/webApp.schema.ts';
import type { Principal, UserRecord } from '../store/index.ts';

export function presentMe(user: Principal): z.input<typeof meResponse> {
  return { id: user._id, email: user.email };
}

/** The signed-in user as the web app sees them, with the CSRF token it must echo on state-changing requests. */
export function presentSession(
  user: { id: string; email: string; isAdmin: boolean },
  csrfToken: string,
): z.input<typeof sessionResponse> {
  return { user: { id: user.id, email: user.email, is_admin: user.isAdmin }, csrf_token: csrfToken };
}

export function presentCallerSession(caller: Caller): z.input<typeof sessionResponse> {
  return presentSession(
    { id: caller.user._id, email: caller.user.email, isAdmin: caller.isAdmin },
    caller.session?.csrfToken ?? '',
  );
}

/** An admin's list of users: never the password hash, only whether one is set. */
export function presentAdminUser(record: UserRecord): z.input<typeof adminUser> {
  return {
    id: record._id,
    email: record.email,
    is_admin: record.is_admin === true,
    has_password: typeof record.password_hash === 'string' && record.password_hash.length > 0,
    created_at: record.created_at.toISOString(),
  };
}

export function presentUserReference(record: Pick<UserRecord, '_id' | 'email'>): z.input<typeof userReference> {
  return { id: record._id, email: record.email };
}

/** A user and their one-time link to set a password: an invitation, or an admin's reset link. */
export function presentPasswordLink(user: UserRecord, link: PasswordLink): z.input<typeof invitationResponse> {
  return { user: presentUserReference(user), link: link.url, expires_at: link.expiresAt.toISOString() };
}
