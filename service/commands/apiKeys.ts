// API keys: kbqa_live_ + 40 base62 characters from the CSPRNG (~238 bits). Shown once at creation, stored only
// as a SHA-256 digest, listed by a masked form.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { NotFoundError, UnauthorizedError, errorSummary } from '../errors.ts';
import type { ApiKeyRecord, Principal, Store } from '../store/index.ts';
import { userWithEmail } from './accounts.ts';
import type { Caller } from './caller.ts';
import { requireRecentAuthentication, type SessionSettings } from './sessions.ts';

export const API_KEY_PREFIX = 'kbqa_live_';
const SECRET_LENGTH = 40;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const API_KEY_PATTERN = /^kbqa_live_[0-9A-Za-z]{32,128}$/;

export function generateApiKey(): string {
  let secret = '';
  while (secret.length < SECRET_LENGTH) {
    for (const byte of randomBytes(64)) {
      // Rejection sampling keeps the alphabet uniform: 248 = 4 × 62.
      if (byte < 248 && secret.length < SECRET_LENGTH) secret += BASE62[byte % 62];
    }
  }
  return `${API_KEY_PREFIX}${secret}`;
}

export function digestApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function maskApiKey(key: string): string {
  return `${key.slice(0, API_KEY_PREFIX.length + 4)}…${key.slice(-4)}`;
}

export type { Caller } from './caller.ts';

/**
 * Bearer key → caller. The key is looked up by its digest (an index probe), so no secret is compared byte by byte
 * in JS and timing reveals nothing about stored keys. No cache: a revoked key fails on the very next request.
 */
export async function authenticateApiKey(store: Store, authorization: string, logger: Logger): Promise<Caller> {
  // The scheme is case-insensitive (RFC 9110 §11.1); the key itself is not.
  const match = /^Bearer ([^\s]+)$/i.exec(authorization.trim());
  if (!match || !API_KEY_PATTERN.test(match[1])) throw new UnauthorizedError();
  const record = await store.findLiveApiKeyByDigest(digestApiKey(match[1]));
  if (!record) throw new UnauthorizedError();
  // The key carries its user's id, email and organisation: no second lookup on the path every request takes.
  const user: Principal = { _id: record.user_id, email: record.user_email, organisation_id: record.organisation_id };
  store
    .touchApiKey(record.id, new Date())
    .catch((error: unknown) =>
      logger.warn({ err: errorSummary(error), apiKeyId: record.id }, 'last_used_at update failed'),
    );
  return { user, isAdmin: false, apiKeyId: record.id };
}

/** The CLI's: a key for the user with this email. */
export async function createApiKey(
  store: Store,
  email: string,
  name: string,
): Promise<{ record: ApiKeyRecord; key: string }> {
  return createApiKeyForUser(store, await userWithEmail(store, email), name);
}

/**
 * The web app's (Settings → API Keys): a key outlives every session, so minting one from a session needs the
 * password, or a sign-in of this session within KBQA_REAUTH_MINUTES.
 */
export async function createApiKeyForSession(
  store: Store,
  settings: SessionSettings,
  caller: Caller,
  input: { name: string; password?: string },
  address: string,
): Promise<{ record: ApiKeyRecord; key: string }> {
  await requireRecentAuthentication(store, settings, caller, input.password, address, 'create an API key');
  return createApiKeyForUser(store, caller.user, input.name);
}

/** A new key for `user`; the key itself is returned this once and never again. */
export async function createApiKeyForUser(
  store: Store,
  user: Principal,
  name: string,
): Promise<{ record: ApiKeyRecord; key: string }> {
  const key = generateApiKey();
  const record: ApiKeyRecord = {
    _id: digestApiKey(key),
    id: randomUUID(),
    user_id: user._id,
    user_email: user.email,
    organisation_id: user.organisation_id,
    name,
    masked: maskApiKey(key),
    created_at: new Date(),
    revoked_at: null,
  };
  await store.insertApiKey(record);
  return { record, key };
}

export type ListedApiKey = ApiKeyRecord & { last_used_at: Date | null };

export async function listApiKeys(store: Store, email: string): Promise<ListedApiKey[]> {
  return listApiKeysOfUser(store, (await userWithEmail(store, email))._id);
}

export async function listApiKeysOfUser(store: Store, userId: string): Promise<ListedApiKey[]> {
  const keys = await store.listApiKeysOfUser(userId);
  return Promise.all(keys.map(async (key) => ({ ...key, last_used_at: await store.findApiKeyLastUsed(key.id) })));
}

/** The CLI's (an operator revokes any key). */
/** `ownerId`: only that user's key may be revoked; anyone else's is 404, as if it did not exist. */
export async function revokeApiKey(store: Store, id: string, ownerId?: string): Promise<void> {
  const record = await store.findApiKeyById(id);
  if (!record || (ownerId !== undefined && record.user_id !== ownerId))
    throw new NotFoundError(`no API key with id ${id}`);
  await store.revokeApiKey(id);
}

/** A user revokes one of their own keys; anyone else's is 404, as if it did not exist. Effective on the next request. */
export async function revokeOwnApiKey(store: Store, caller: Caller, id: string): Promise<void> {
  await revokeApiKey(store, id, caller.user._id);
}
