// Web sessions: the first account, sign-up, sign-in (throttled), the session behind a cookie, sign-out, password
// changes. A session id is 256 random bits shown only to the browser (an HttpOnly cookie); the store keeps its
// SHA-256. Sessions expire when idle (KBQA_SESSION_IDLE_MINUTES) and absolutely (KBQA_SESSION_MAX_HOURS).
import { randomUUID, timingSafeEqual } from 'node:crypto';
import {
  BadRequestError,
  ConflictError,
  FirstAccountTakenError,
  ForbiddenError,
  RateLimitedError,
  UnauthorizedError,
  WrongPasswordError,
} from '../errors.ts';
import type { SessionRecord, SignInFailuresRecord, Store, UserRecord } from '../store/index.ts';
import { createUser } from './accounts.ts';
import type { Caller } from './caller.ts';
import {
  decoyPasswordHash,
  digestToken,
  hashPassword,
  newToken,
  passwordProblem,
  verifyPassword,
} from './passwords.ts';

export interface SessionSettings {
  sessionIdleMs: number;
  sessionMaxMs: number;
  signUpOpen: boolean;
  signIn: { maxFailuresPerAccount: number; maxFailuresPerAddress: number; windowMs: number };
  signUpMaxPerAddress: number;
  reauthMs: number;
}

/** last_seen_at is written at most this often per session: idle expiry needs minutes, not every request. */
const LAST_SEEN_RESOLUTION_MS = 60_000;
const SESSION_ID = /^[\w-]{43}$/;
const STALE_CLAIM_MS = 60_000;
export const WRONG_CREDENTIALS = 'email or password is incorrect';

export interface StartedSession {
  /** The cookie's value: the only place the id ever exists in clear. */
  id: string;
  record: SessionRecord;
}

export async function startSession(store: Store, settings: SessionSettings, user: UserRecord): Promise<StartedSession> {
  const id = newToken();
  const now = new Date();
  const record: SessionRecord = {
    _id: digestToken(id),
    user_id: user._id,
    user_email: user.email,
    organisation_id: user.organisation_id,
    is_admin: user.is_admin === true,
    csrf_token: newToken(),
    created_at: now,
    authenticated_at: now,
    last_seen_at: now,
    expires_at: new Date(now.getTime() + settings.sessionMaxMs),
  };
  await store.insertSession(record);
  // A reset or password change that ran while this sign-in was verifying the old password ended every session
  // then existing, but not this one, written after it: read the user again and give up if the password moved.
  const current = await store.findUserById(user._id);
  if (!current || (current.password_hash ?? null) !== (user.password_hash ?? null)) {
    await store.deleteSession(record._id);
    throw new UnauthorizedError(WRONG_CREDENTIALS);
  }
  return { id, record };
}

/** Sessions, failure windows and links no request will use again (start-up and hourly; no TTL index on FerretDB). */
export function purgeExpiredWebRecords(store: Store, settings: SessionSettings): Promise<number> {
  return store.deleteExpiredWebRecords(new Date(), settings.sessionIdleMs, settings.signIn.windowMs);
}

export function callerOfSession(record: SessionRecord): Caller {
  return {
    user: { _id: record.user_id, email: record.user_email, organisation_id: record.organisation_id },
    isAdmin: record.is_admin,
    // Records older than authenticated_at were made by a sign-in too.
    session: {
      digest: record._id,
      csrfToken: record.csrf_token,
      authenticatedAt: record.authenticated_at ?? record.created_at,
    },
  };
}

/** The live session behind a cookie value, or null. An expired one is deleted on sight (no TTL index on FerretDB). */
export async function resolveSession(
  store: Store,
  settings: SessionSettings,
  sessionId: string,
): Promise<SessionRecord | null> {
  if (!SESSION_ID.test(sessionId)) return null;
  const record = await store.findSession(digestToken(sessionId));
  if (!record) return null;
  const now = Date.now();
  if (now >= record.expires_at.getTime() || now - record.last_seen_at.getTime() >= settings.sessionIdleMs) {
    await store.deleteSession(record._id);
    return null;
  }
  if (now - record.last_seen_at.getTime() >= LAST_SEEN_RESOLUTION_MS)
    await store.touchSession(record._id, new Date(now));
  return record;
}

/** Constant-time comparison of the X-CSRF-Token header with the session's token. */
export function csrfTokenMatches(caller: Caller, presented: string): boolean {
  const expected = Buffer.from(caller.session?.csrfToken ?? '', 'utf8');
  const given = Buffer.from(presented, 'utf8');
  return expected.length > 0 && expected.length === given.length && timingSafeEqual(expected, given);
}

