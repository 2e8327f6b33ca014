// Passwords (Argon2id) and the one-time links that set them: an invitation (`kbqa users create`, an admin's invite
// in the web app) or a reset (`kbqa users reset-password`). There is no mail server: whoever creates the link hands
// it over. The token travels in the link's fragment (#token=…), so no access log or Referer ever carries it.
import { createHash, randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import { BadRequestError } from '../errors.ts';
import type { PasswordLinkRecord, Store, UserRecord } from '../store/index.ts';

export const MIN_PASSWORD_LENGTH = 12;
// Argon2 hashes any length at the same cost, but a megabyte "password" is no password.
export const MAX_PASSWORD_LENGTH = 1024;

export function passwordProblem(password: string): string | null {
  if ([...password].length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  return null;
}

/**
 * Argon2id with the library's defaults (m = 19 MiB, t = 2, p = 1: OWASP's recommended minimum). The hashing runs on
 * libuv's thread pool (a native async call), never on the event loop.
 */
export function hashPassword(password: string): Promise<string> {
  // 2 is Algorithm.Argon2id, a const enum that type stripping cannot read; the test checks the $argon2id$ prefix.
  return hash(password, { algorithm: 2 });
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    // A malformed stored hash verifies nothing.
    return false;
  }
}

let decoyHash: Promise<string> | null = null;
/**
 * Verifying against this when the email is unknown (or has no password yet) makes a failed sign-in cost the same
 * either way, so timing does not tell whether an account exists.
 */
export function decoyPasswordHash(): Promise<string> {
  decoyHash ??= hashPassword(randomBytes(24).toString('base64url'));
  return decoyHash;
}

export function digestToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export interface PasswordLink {
  url: string;
  expiresAt: Date;
}

/** A new link for the user; it replaces any earlier one. Shown once: only its digest is stored. */
export async function createPasswordLink(
  store: Store,
  settings: { publicUrl: string; passwordLinkMs: number },
  user: UserRecord,
  purpose: PasswordLinkRecord['purpose'],
): Promise<PasswordLink> {
  const token = newToken();
  const now = new Date();
  const expiresAt = new Date(now.getTime() + settings.passwordLinkMs);
  await store.deletePasswordLinksOfUser(user._id);
  await store.insertPasswordLink({
    _id: digestToken(token),
    user_id: user._id,
    purpose,
    created_at: now,
    expires_at: expiresAt,
    used_at: null,
  });
  return { url: `${settings.publicUrl}/set-password#token=${token}`, expiresAt };
}

const LINK_INVALID = 'this link is invalid, already used or expired; ask an administrator for a new one';

async function validLink(store: Store, token: string): Promise<{ link: PasswordLinkRecord; user: UserRecord }> {
  if (token.length === 0 || token.length > 200) throw new BadRequestError(LINK_INVALID);
  const link = await store.findPasswordLink(digestToken(token));
  if (!link || link.used_at !== null || link.expires_at.getTime() <= Date.now())
    throw new BadRequestError(LINK_INVALID);
  const user = await store.findUserById(link.user_id);
  if (!user) throw new BadRequestError(LINK_INVALID);
  return { link, user };
}

/** Whose link this is and what for (the page shows the email before asking for a password). */
export async function inspectPasswordLink(
  store: Store,
  token: string,
): Promise<{ user: UserRecord; purpose: PasswordLinkRecord['purpose'] }> {
  const { link, user } = await validLink(store, token);
  return { user, purpose: link.purpose };
}

/**
 * Sets the password and spends the link (once, even under concurrent use). Every existing session of the user ends:
 * a reset is what someone does when they fear another has their account. For the same reason a reset link revokes
 * every API key of the user unless `revokeApiKeys` is false (keys outlive sessions, and a thief may have minted
 * one); an invitation link revokes none unless asked (an operator may have made keys for the new user).
 */
export async function usePasswordLink(
  store: Store,
  token: string,
  password: string,
  options: { revokeApiKeys?: boolean } = {},
): Promise<UserRecord> {
  const problem = passwordProblem(password);
  if (problem) throw new BadRequestError(`password: ${problem}`);
  const { link, user } = await validLink(store, token);
  const passwordHash = await hashPassword(password);
  if (!(await store.markPasswordLinkUsed(link._id, new Date()))) throw new BadRequestError(LINK_INVALID);
  await store.setUserPasswordHash(user._id, passwordHash);
  if (options.revokeApiKeys ?? link.purpose === 'reset') await store.revokeApiKeysOfUser(user._id, new Date());
  await store.deleteSessionsOfUser(user._id);
  return { ...user, password_hash: passwordHash };
}