export async function endSession(store: Store, caller: Caller): Promise<void> {
  if (caller.session) await store.deleteSession(caller.session.digest);
}

/**
 * Sign out everywhere: every session of the user, the asking one included, and with `revokeApiKeys` every API key
 * (a session thief may have minted one).
 */
export async function endAllSessions(
  store: Store,
  caller: Caller,
  options: { revokeApiKeys: boolean },
): Promise<{ signedOut: number; apiKeysRevoked: number }> {
  const apiKeysRevoked = options.revokeApiKeys ? await store.revokeApiKeysOfUser(caller.user._id, new Date()) : 0;
  return { signedOut: await store.deleteSessionsOfUser(caller.user._id), apiKeysRevoked };
}

function requireValidPassword(field: string, password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw new BadRequestError(`${field}: ${problem}`);
}

/** Needed: no user exists yet. The first account is an admin. Exactly one request wins a race for it. */
export async function createFirstAccount(
  store: Store,
  input: { email: string; password: string },
): Promise<UserRecord> {
  requireValidPassword('password', input.password);
  if (await store.hasAnyUser()) throw new FirstAccountTakenError();
  const claimId = randomUUID();
  try {
    await store.claimFirstAccount(claimId, new Date());
  } catch (error) {
    if (!(error instanceof FirstAccountTakenError)) throw error;
    // A claim whose process died before creating the account (no transactions) would block the first run for
    // ever: with still no user a minute later, it is released and this request tries once more.
    const stale = await store.findFirstAccountClaim();
    if (!stale || Date.now() - stale.created_at.getTime() < STALE_CLAIM_MS || (await store.hasAnyUser())) throw error;
    await store.releaseFirstAccount(stale.claimed_by);
    return createFirstAccount(store, input);
  }
  try {
    const passwordHash = await hashPassword(input.password);
    return (await createUser(store, input.email, undefined, { isAdmin: true, passwordHash })).user;
  } catch (error) {
    await store.releaseFirstAccount(claimId);
    throw error;
  }
}

/**
 * Open sign-up (KBQA_SIGNUP=open); otherwise accounts come from invitations. Every attempt from the address counts
 * (a success as much as a refusal: each may cost an Argon2id hash and an account), before anything else is done.
 */
export async function signUp(
  store: Store,
  settings: SessionSettings,
  input: { email: string; password: string },
  address: string,
): Promise<UserRecord> {
  if (!settings.signUpOpen) throw new ForbiddenError('sign-up is closed: ask an administrator for an invitation');
  const now = new Date();
  const windowMs = settings.signIn.windowMs;
  const attempts = await store.countSignInAttempt(signUpKey(address), now, windowMs);
  if (attempts.count > settings.signUpMaxPerAddress) {
    const seconds = retryAfterSeconds(attempts.windowStartedAt, windowMs, now);
    throw new RateLimitedError(`too many sign-ups from this address; try again in ${waitInWords(seconds)}`, seconds);
  }
  requireValidPassword('password', input.password);
  // Said to the person whose address it is, before an Argon2id hash is spent on it. Two sign-ups of one address at
  // once both pass here; the store's unique index refuses the second (EmailTakenError, 409 as well).
  if (await store.findUserByEmail(input.email))
    throw new ConflictError('an account with this email already exists; sign in instead');
  const passwordHash = await hashPassword(input.password);
  return (await createUser(store, input.email, undefined, { passwordHash })).user;
}

/** Failures of one account from one address: what a person mistyping, or one guesser, runs into. */
export const accountAtAddressKey = (email: string, address: string) =>
  `account:${email.trim().toLowerCase()}|address:${address}`;
/** Failures of every account from one address: the looser ceiling that stops one address spraying many accounts. */
const addressKey = (address: string) => `address:${address}`;
const signUpKey = (address: string) => `sign-up:${address}`;

function retryAfterSeconds(windowStartedAt: Date, windowMs: number, now: Date): number {
  return Math.max(1, Math.ceil((windowStartedAt.getTime() + windowMs - now.getTime()) / 1000));
}

/** "76 seconds" or "3 minutes": the wait in one unit, minutes once it is over 90 seconds. */
export function waitInWords(seconds: number): string {
  if (seconds <= 90) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minutes`;
}

/**
 * Successive lock-outs of one email at one address pause its sign-ins for 1, 5, 15, then 60 minutes, and every later
 * one 60 again: a person's typos cost a minute, a guesser gets at most KBQA_SIGN_IN_MAX_FAILURES tries an hour. The
 * streak is forgotten a day after its last pause ended, or at once by a successful sign-in.
 */
export const LOCK_OUT_MINUTES = [1, 5, 15, 60] as const;
export const LOCK_OUT_MEMORY_MS = 24 * 60 * 60_000;

/** What counting one attempt decided: refused (paused), or allowed with the tries left should it fail. */
export type AccountAttempt = { pausedForSeconds: number } | { triesLeft: number; pauseSeconds?: number };

/**
 * The account-at-address counter after one more attempt at `now` (null: unchanged), and what the attempt may do.
 * Failures count in windows of KBQA_SIGN_IN_WINDOW_MINUTES; the attempt that reaches the limit starts the pause
 * before its password is checked (a right one ends it at once: the slate is wiped), and the next window opens when
 * the pause ends. Pure: the store runs it serialised per key.
 */
export function countAccountAttempt(
  current: SignInFailuresRecord | null,
  key: string,
  now: Date,
  rule: { maxFailures: number; windowMs: number },
): { record: SignInFailuresRecord | null; attempt: AccountAttempt } {
  const at = now.getTime();
  const lockedUntil = current?.locked_until?.getTime() ?? null;
  if (lockedUntil !== null && lockedUntil > at) {
    return { record: null, attempt: { pausedForSeconds: Math.max(1, Math.ceil((lockedUntil - at) / 1000)) } };
  }
  const remembered = lockedUntil !== null && lockedUntil + LOCK_OUT_MEMORY_MS > at;
  const lockouts = remembered ? (current?.lockouts ?? 0) : 0;
  const live = current !== null && current.window_started_at.getTime() > at - rule.windowMs;
  const count = live ? current.count + 1 : 1;
  const windowStartedAt = live ? current.window_started_at : now;
  if (count >= rule.maxFailures) {
    const pauseMs = LOCK_OUT_MINUTES[Math.min(lockouts, LOCK_OUT_MINUTES.length - 1)] * 60_000;
    const until = new Date(at + pauseMs);
    return {
      record: {
        _id: key,
        count: 0,
        window_started_at: until,
        locked_until: until,
        lockouts: lockouts + 1,
        keep_until: new Date(until.getTime() + LOCK_OUT_MEMORY_MS),
      },
      attempt: { triesLeft: 0, pauseSeconds: pauseMs / 1000 },
    };
  }
  const windowEnd = windowStartedAt.getTime() + rule.windowMs;
  return {
    record: {
      _id: key,
      count,
      window_started_at: windowStartedAt,
      locked_until: remembered ? new Date(lockedUntil) : null,
      lockouts,
      keep_until: new Date(remembered ? Math.max(windowEnd, lockedUntil + LOCK_OUT_MEMORY_MS) : windowEnd),
    },
    attempt: { triesLeft: rule.maxFailures - count },
  };
}

/** The same words whether or not the account exists; the wait once, in one unit (also in Retry-After). */
function pausedError(seconds: number): RateLimitedError {
  return new RateLimitedError(`too many failed sign-ins; try again in ${waitInWords(seconds)}`, seconds);
}

/**
 * Counts this attempt for the account at this address and for the address, BEFORE the password is checked, and
 * refuses it (429) while the account is paused there or the address is over its limit in the current window.
 * Counting first matters: checked afterwards, a burst of parallel attempts would all pass the check while their
 * Argon2 verifications run. Per account AND address, not per account: a guesser elsewhere cannot lock a person out
 * of their own account, and per address alone every browser behind one office or proxy shared one counter (one
 * person's typo locked out the next). Keyed by the email as typed, so an address with no account behaves the same.
 */
async function countAttempt(
  store: Store,
  settings: SessionSettings,
  email: string,
  address: string,
): Promise<AccountAttempt & { triesLeft: number }> {
  const { windowMs, maxFailuresPerAccount, maxFailuresPerAddress } = settings.signIn;
  const now = new Date();
  const key = accountAtAddressKey(email, address);
  const attempt = await store.updateSignInCounter(key, (current) => {
    const counted = countAccountAttempt(current, key, now, { maxFailures: maxFailuresPerAccount, windowMs });
    return { record: counted.record, outcome: counted.attempt };
  });
  if ('pausedForSeconds' in attempt) throw pausedError(attempt.pausedForSeconds);
  const attempts = await store.countSignInAttempt(addressKey(address), now, windowMs);
  if (attempts.count > maxFailuresPerAddress)
    throw pausedError(retryAfterSeconds(attempts.windowStartedAt, windowMs, now));
  return attempt;
}

/** A wrong password, in words that say how many tries are left once they are few, or that sign-in is now paused. */
function wrongPassword(status: 400 | 401, words: string, attempt: { triesLeft: number; pauseSeconds?: number }) {
  const { triesLeft, pauseSeconds } = attempt;
  const said =
    pauseSeconds !== undefined
      ? `${words}; sign-in is paused for ${waitInWords(pauseSeconds)}`
      : triesLeft <= 2
        ? `${words}; ${triesLeft} ${triesLeft === 1 ? 'try' : 'tries'} left before sign-in pauses`
        : words;
  return new WrongPasswordError(status, said, triesLeft, pauseSeconds);
}

/**
 * A sign-in whose body was refused before any password was checked (malformed, too large, wrong types) still counts
 * against its address: otherwise such requests would be free to repeat, limited by nothing.
 */
export async function countRejectedSignIn(store: Store, settings: SessionSettings, address: string): Promise<void> {
  await store.countSignInAttempt(addressKey(address), new Date(), settings.signIn.windowMs);
}

/** A new password set through a link ends a sign-in pause of its account at the address that used the link. */
export async function liftSignInPause(store: Store, email: string, address: string): Promise<void> {
  await store.clearSignInFailures(accountAtAddressKey(email, address));
}

/** A success is no failure: the account's slate at this address is wiped, the address gets its attempt back. */
async function forgiveAttempt(store: Store, email: string, address: string): Promise<void> {
  await store.clearSignInFailures(accountAtAddressKey(email, address));
  await store.uncountSignInAttempt(addressKey(address));
}

/**
 * Email + password → the user. An unknown email, a user who has not set a password yet and a wrong password all
 * cost one Argon2 verification and answer the same 401, so neither words nor timing say whether an account exists.
 */
export async function signIn(
  store: Store,
  settings: SessionSettings,
  input: { email: string; password: string },
  address: string,
): Promise<UserRecord> {
  const attempt = await countAttempt(store, settings, input.email, address);
  const user = await store.findUserByEmail(input.email.trim());
  const storedHash = user?.password_hash ?? (await decoyPasswordHash());
  const matches = await verifyPassword(storedHash, input.password);
  if (!user || !user.password_hash || !matches) throw wrongPassword(401, WRONG_CREDENTIALS, attempt);
  await forgiveAttempt(store, input.email, address);
  return user;
}

/** The signed-in user's password, checked and throttled like a sign-in; a wrong one is 400 naming `field`. */
async function verifyCallerPassword(
  store: Store,
  settings: SessionSettings,
  caller: Caller,
  password: string,
  address: string,
  field: string,
): Promise<UserRecord> {
  const attempt = await countAttempt(store, settings, caller.user.email, address);
  const user = await store.findUserById(caller.user._id);
  if (!user) throw UnauthorizedError.signedOut();
  if (!user.password_hash || !(await verifyPassword(user.password_hash, password)))
    throw wrongPassword(400, `${field}: is incorrect`, attempt);
  await forgiveAttempt(store, caller.user.email, address);
  return user;
}

/**
 * What minting a credential needs (an API key outlives every session): the password, or a sign-in of this session
 * within KBQA_REAUTH_MINUTES. A stolen session cookie alone, older than that, mints nothing.
 */
export async function requireRecentAuthentication(
  store: Store,
  settings: SessionSettings,
  caller: Caller,
  password: string | undefined,
  address: string,
  action: string,
): Promise<void> {
  if (password !== undefined) {
    await verifyCallerPassword(store, settings, caller, password, address, 'password');
    return;
  }
  const authenticatedAt = caller.session?.authenticatedAt;
  if (authenticatedAt && Date.now() - authenticatedAt.getTime() < settings.reauthMs) return;
  const minutes = Math.round(settings.reauthMs / 60_000);
  throw new ForbiddenError(
    `password: enter your password to ${action} (a sign-in stands in for it only during its first ${waitInWords(minutes * 60)})`,
  );
}

/**
 * Needs the current password (throttled like a sign-in); every other session of the user ends, and with
 * `revoke_api_keys` every API key.
 */
export async function changePassword(
  store: Store,
  settings: SessionSettings,
  caller: Caller,
  input: { current_password: string; new_password: string; revoke_api_keys: boolean },
  address: string,
): Promise<{ apiKeysRevoked: number }> {
  requireValidPassword('new_password', input.new_password);
  const user = await verifyCallerPassword(store, settings, caller, input.current_password, address, 'current_password');
  await store.setUserPasswordHash(user._id, await hashPassword(input.new_password));
  const apiKeysRevoked = input.revoke_api_keys ? await store.revokeApiKeysOfUser(user._id, new Date()) : 0;
  await store.deleteSessionsOfUser(user._id, caller.session?.digest);
  return { apiKeysRevoked };
}
